// A deliberately misbehaving MCP HTTP server for kaja's HTTP and SSE transport tests.
//
//   kaja_fault_http_server MODE
//
// Binds 127.0.0.1 on an ephemeral port, prints "PORT <n>" on stdout, then one line per
// notable request ("DELETE <session>", "RESUME <last-event-id>"). Serves MCP at /mcp
// (JSON responses, sessions, MCP-Protocol-Version required after initialize) with tools
// echo and slow, and answers GET /mcp with 405. Modes:
//   normal, sse (answers as event streams), stall (tools/call sends half its body, then
//   nothing), status-NNN (tools/call gets HTTP NNN, say 500, 400 or 502), status-401
//   (every request gets 401), expire-once (the first session's first request gets
//   404), expire-always (every request with a session gets 404), redirect-301,
//   redirect-307 (to /real), redirect-307-cross (to http://localhost:<port>/real),
//   redirect-loop, slash-only (only /mcp/ exists), drop-stream (tools/call's stream
//   ends after an id and a retry; GET with Last-Event-ID delivers the answer),
//   legacy (HTTP+SSE at /sse), legacy-cross (its endpoint is on another origin),
//   legacy-500 (legacy, and every tools/call POST gets HTTP 500), drop-no-id (tools/call's
//   stream ends with neither an answer nor an event id to resume from), drop-stream-hold
//   (as drop-stream, but the resumed GET only keeps itself alive, and reports
//   "RESUME-CLOSED" once kaja closes it; 2026-07-28 is accepted as a protocol version).
//   The protocol-version check accepts 2026-07-28 in that mode too.
// Hostile modes (tests/policy/hostile_http_test.cpp):
//   flood-post (tools/list and tools/call answer with an endless stream of tiny events
//   that carry no message), flood-call (only tools/call does), flood-line (one endless line),
//   flood-data (endless data lines with no blank line), flood-listen (the GET stream sends endless
//   tiny events, junk included; requests are answered normally), legacy-flood (tiny events forever,
//   never an endpoint), legacy-flood-after (the endpoint, then tiny events between the answers),
//   delete-stream (DELETE answers with an event stream and a keep-alive every second),
//   ping-flood (tools/list answers with an endless stream of ping requests; kaja's
//   replies are answered slowly), ping-flood-listen (the pings come on the GET stream),
//   legacy-ping-flood, retry-zero (the GET stream says `retry: 0` and closes at once;
//   tools/call answers after 3 s), session-cr, session-ctl, session-long, session-space,
//   session-utf8 (a bad Mcp-Session-Id), version-cr (a protocolVersion with CR LF in it),
//   event-id-ctl, event-id-long, event-id-utf8 (tools/call's stream has a bad event id,
//   then drops), redirect-file and redirect-metadata (a 307 to file:// or to the cloud
//   metadata address), legacy-endpoint-file, deep-json, deep-sse, deep-call and
//   legacy-deep (a reply nested 60,000 deep: in tools/list's inputSchema as a JSON body or
//   as an event, in a tools/call result, over legacy SSE).
// Every mode reports "CONNECTIONS <n>" when the number of open connections reaches a new
// peak, "LISTEN" for each GET without Last-Event-ID, and "BAD-ECHO <header>" when kaja
// sends back a session id, event id or protocol version holding a byte outside 0x21-0x7E.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

using Json = nlohmann::json;

