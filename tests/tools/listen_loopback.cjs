// Preloaded (node --require) into the npm servers the HTTP tests run: every listen() binds
// 127.0.0.1 whatever the server asked for, and the port it got is printed as "PORT <n>".
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "object" && args[0] !== null) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  } else if (typeof args[0] === "number" || typeof args[0] === "string") {
    if (typeof args[1] === "string") args[1] = "127.0.0.1";
    else args.splice(1, 0, "127.0.0.1");
  }
  this.once("listening", () => process.stdout.write(`PORT ${this.address().port}\n`));
  return listen.apply(this, args);
};
