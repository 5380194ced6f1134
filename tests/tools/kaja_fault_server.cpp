// A deliberately misbehaving MCP stdio server for kaja's transport and client tests.
//
//   kaja_fault_server [mode] [n]
//
// Modes change startup behaviour: normal, banner (a non-JSON line first), hang-init (never
// answers initialize), wrong-version, notify-before-init, die-every (exit 5 on the n-th
// tools/call), ignore-term (ignores SIGTERM and stdin EOF), paginate-forever, exit-at-start.
// Tools trigger faults during a call: echo, crash, abort, hang, long-line, garbage, stray-line,
// stderr-flood, close-stdout, ask-roots, ask-unknown, ask-sampling, spawn-grandchild,
// progress, rich-content, change-tools, cancelled-ids, ask-elicitation, ask-ping,
// client-capabilities, change-stream {count, intervalMs} (that many list_changed
// notifications, one per interval, from a thread of their own), list-count (how many
// tools/list pages it has served).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

using Json = nlohmann::json;

namespace {

std::string mode = "normal";
int modeNumber = 0;
int callCount = 0;
bool toolsChanged = false;
std::vector<Json> cancelledIds;
Json clientCapabilities = Json::object();
// Server→client requests in flight: our request id → the tools/call id waiting on it.
std::map<std::string, Json> waitingCalls;
int nextServerRequest = 1;
int listCount = 0;
std::mutex sendMutex;  // change-stream writes from a thread of its own

void send(const Json& message) {
  std::lock_guard lock(sendMutex);
  std::cout << message.dump() << '\n' << std::flush;
}

void reply(const Json& id, Json result) {
  send({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void replyError(const Json& id, int code, const std::string& message) {
  send({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

Json textResult(const std::string& text) {
  return {{"content", Json::array({{{"type", "text"}, {"text", text}}})}};
}

void sleepForever() {
  for (;;) ::pause();
}

Json toolList() {
  std::vector<std::string> names = {"echo",
                                    "crash",
                                    "abort",
                                    "hang",
                                    "long-line",
                                    "garbage",
                                    "stray-line",
                                    "stderr-flood",
                                    "close-stdout",
                                    "ask-roots",
                                    "ask-unknown",
                                    "ask-sampling",
                                    "spawn-grandchild",
                                    "progress",
                                    "rich-content",
                                    "change-tools",
                                    "cancelled-ids",
                                    "ask-elicitation",
                                    "ask-ping",
                                    "client-capabilities",
                                    "change-stream",
                                    "list-count"};
  if (toolsChanged) names.push_back("new-tool");
  Json tools = Json::array();
  for (const auto& name : names) {
    tools.push_back({{"name", name},
                     {"description", "fault tool " + name},
                     {"inputSchema", {{"type", "object"}}}});
  }
  return tools;
}

void handleToolsList(const Json& id, const Json& params) {
  constexpr std::size_t kPageSize = 5;
  ++listCount;
  const Json all = toolList();
  std::size_t start = 0;
  if (params.is_object() && params.contains("cursor")) {
    start = std::stoul(params["cursor"].get<std::string>().substr(5));
  }
  Json page = Json::array();
  for (std::size_t i = start; i < all.size() && i < start + kPageSize; ++i) page.push_back(all[i]);
  Json result = {{"tools", page}};
  if (mode == "paginate-forever") {
    result["nextCursor"] = "page-0";
  } else if (start + kPageSize < all.size()) {
    result["nextCursor"] = "page-" + std::to_string(start + kPageSize);
  }
  reply(id, result);
}

void askClient(const Json& callId, const std::string& method, Json params) {
  const std::string id = "srv-" + std::to_string(nextServerRequest++);
  waitingCalls[id] = callId;
  send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
}

void handleCall(const Json& id, const Json& params) {
  ++callCount;
  if (mode == "die-every" && modeNumber > 0 && callCount % modeNumber == 0) {
    std::cerr << "fault server: dying on call " << callCount << std::endl;
    std::_Exit(5);
  }
  const std::string name = params.value("name", "");
  const Json args = params.value("arguments", Json::object());
  if (name == "echo") {
    reply(id, textResult(args.value("text", "")));
  } else if (name == "crash") {
    std::cerr << "fault server: crashing on purpose" << std::endl;
    std::_Exit(3);
  } else if (name == "abort") {
    std::abort();
  } else if (name == "hang") {
    // Never answers; the client must time out or cancel.
  } else if (name == "long-line") {
    const std::string chunk(1024 * 1024, 'x');
    std::cout << "{\"jsonrpc\":\"2.0\",\"id\":" << id.dump() << ",\"result\":\"";
    for (int i = 0; i < 5; ++i) std::cout << chunk;
    std::cout << std::flush;
    sleepForever();
  } else if (name == "garbage") {
    for (int i = 0; i < 100000; ++i) std::cout << "garbage line " << i << '\n';
    std::cout << std::flush;
    sleepForever();
  } else if (name == "stray-line") {
    std::cout << "a debug print that is not JSON\n" << std::flush;
    reply(id, textResult("after the stray line"));
  } else if (name == "stderr-flood") {
    const std::string line(1023, 'e');
    for (int i = 0; i < 10 * 1024; ++i) std::cerr << line << '\n';
    std::cerr << "the last line of the flood" << std::endl;
    std::_Exit(4);
  } else if (name == "close-stdout") {
    std::fclose(stdout);
    ::close(STDOUT_FILENO);
    sleepForever();
  } else if (name == "ask-roots") {
    askClient(id, "roots/list", Json::object());
  } else if (name == "ask-unknown") {
    askClient(id, "fault/unknown", Json::object());
  } else if (name == "ask-elicitation") {
    askClient(id, "elicitation/create",
              {{"message", "Your name?"},
               {"requestedSchema",
                {{"type", "object"}, {"properties", {{"name", {{"type", "string"}}}}}}}});
  } else if (name == "ask-ping") {
    askClient(id, "ping", Json::object());
  } else if (name == "client-capabilities") {
    reply(id, {{"content", Json::array()}, {"structuredContent", clientCapabilities}});
  } else if (name == "ask-sampling") {
    askClient(id, "sampling/createMessage", {{"messages", Json::array()}, {"maxTokens", 10}});
  } else if (name == "spawn-grandchild") {
    const pid_t pid = ::fork();
    if (pid == 0) {
      // Keeps the inherited stdout and stderr open, like a helper a server left behind.
      sleepForever();
    }
    reply(id, textResult(std::to_string(pid)));
  } else if (name == "progress") {
    const Json token =
        params.contains("_meta") ? params["_meta"].value("progressToken", Json()) : Json();
    if (!token.is_null()) {
      for (int step = 1; step <= 3; ++step) {
        send({{"jsonrpc", "2.0"},
              {"method", "notifications/progress"},
              {"params",
               {{"progressToken", token},
                {"progress", step},
                {"total", 3},
                {"message", "step " + std::to_string(step)}}}});
      }
    }
    reply(id, textResult(token.is_null() ? "no token" : "done"));
  } else if (name == "rich-content") {
    reply(
        id,
        {{"content",
          Json::array({{{"type", "text"}, {"text", "hello"}},
                       {{"type", "image"}, {"data", "iVBORw0KGgo="}, {"mimeType", "image/png"}},
                       {{"type", "audio"}, {"data", "UklGRg=="}, {"mimeType", "audio/wav"}},
                       {{"type", "resource_link"}, {"uri", "file:///tmp/a.txt"}, {"name", "a.txt"}},
                       {{"type", "resource"},
                        {"resource", {{"uri", "file:///tmp/b.txt"}, {"text", "bee"}}}}})},
         {"structuredContent", {{"answer", 42}}},
         {"isError", true}});
  } else if (name == "change-tools") {
    toolsChanged = true;
    reply(id, textResult("changed"));
    send({{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}});
  } else if (name == "change-stream") {
    const Json args = params.value("arguments", Json::object());
    const int count = args.value("count", 100);
    const int intervalMs = args.value("intervalMs", 5);
    reply(id, textResult("streaming"));
    std::thread([count, intervalMs] {
      for (int i = 0; i < count; ++i) {
        send({{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}});
        std::this_thread::sleep_for(std::chrono::milliseconds(intervalMs));
      }
    }).detach();
  } else if (name == "list-count") {
    reply(id, textResult(std::to_string(listCount)));
  } else if (name == "cancelled-ids") {
    reply(id, {{"content", Json::array()}, {"structuredContent", {{"ids", cancelledIds}}}});
  } else {
    replyError(id, -32602, "Unknown tool: " + name);
  }
}

void handleInitialize(const Json& id, const Json& params) {
  if (mode == "hang-init") {
    std::cerr << "fault server: not answering initialize" << std::endl;
    return;
  }
  clientCapabilities = params.value("capabilities", Json::object());
  if (mode == "notify-before-init") {
    send({{"jsonrpc", "2.0"},
          {"method", "notifications/message"},
          {"params", {{"level", "info"}, {"logger", "fault"}, {"data", "hello before init"}}}});
    send({{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}});
  }
  std::string version = params.value("protocolVersion", "2025-06-18");
  if (mode == "wrong-version") version = "1999-01-01";
  reply(id, {{"protocolVersion", version},
             {"capabilities", {{"tools", {{"listChanged", true}}}}},
             {"serverInfo", {{"name", "kaja-fault-server"}, {"version", "1.0"}}}});
}

void handleLine(const std::string& line) {
  const Json message = Json::parse(line, nullptr, false);
  if (message.is_discarded() || !message.is_object()) return;
  const std::string method = message.value("method", "");
  const Json id = message.contains("id") ? message["id"] : Json();
  const Json params = message.value("params", Json::object());
  if (method.empty()) {
    // A response to one of our requests: hand it to the call that waits for it.
    if (!id.is_string()) return;
    const auto it = waitingCalls.find(id.get<std::string>());
    if (it == waitingCalls.end()) return;
    Json answer = message.contains("result") ? message["result"] : message["error"];
    reply(it->second, {{"content", Json::array({{{"type", "text"}, {"text", answer.dump()}}})},
                       {"structuredContent", answer}});
    waitingCalls.erase(it);
    return;
  }
  if (method == "initialize") {
    handleInitialize(id, params);
  } else if (method == "tools/list") {
    handleToolsList(id, params);
  } else if (method == "tools/call") {
    handleCall(id, params);
  } else if (method == "ping") {
    reply(id, Json::object());
  } else if (method == "notifications/cancelled") {
    cancelledIds.push_back(params.value("requestId", Json()));
  } else if (!id.is_null()) {
    replyError(id, -32601, "Method not found");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) mode = argv[1];
  if (argc > 2) modeNumber = std::atoi(argv[2]);
  if (mode == "exit-at-start") {
    std::cerr << "fault server: refusing to start" << std::endl;
    return 7;
  }
  if (mode == "ignore-term") ::signal(SIGTERM, SIG_IGN);
  if (mode == "banner") std::cout << "Fault server 1.0 ready (a banner on stdout)" << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) handleLine(line);
  if (mode == "ignore-term") sleepForever();
  return 0;
}
