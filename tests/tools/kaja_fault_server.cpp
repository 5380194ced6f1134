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
//
// Hostile modes and tools, one per attack on kaja itself (mode hostile lists the tools): modes
// deep-init (a 60,000-deep value
// in the initialize result), deep-schema (in a tool's inputSchema), bad-tool (a tool whose
// description is a number), pages-forever (fresh 3 MB pages of new tools, each with a new
// cursor), huge-page (one 5 MB page), notify-flood-init (200,000 notifications before the
// initialize answer), stateless (speaks 2026-07-28 after server/discover), discover-hangup
// (exits n ms after server/discover, answers initialize after n ms); tools deep-result,
// deep-array, deep-error, lone-surrogate, lone-low-surrogate, invalid-utf8, overlong-utf8,
// raw-control, text-number, block-number, mime-number, content-object, is-error-string,
// result-string, result-array, result-null, result-type-number, slow-input, stop-reading,
// notify-flood, request-flood, int64-error, batch-bad-element, batch-bad-first, huge-result
// (a 10 MB line: the text twice, as server-filesystem sends it), too-big-result (70 MB),
// many-values (3,000,000 values), stray-reply (a reply to an id kaja never used).
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

// Writes one line as it is: hostile replies are built as text, never as nlohmann::json values,
// which could not hold them (invalid UTF-8) or would crash this server (deep nesting).
void sendRaw(const std::string& line) {
  std::lock_guard lock(sendMutex);
  std::cout << line << '\n' << std::flush;
}

constexpr int kDeep = 60000;

std::string deepArrays() { return std::string(kDeep, '[') + std::string(kDeep, ']'); }

std::string deepObjects() {
  std::string out;
  for (int i = 0; i < kDeep; ++i) out += R"({"a":)";
  out += "1";
  out += std::string(kDeep, '}');
  return out;
}

// A reply to `id` whose result is the raw JSON text `result`.
void replyRaw(const Json& id, const std::string& result) {
  sendRaw(R"({"jsonrpc":"2.0","id":)" + id.dump() + R"(,"result":)" + result + "}");
}

// A text result whose text is the raw (already quoted) JSON string `quoted`.
void replyRawText(const Json& id, const std::string& quoted) {
  replyRaw(id, R"({"content":[{"type":"text","text":)" + quoted + "}]}");
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
                                    "progress-forever",
                                    "rich-content",
                                    "change-tools",
                                    "cancelled-ids",
                                    "ask-elicitation",
                                    "ask-ping",
                                    "client-capabilities",
                                    "change-stream",
                                    "list-count"};
  // The hostile tools are listed only where a test calls them through kaja (modes hostile
  // and stateless), so that the normal listing keeps its five pages.
  if (mode == "hostile" || mode == "stateless") {
    for (const char* name :
         {"deep-result",        "deep-array",     "deep-error",        "lone-surrogate",
          "lone-low-surrogate", "invalid-utf8",   "overlong-utf8",     "raw-control",
          "text-number",        "block-number",   "mime-number",       "content-object",
          "is-error-string",    "result-string",  "result-array",      "result-null",
          "result-type-number", "slow-input",     "stop-reading",      "notify-flood",
          "request-flood",      "int64-error",    "batch-bad-element", "batch-bad-first",
          "huge-result",        "too-big-result", "many-values",       "stray-reply",
          "round-state-number", "round-type-odd", "round-stray",       "number-overflow"}) {
      names.push_back(name);
    }
  }
  if (toolsChanged) names.push_back("new-tool");
  Json tools = Json::array();
  for (const auto& name : names) {
    tools.push_back({{"name", name},
                     {"description", "fault tool " + name},
                     {"inputSchema", {{"type", "object"}}}});
  }
  return tools;
}

// Hostile listings; returns false for a normal one.
bool hostileToolsList(const Json& id, const Json& params) {
  if (mode == "deep-schema") {
    replyRaw(id, R"({"tools":[{"name":"deep","inputSchema":)" + deepObjects() + "}]}");
    return true;
  }
  if (mode == "bad-tool") {
    replyRaw(id, R"({"tools":[{"name":"echo","inputSchema":{"type":"object"}},)"
                 R"({"name":"bad","description":5,"inputSchema":{"type":"object"}}]})");
    return true;
  }
  if (mode == "duplicate-tool") {
    // One name twice, first read-only and then not: a lie kaja cannot settle.
    replyRaw(id, R"({"tools":[{"name":"echo","inputSchema":{"type":"object"}},)"
                 R"({"name":"twice","annotations":{"readOnlyHint":true},)"
                 R"("inputSchema":{"type":"object"}},)"
                 R"({"name":"twice","description":"dup","inputSchema":{"type":"object"}}]})");
    return true;
  }
  if (mode == "pages-forever" || mode == "huge-page") {
    // Every page is new: new tool names, a new cursor, about 3 MB (5 MB for huge-page).
    const int page = params.is_object() && params.contains("cursor")
                         ? std::atoi(params["cursor"].get<std::string>().c_str() + 5)
                         : 0;
    const int tools = mode == "huge-page" ? 5 : 3;
    Json list = Json::array();
    for (int i = 0; i < tools; ++i) {
      list.push_back({{"name", "t" + std::to_string(page) + "-" + std::to_string(i)},
                      {"description", std::string(1024 * 1024, 'd')},
                      {"inputSchema", {{"type", "object"}}}});
    }
    reply(id, {{"tools", list}, {"nextCursor", "page-" + std::to_string(page + 1)}});
    return true;
  }
  return false;
}

