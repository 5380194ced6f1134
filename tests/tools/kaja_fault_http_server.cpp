// A deliberately misbehaving MCP HTTP server for kaja's HTTP and SSE transport tests.
//
//   kaja_fault_http_server MODE
//
// Binds 127.0.0.1 on an ephemeral port, prints "PORT <n>" on stdout, then one line per
// notable request ("DELETE <session>", "RESUME <last-event-id>"). Serves MCP at /mcp
// (JSON responses, sessions, MCP-Protocol-Version required after initialize) with tools
// echo and slow, and answers GET /mcp with 405. Modes:
//   normal, sse (answers as event streams), stall (tools/call sends half its body, then
//   nothing), status-500, status-401, expire-once (the first session's first request gets
//   404), expire-always (every request with a session gets 404), redirect-301,
//   redirect-307 (to /real), redirect-307-cross (to http://localhost:<port>/real),
//   redirect-loop, slash-only (only /mcp/ exists), drop-stream (tools/call's stream
//   ends after an id and a retry; GET with Last-Event-ID delivers the answer),
//   legacy (HTTP+SSE at /sse), legacy-cross (its endpoint is on another origin),
//   legacy-500 (legacy, and every tools/call POST gets HTTP 500), drop-no-id (tools/call's
//   stream ends with neither an answer nor an event id to resume from).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
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

Json result(const Json& id, Json value) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(value)}};
}

Json answer(const Json& message) {
  const std::string method = message.value("method", "");
  const Json id = message.value("id", Json());
  if (method == "initialize") {
    return result(id, {{"protocolVersion", kVersion},
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
  if (request.method == "GET" && request.path == "/sse") {
    const std::string endpoint = mode == "legacy-cross"
                                     ? "http://localhost:" + std::to_string(port) + "/messages?s=1"
                                     : "/messages?s=1";
    if (!writeAll(fd,
                  "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nevent: "
                  "endpoint\ndata: " +
                      endpoint + "\n\n")) {
      return;
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
    respond(fd, 202, "Accepted");
    if (message.contains("id") && message.contains("method")) {
      std::lock_guard lock(mutex);
      legacyQueue.push_back("event: message\ndata: " + answer(message).dump() + "\n\n");
      legacyReady.notify_all();
    }
    return;
  }
  respond(fd, 404, "no such path");
}

void serve(int fd) {
  HttpRequest request;
  if (!readRequest(fd, request)) return;
  if (mode.starts_with("legacy")) {
    serveLegacy(fd, request);
    return;
  }
  const std::string session = request.header("mcp-session-id");
  if (request.method == "DELETE") {
    report("DELETE " + session);
    respond(fd, 200, "");
    return;
  }
  if (request.method == "GET") {
    const std::string last = request.header("last-event-id");
    if (mode == "drop-stream" && !last.empty()) {
      report("RESUME " + last);
      const Json reply =
          result(std::stoi(last.substr(1)),
                 {{"content", Json::array({{{"type", "text"}, {"text", "resumed"}}})}});
      respondStream(fd, "id: r1\ndata: " + reply.dump() + "\n\n");
      return;
    }
    respond(fd, 405, "no stream");
    return;
  }
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
  if (request.header("mcp-protocol-version") != kVersion) {
    respond(fd, 400, "missing MCP-Protocol-Version");
    return;
  }
  if (!message.contains("id") || method.empty()) {
    respond(fd, 202, "");
    return;
  }
  if (method == "tools/call" && mode == "status-500") {
    respond(fd, 500, "database on fire\nstack trace follows");
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
  if (method == "tools/call" && mode == "drop-stream") {
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
    std::thread([fd] {
      serve(fd);
      ::close(fd);
    }).detach();
  }
}