namespace {

std::string mode = "normal";
int port = 0;
std::mutex mutex;
int nextSession = 1;
std::set<std::string> sessions;
bool expiredOnce = false;
std::deque<std::string> legacyQueue;  // events for the legacy stream
std::condition_variable legacyReady;

constexpr const char* kVersion = "2025-06-18";
std::atomic<int> openConnections{0};
std::atomic<int> peakConnections{0};

// An array nested this deep: kaja must read it without recursing per level.
std::string deepArray() { return std::string(60000, '[') + std::string(60000, ']'); }

struct HttpRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  [[nodiscard]] std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

void report(const std::string& line) {
  std::lock_guard lock(mutex);
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

bool writeAll(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool readRequest(int fd, HttpRequest& request) {
  std::string data;
  char buffer[4096];
  std::size_t headerEnd = std::string::npos;
  while ((headerEnd = data.find("\r\n\r\n")) == std::string::npos) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    data.append(buffer, static_cast<std::size_t>(n));
  }
  const std::string head = data.substr(0, headerEnd);
  std::size_t lineEnd = head.find("\r\n");
  const std::string first = head.substr(0, lineEnd);
  const auto space1 = first.find(' ');
  const auto space2 = first.find(' ', space1 + 1);
  request.method = first.substr(0, space1);
  request.path = first.substr(space1 + 1, space2 - space1 - 1);
  while (lineEnd != std::string::npos && lineEnd < head.size()) {
    const auto next = head.find("\r\n", lineEnd + 2);
    const std::string line = head.substr(lineEnd + 2, next - lineEnd - 2);
    lineEnd = next;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    request.headers[name] = value;
  }
  request.body = data.substr(headerEnd + 4);
  const std::size_t length = std::stoul("0" + request.header("content-length"));
  while (request.body.size() < length) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    request.body.append(buffer, static_cast<std::size_t>(n));
  }
  return true;
}

void respond(int fd, int status, const std::string& body, const std::string& type = "text/plain",
             const std::string& extra = "") {
  writeAll(fd, "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: " + type +
                   "\r\nContent-Length: " + std::to_string(body.size()) +
                   "\r\nConnection: close\r\n" + extra + "\r\n" + body);
}

void respondStream(int fd, const std::string& events, const std::string& extra = "") {
  writeAll(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n" +
                   extra + "\r\n" + events);
}

// About 64 KB of tiny events. `junk` adds data that is not JSON-RPC, which only a stream
// that answers no request may carry without failing one.
std::string tinyEvents(bool junk) {
  static const char* kSpellings[] = {": k\n\n",    "data:\n\n",      "event: other\ndata: {}\n\n",
                                     "id: 7\n\n",  "retry: 100\n\n", "\r\n",
                                     "data: x\n\n"};
  const std::size_t spellings = junk ? 7 : 6;
  std::string out;
  for (std::size_t i = 0; out.size() < 64 * 1024; ++i) out += kSpellings[i % spellings];
  return out;
}

// Sends the head of an event stream, then `next()` again and again until kaja hangs up.
template <class Next>
void streamForever(int fd, Next next) {
  if (!writeAll(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")) return;
  while (writeAll(fd, next())) {
  }
}

// About 64 KB of ping requests, numbered on from `next`.
std::string pings(long& next) {
  std::string out;
  while (out.size() < 64 * 1024) {
    out +=
        "data: {\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(next++) + ",\"method\":\"ping\"}\n\n";
  }
  return out;
}

void checkEchoes(const std::map<std::string, std::string>& headers) {
  for (const char* name : {"mcp-session-id", "last-event-id", "mcp-protocol-version"}) {
    const auto it = headers.find(name);
    if (it == headers.end()) continue;
    for (const unsigned char c : it->second) {
      if (c < 0x21 || c > 0x7e) {
        report(std::string("BAD-ECHO ") + name);
        break;
      }
    }
  }
}

Json result(const Json& id, Json value) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(value)}};
}

Json answer(const Json& message) {
  const std::string method = message.value("method", "");
  const Json id = message.value("id", Json());
  if (method == "initialize") {
    const std::string version = mode == "version-cr" ? "2025-06-18\r\nX-Injected: yes" : kVersion;
    return result(id, {{"protocolVersion", version},
                       {"capabilities", {{"tools", Json::object()}}},
                       {"serverInfo", {{"name", "kaja-fault-http"}, {"version", "1"}}}});
  }
  if (method == "tools/list") {
    return result(
        id, {{"tools", Json::array({{{"name", "echo"}, {"inputSchema", {{"type", "object"}}}}})}});
  }
  if (method == "tools/call") {
    const std::string text =
        message["params"].value("arguments", Json::object()).value("message", "echo");
    return result(id, {{"content", Json::array({{{"type", "text"}, {"text", text}}})}});
  }
  if (method == "ping") return result(id, Json::object());
  return {
      {"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", -32601}, {"message", "no " + method}}}};
}