void handleToolsList(const Json& id, const Json& params) {
  constexpr std::size_t kPageSize = 5;
  ++listCount;
  if (hostileToolsList(id, params)) return;
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

// Writes a reply whose result holds a text of `megabytes` twice (content and
// structuredContent, as server-filesystem does), in chunks.
void replyBigText(const Json& id, std::size_t megabytes) {
  const std::string chunk(1024 * 1024, 'a');
  std::lock_guard lock(sendMutex);
  std::cout << R"({"jsonrpc":"2.0","id":)" << id.dump()
            << R"(,"result":{"content":[{"type":"text","text":")";
  for (std::size_t i = 0; i < megabytes; ++i) std::cout << chunk;
  std::cout << R"("}],"structuredContent":{"content":")";
  for (std::size_t i = 0; i < megabytes; ++i) std::cout << chunk;
  std::cout << "\"}}}\n" << std::flush;
}

// Floods kaja with `count` notifications (progress for unknown tokens and log messages).
void notifyFlood(int count) {
  const std::string data(100, 'n');
  for (int i = 0; i < count; ++i) {
    if (i % 2 == 0) {
      send({{"jsonrpc", "2.0"},
            {"method", "notifications/message"},
            {"params", {{"level", "info"}, {"data", data}}}});
    } else {
      send({{"jsonrpc", "2.0"},
            {"method", "notifications/progress"},
            {"params", {{"progressToken", i}, {"progress", i}}}});
    }
  }
}

// Malformed bytes, wrong types and odd shapes in a reply; returns false for other tools.
bool hostileBytesCall(const std::string& name, const Json& id) {
  static const std::map<std::string, std::string> kTexts = {
      {"lone-surrogate", R"("broken \ud83d emoji")"},
      {"lone-low-surrogate", R"("\ude00 then \ud83d\ud83d twice")"},
      {"invalid-utf8", "\"bad \xff\xfe bytes\""},
      {"overlong-utf8", "\"slash \xc0\xaf and \xed\xa0\x80 surrogate\""},
      {"raw-control", "\"tab\there, escape \x1b[31m red\""}};
  static const std::map<std::string, std::string> kResults = {
      {"text-number", R"({"content":[{"type":"text","text":5}]})"},
      {"block-number", R"({"content":[5]})"},
      {"mime-number", R"({"content":[{"type":"image","data":"AAAA","mimeType":7}]})"},
      {"content-object", R"({"content":{"type":"text","text":"x"}})"},
      {"is-error-string", R"({"content":[],"isError":"yes"})"},
      {"result-string", R"("just text")"},
      {"result-array", R"([1,2,3])"},
      {"result-null", R"(null)"},
      {"result-type-number", R"({"resultType":5,"content":[]})"},
      // A number no double holds: the line is no JSON kaja can read, but its id came first.
      {"number-overflow", R"({"content":[],"structuredContent":{"v":1e400}})"},
      // input_required gone wrong: a state that is no string, a resultType that is almost
      // right, and questions and state on a result that is not a round.
      {"round-state-number",
       R"({"resultType":"input_required","inputRequests":{},"requestState":7})"},
      {"round-type-odd",
       R"({"resultType":"Input_Required","inputRequests":{"r":{"method":"roots/list","params":{}}}})"},
      {"round-stray",
       R"({"content":[{"type":"text","text":"done"}],"inputRequests":{"r":{"method":"roots/list"}},"requestState":"srv"})"},
      {"deep-array", deepArrays()},
      {"deep-result", R"({"content":[],"structuredContent":{"x":)" + deepObjects() + "}}"}};
  if (const auto text = kTexts.find(name); text != kTexts.end()) {
    replyRawText(id, text->second);
  } else if (const auto result = kResults.find(name); result != kResults.end()) {
    replyRaw(id, result->second);
  } else if (name == "deep-error") {
    sendRaw(R"({"jsonrpc":"2.0","id":)" + id.dump() +
            R"(,"error":{"code":-32000,"message":"deep","data":)" + deepArrays() + "}}");
  } else if (name == "int64-error") {
    sendRaw(R"({"jsonrpc":"2.0","id":)" + id.dump() +
            R"(,"error":{"code":99999999999,"message":"a big code"}})");
  } else if (name == "batch-bad-element") {
    sendRaw(R"([{"jsonrpc":"2.0","method":5},{"jsonrpc":"2.0","id":)" + id.dump() +
            R"(,"result":{"content":[{"type":"text","text":"kept"}]}}])");
  } else if (name == "batch-bad-first") {
    sendRaw(R"([42,{"jsonrpc":"2.0","id":"zz","result":1,"error":{}},{"jsonrpc":"1.0"},)"
            R"({"jsonrpc":"2.0","id":)" +
            id.dump() + R"(,"result":{"content":[{"type":"text","text":"kept"}]}}])");
  } else if (name == "stray-reply") {
    // A reply to a request kaja never sent, then the real one.
    sendRaw(R"({"jsonrpc":"2.0","id":987654,"result":{"content":[]}})");
    reply(id, textResult("after the stray reply"));
  } else if (name == "many-values") {
    std::string values = "0";
    values.reserve(6'000'000);
    for (int i = 1; i < 3'000'000; ++i) values += ",0";
    replyRaw(id, R"({"content":[],"structuredContent":{"v":[)" + values + "]}}");
  } else {
    return false;
  }
  return true;
}

