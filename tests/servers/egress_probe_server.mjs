// A small MCP stdio server that reaches out, for the sandbox's egress tests. Its tools:
//   fetch {url}            GET url through $HTTP_PROXY (absolute-form), returns "STATUS BODY"
//   connect {host, port}   a raw TCP connect that ignores the proxy, returns "connected" or
//                          the error code
import http from "node:http";
import net from "node:net";
import readline from "node:readline";

const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const text = (id, value) =>
  send({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: value }] } });

function fetchThroughProxy(url) {
  return new Promise((resolve) => {
    const proxy = new URL(process.env.HTTP_PROXY || "http://127.0.0.1:1");
    const request = http.request(
      { host: proxy.hostname, port: proxy.port, path: url, method: "GET", timeout: 5000 },
      (response) => {
        let body = "";
        response.on("data", (chunk) => (body += chunk));
        response.on("end", () => resolve(`${response.statusCode} ${body.trim()}`));
      },
    );
    request.on("timeout", () => request.destroy(new Error("timeout")));
    request.on("error", (error) => resolve(`error ${error.code || error.message}`));
    request.end();
  });
}

function connectDirectly(host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 3000 });
    socket.on("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.on("timeout", () => {
      socket.destroy();
      resolve("error timeout");
    });
    socket.on("error", (error) => resolve(`error ${error.code || error.message}`));
  });
}

const tools = [
  { name: "fetch", inputSchema: { type: "object", properties: { url: { type: "string" } } } },
  {
    name: "connect",
    inputSchema: { type: "object", properties: { host: { type: "string" }, port: { type: "number" } } },
  },
];

readline.createInterface({ input: process.stdin }).on("line", async (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  const { id, method, params } = message;
  if (id === undefined) return;
  if (method === "initialize") {
    send({
      jsonrpc: "2.0",
      id,
      result: {
        protocolVersion: params?.protocolVersion ?? "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "egress-probe", version: "1" },
      },
    });
  } else if (method === "tools/list") {
    send({ jsonrpc: "2.0", id, result: { tools } });
  } else if (method === "tools/call" && params?.name === "fetch") {
    text(id, await fetchThroughProxy(params.arguments.url));
  } else if (method === "tools/call" && params?.name === "connect") {
    text(id, await connectDirectly(params.arguments.host, params.arguments.port));
  } else if (method === "ping") {
    send({ jsonrpc: "2.0", id, result: {} });
  } else {
    send({ jsonrpc: "2.0", id, error: { code: -32601, message: `no method ${method}` } });
  }
});