void serveLegacy(int fd, const HttpRequest& request) {
  if (request.method == "GET" && request.path == "/sse" && mode == "legacy-flood") {
    streamForever(fd, [] { return tinyEvents(true); });
    return;
  }
  if (request.method == "GET" && request.path == "/sse") {
    const std::string endpoint = mode == "legacy-cross"
                                     ? "http://localhost:" + std::to_string(port) + "/messages?s=1"
                                 : mode == "legacy-endpoint-file" ? "file:///etc/passwd"
                                                                  : "/messages?s=1";
    if (!writeAll(fd,
                  "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nevent: "
                  "endpoint\ndata: " +
                      endpoint + "\n\n")) {
      return;
    }
    const bool flood = mode == "legacy-flood-after" || mode == "legacy-ping-flood";
    long nextPing = 1;
    while (flood) {
      std::string batch = mode == "legacy-ping-flood" ? pings(nextPing) : tinyEvents(true);
      {
        std::lock_guard lock(mutex);
        while (!legacyQueue.empty()) {
          batch += legacyQueue.front();
          legacyQueue.pop_front();
        }
      }
      if (!writeAll(fd, batch)) return;
    }
    while (true) {
      std::unique_lock lock(mutex);
      legacyReady.wait(lock, [] { return !legacyQueue.empty(); });
      const std::string event = legacyQueue.front();
      legacyQueue.pop_front();
      lock.unlock();
      if (!writeAll(fd, event)) return;
    }
  }
  if (request.method == "POST" && request.path.starts_with("/messages")) {
    const Json message = Json::parse(request.body, nullptr, false);
    if (mode == "legacy-500" && message.value("method", "") == "tools/call") {
      respond(fd, 500, "database on fire");
      return;
    }
    if (!message.contains("method")) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    respond(fd, 202, "Accepted");
    if (message.contains("id") && message.contains("method")) {
      std::string data = answer(message).dump();
      if (mode == "legacy-deep" && message.value("method", "") == "tools/list") {
        data = "{\"jsonrpc\":\"2.0\",\"id\":" + message["id"].dump() +
               ",\"result\":{\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":"
               "\"object\",\"x\":" +
               deepArray() + "}}]}}";
      }
      std::lock_guard lock(mutex);
      legacyQueue.push_back("event: message\ndata: " + data + "\n\n");
      legacyReady.notify_all();
    }
    return;
  }
  respond(fd, 404, "no such path");
}