// Floods and slowness; returns false for other tools.
bool hostileFloodCall(const std::string& name, const Json& id, const Json& params) {
  if (name == "huge-result") {
    replyBigText(id, 5);
  } else if (name == "too-big-result") {
    replyBigText(id, 35);
  } else if (name == "notify-flood") {
    notifyFlood(200000);
    reply(id, textResult("flooded"));
  } else if (name == "request-flood") {
    for (int i = 0; i < 50000; ++i) {
      send({{"jsonrpc", "2.0"}, {"id", "flood-" + std::to_string(i)}, {"method", "ping"}});
      send({{"jsonrpc", "2.0"},
            {"id", "ask-" + std::to_string(i)},
            {"method", "sampling/createMessage"},
            {"params", {{"messages", Json::array()}, {"maxTokens", 1}}}});
    }
    reply(id, textResult("flooded"));
  } else if (name == "stop-reading") {
    // Never reads its stdin again, while asking kaja for ever more answers.
    for (long i = 0;; ++i) {
      send({{"jsonrpc", "2.0"}, {"id", "p" + std::to_string(i)}, {"method", "ping"}});
    }
  } else if (name == "slow-input") {
    // Asks for (no) input again and again, a few seconds after each round.
    std::this_thread::sleep_for(std::chrono::milliseconds(modeNumber > 0 ? modeNumber : 4000));
    const std::string state = params.value("requestState", std::string("round-0"));
    const int round = state.starts_with("round-") ? std::atoi(state.c_str() + 6) : 0;
    reply(id, {{"resultType", "input_required"},
               {"inputRequests", Json::object()},
               {"requestState", "round-" + std::to_string(round + 1)}});
  } else {
    return false;
  }
  return true;
}

void handleCall(const Json& id, const Json& params) {
  ++callCount;
  if (mode == "die-every" && modeNumber > 0 && callCount % modeNumber == 0) {
    std::cerr << "fault server: dying on call " << callCount << std::endl;
    std::_Exit(5);
  }
  const std::string name = params.value("name", "");
  const Json args = params.value("arguments", Json::object());
  if (hostileBytesCall(name, id) || hostileFloodCall(name, id, params)) return;
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
  } else if (name == "progress-forever") {
    // Reports progress on its token every 100 ms and never answers: a server holding a call.
    const Json token =
        params.contains("_meta") ? params["_meta"].value("progressToken", Json()) : Json();
    std::thread([token] {
      for (int step = 1;; ++step) {
        send({{"jsonrpc", "2.0"},
              {"method", "notifications/progress"},
              {"params", {{"progressToken", token}, {"progress", step}}}});
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }).detach();
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
  if (mode == "discover-hangup") {
    std::this_thread::sleep_for(std::chrono::milliseconds(modeNumber > 0 ? modeNumber : 6000));
  }
  if (mode == "deep-init") {
    replyRaw(id, R"({"protocolVersion":"2025-06-18","capabilities":{"tools":{}},)"
                 R"("serverInfo":{"name":"deep","version":"1"},"deep":)" +
                     deepArrays() + "}");
    return;
  }
  if (mode == "notify-flood-init") notifyFlood(200000);
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
  if (method == "server/discover" && mode == "discover-hangup") {
    std::this_thread::sleep_for(std::chrono::milliseconds(modeNumber > 0 ? modeNumber : 6000));
    std::_Exit(1);
  }
  if (method == "server/discover" && mode == "stateless") {
    reply(id, {{"supportedVersions", {"2026-07-28"}},
               {"capabilities", {{"tools", Json::object()}}},
               {"serverInfo", {{"name", "kaja-fault-server"}, {"version", "1.0"}}}});
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
