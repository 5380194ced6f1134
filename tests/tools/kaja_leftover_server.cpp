// An MCP stdio server that tries to outlive kaja, for the leftover tests.
//
//   kaja_leftover_server TAG [stall-list | kill-parent]
//
// TAG only marks the server's processes (it is in the argv every one of them shares, so a
// test finds them in /proc/<pid>/cmdline). The server ignores SIGTERM, SIGINT and SIGHUP,
// keeps running after stdin closes, and at start leaves five processes of its own:
//   - a child in its process group that ignores SIGTERM,
//   - another such child, whose child (the server's grandchild) calls setsid, leaving the
//     group and the session,
//   - a daemon: a child that calls setsid and forks again, then exits, so the grandchild
//     is orphaned at once,
//   - a child that moves itself to a process group of its own with setpgid.
// Every one of them holds the server's stdout and stderr open. With `stall-list` it never
// answers tools/list; with `kill-parent` it kills its parent (kaja's guardian) with
// SIGKILL once it has answered tools/list. Tools: echo (answers at once), stall (never answers).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

using Json = nlohmann::json;

namespace {

[[noreturn]] void sleepForever() {
  for (;;) ::pause();
}

void ignoreEndSignals() {
  ::signal(SIGTERM, SIG_IGN);
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
}

void leaveProcesses() {
  if (::fork() == 0) sleepForever();  // stays in the group
  if (::fork() == 0) {
    if (::fork() == 0) {
      ::setsid();
      sleepForever();
    }
    sleepForever();
  }
  if (::fork() == 0) {
    ::setsid();
    if (::fork() == 0) sleepForever();
    ::_exit(0);
  }
  if (::fork() == 0) {
    ::setpgid(0, 0);
    sleepForever();
  }
}

void send(const Json& message) { std::cout << message.dump() << '\n' << std::flush; }

void reply(const Json& id, Json result) {
  send({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

Json tool(const std::string& name) {
  return {{"name", name},
          {"description", "A tool of the leftover server."},
          {"inputSchema", {{"type", "object"}}}};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 2 ? argv[2] : "";
  const bool stallList = mode == "stall-list";
  ignoreEndSignals();
  leaveProcesses();
  std::string line;
  while (std::getline(std::cin, line)) {
    const Json message = Json::parse(line, nullptr, false);
    if (!message.is_object()) continue;
    const std::string method = message.value("method", "");
    const Json id = message.contains("id") ? message["id"] : Json();
    if (method == "initialize") {
      const Json params = message.value("params", Json::object());
      reply(id, {{"protocolVersion", params.value("protocolVersion", "2025-06-18")},
                 {"capabilities", {{"tools", Json::object()}}},
                 {"serverInfo", {{"name", "kaja-leftover-server"}, {"version", "1.0"}}}});
    } else if (method == "tools/list" && !stallList) {
      reply(id, {{"tools", Json::array({tool("echo"), tool("stall")})}});
      if (mode == "kill-parent") ::kill(::getppid(), SIGKILL);
    } else if (method == "tools/call") {
      const Json params = message.value("params", Json::object());
      if (params.value("name", "") == "echo") {
        reply(id, {{"content", Json::array({{{"type", "text"}, {"text", "still here"}}})}});
      }
    } else if (method == "ping") {
      reply(id, Json::object());
    } else if (!id.is_null() && method != "tools/list") {
      send({{"jsonrpc", "2.0"},
            {"id", id},
            {"error", {{"code", -32601}, {"message", "Method not found"}}}});
    }
  }
  sleepForever();
}