// Serves the hostile modes' answers to a request after initialize; returns false when it
// answered (or hung up), true to answer normally.
bool hostile(int fd, const Json& message, const std::string& method) {
  const bool listing = method == "tools/list";
  const bool calling = method == "tools/call";
  if (((listing || calling) && mode == "flood-post") || (calling && mode == "flood-call")) {
    streamForever(fd, [] { return tinyEvents(false); });
    return false;
  }
  if (listing && (mode == "flood-line" || mode == "flood-data")) {
    const std::string piece = mode == "flood-line" ? std::string(64 * 1024, 'x') : [] {
      std::string lines;
      while (lines.size() < 64 * 1024) lines += "data: x\n";
      return lines;
    }();
    if (!writeAll(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: ")) {
      return false;
    }
    while (writeAll(fd, piece)) {
    }
    return false;
  }
  if (listing && mode == "ping-flood") {
    long next = 1;
    streamForever(fd, [&next] { return pings(next); });
    return false;
  }
  if (calling && mode == "retry-zero") std::this_thread::sleep_for(std::chrono::seconds(3));
  if (calling && mode.starts_with("event-id-")) {
    const std::string id = mode == "event-id-ctl"    ? "e\x01"
                           : mode == "event-id-long" ? std::string(1000, 'e')
                                                     : "caf\xc3\xa9";
    respondStream(fd, "id: " + id + "\nretry: 50\ndata:\n\n");
    return false;
  }
  const std::string deepTool =
      "{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\",\"x\":" + deepArray() + "}}";
  const std::string prefix = "{\"jsonrpc\":\"2.0\",\"id\":" + message["id"].dump() + ",";
  if (listing && (mode == "deep-json" || mode == "deep-sse")) {
    const std::string body = prefix + "\"result\":{\"tools\":[" + deepTool + "]}}";
    if (mode == "deep-json") {
      respond(fd, 200, body, "application/json");
    } else {
      respondStream(fd, "data: " + body + "\n\n");
    }
    return false;
  }
  if (calling && mode == "deep-call") {
    respond(
        fd, 200,
        prefix + "\"result\":{\"content\":[],\"structuredContent\":{\"x\":" + deepArray() + "}}}",
        "application/json");
    return false;
  }
  return true;
}

// DELETE ends a session; delete-stream answers with a stream that never ends.
void serveDelete(int fd, const HttpRequest& request) {
  report("DELETE " + request.header("mcp-session-id"));
  if (mode == "delete-stream") {
    if (!writeAll(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")) return;
    do {
      std::this_thread::sleep_for(std::chrono::seconds(1));
    } while (writeAll(fd, ": keep-alive\n\n"));
    return;
  }
  respond(fd, 200, "");
}

// GET opens the stream for server-initiated messages, or resumes one (Last-Event-ID).
void serveGet(int fd, const HttpRequest& request) {
  const std::string last = request.header("last-event-id");
  if (last.empty()) report("LISTEN");
  if (mode == "flood-listen") {
    streamForever(fd, [] { return tinyEvents(true); });
    return;
  }
  if (mode == "ping-flood-listen") {
    long next = 1;
    streamForever(fd, [&next] { return pings(next); });
    return;
  }
  if (mode == "retry-zero") {
    static std::atomic<int> count{0};
    static const char* kSpellings[] = {"retry: 0\n\n", ": hi\nretry: 0\n\n",
                                       "retry: 0\ndata: x\n\n", "id: a\nretry: 0\n\n"};
    respondStream(fd, kSpellings[count++ % 4]);
    return;
  }
  if (mode == "drop-stream-hold" && !last.empty()) {
    report("RESUME " + last);
    streamForever(fd, [] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      return std::string(": still here\n\n");
    });
    report("RESUME-CLOSED");
    return;
  }
  if (mode == "drop-stream" && !last.empty()) {
    report("RESUME " + last);
    const Json reply =
        result(std::stoi(last.substr(1)),
               {{"content", Json::array({{{"type", "text"}, {"text", "resumed"}}})}});
    respondStream(fd, "id: r1\ndata: " + reply.dump() + "\n\n");
    return;
  }
  respond(fd, 405, "no stream");
}

void serve(int fd) {
  HttpRequest request;
  if (!readRequest(fd, request)) return;
  checkEchoes(request.headers);
  if (mode.starts_with("legacy")) {
    serveLegacy(fd, request);
    return;
  }
  if (request.method == "DELETE") {
    serveDelete(fd, request);
    return;
  }
  if (request.method == "GET") {
    serveGet(fd, request);
    return;
  }
  const std::string session = request.header("mcp-session-id");
  std::string path = request.path;
  if (mode == "redirect-301" && path == "/mcp") {
    respond(fd, 301, "", "text/plain", "Location: /moved\r\n");
    return;
  }
  if (mode == "redirect-307" && path == "/mcp") {
    respond(fd, 307, "", "text/plain", "Location: /real\r\n");
    return;
  }
  if (mode == "redirect-307-cross" && path == "/mcp") {
    respond(fd, 307, "", "text/plain",
            "Location: http://localhost:" + std::to_string(port) + "/real\r\n");
    return;
  }
  if (mode == "redirect-file" || mode == "redirect-metadata") {
    const std::string target =
        mode == "redirect-file" ? "file:///etc/passwd" : "http://169.254.169.254/latest/meta-data/";
    respond(fd, 307, "", "text/plain", "Location: " + target + "\r\n");
    return;
  }
  if (mode == "redirect-loop") {
    respond(fd, 307, "", "text/plain", "Location: /mcp\r\n");
    return;
  }
  const std::string served = mode == "slash-only"     ? "/mcp/"
                             : mode == "redirect-307" ? "/real"
                                                      : "/mcp";
  if (path != served) {
    respond(fd, 404, "Not Found");
    return;
  }
  if (mode == "status-401") {
    respond(fd, 401, "{\"error\":\"invalid_token\"}", "application/json");
    return;
  }
  const Json message = Json::parse(request.body, nullptr, false);
  if (!message.is_object()) {
    respond(fd, 400, "not JSON");
    return;
  }
  const std::string method = message.value("method", "");
  if (method == "initialize") {
    std::string id;
    {
      std::lock_guard lock(mutex);
      id = "s" + std::to_string(nextSession++);
      sessions.insert(id);
    }
    const std::string body = answer(message).dump();
    if (mode == "session-cr") id += "\rX-Injected: yes";
    if (mode == "session-ctl") id += "\x01";
    if (mode == "session-long") id += std::string(5000, 'x');
    if (mode == "session-space") id += " two";
    if (mode == "session-utf8") id += "caf\xc3\xa9";
    const std::string extra = "Mcp-Session-Id: " + id + "\r\n";
    if (mode == "sse") {
      respondStream(fd, "id: i1\ndata: " + body + "\n\n", extra);
    } else {
      respond(fd, 200, body, "application/json", extra);
    }
    return;
  }
  {
    std::lock_guard lock(mutex);
    const bool isRequest = message.contains("id") && !method.empty();
    if (!sessions.contains(session)) {
      respond(fd, session.empty() ? 400 : 404, "unknown session");
      return;
    }
    if (isRequest && (mode == "expire-always" || (mode == "expire-once" && !expiredOnce))) {
      expiredOnce = true;
      sessions.erase(session);
      respond(fd, 404, "session expired");
      return;
    }
  }
  if (request.header("mcp-protocol-version") != kVersion &&
      (mode != "drop-stream-hold" || request.header("mcp-protocol-version") != "2026-07-28")) {
    respond(fd, 400, "missing MCP-Protocol-Version");
    return;
  }
  if (!message.contains("id") || method.empty()) {
    // Replies to the server's own requests are taken slowly, so a flood of them piles up.
    if (!message.contains("method")) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    respond(fd, 202, "");
    return;
  }
  if (!hostile(fd, message, method)) return;
  if (method == "tools/call" && mode.starts_with("status-") && mode != "status-401") {
    respond(fd, std::atoi(mode.c_str() + 7), "database on fire\nstack trace follows");
    return;
  }
  if (method == "tools/call" && mode == "stall") {
    writeAll(fd,
             "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
             "500\r\n\r\n{\"jsonrpc\":");
    std::this_thread::sleep_for(std::chrono::hours(1));
    return;
  }
  if (method == "tools/call" && mode == "drop-no-id") {
    respondStream(fd, ": nothing to say\n\n");
    return;
  }
  if (method == "tools/call" && (mode == "drop-stream" || mode == "drop-stream-hold")) {
    // The event id names the request, so the resumed GET knows what to answer.
    respondStream(fd, "id: e" + message["id"].dump() + "\nretry: 50\ndata:\n\n");
    return;
  }
  const std::string body = answer(message).dump();
  if (mode == "sse") {
    respondStream(fd, ": keep-alive\n\nevent: message\nid: m1\ndata: " + body + "\n\n");
  } else {
    respond(fd, 200, body, "application/json");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) mode = argv[1];
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int on = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener, 64) != 0) {
    std::perror("bind/listen 127.0.0.1");
    return 1;
  }
  socklen_t length = sizeof address;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  port = ntohs(address.sin_port);
  report("PORT " + std::to_string(port));
  while (true) {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    const int open = ++openConnections;
    int peak = peakConnections.load();
    while (open > peak && !peakConnections.compare_exchange_weak(peak, open)) {
    }
    if (open > peak) report("CONNECTIONS " + std::to_string(open));
    std::thread([fd] {
      serve(fd);
      ::close(fd);
      --openConnections;
    }).detach();
  }
}
