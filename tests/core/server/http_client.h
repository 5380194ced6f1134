#pragma once

// A small blocking HTTP/1.1 client over a raw socket, for driving the HTTP front byte by byte.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/mcp/json_rpc.h"

namespace kaja::testing {

/// One HTTP response as read off the wire.
struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  ///< names in lower case
  std::string body;                            ///< de-chunked
  std::vector<core::mcp::Json> events;         ///< the data of each SSE event with data
  std::vector<std::string> eventIds;           ///< the id of each SSE event, in order
  [[nodiscard]] std::string header(const std::string& name) const {
    const auto found = headers.find(name);
    return found == headers.end() ? std::string() : found->second;
  }
};

/// A connection to 127.0.0.1:port that writes raw text and reads what comes back.
class RawHttp {
 public:
  explicit RawHttp(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    timeval timeout{0, 100 * 1000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  }
  ~RawHttp() { close(); }
  RawHttp(const RawHttp&) = delete;
  RawHttp& operator=(const RawHttp&) = delete;

  [[nodiscard]] bool connected() const { return connected_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  /// Writes `text` whole; returns false when the peer stopped taking it.
  bool write(const std::string& text) const {
    std::size_t sent = 0;
    while (sent < text.size()) {
      const auto n = ::send(fd_, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }
  /// Reads for at most `seconds` or until EOF; returns false at EOF.
  bool readSome(double seconds = 0.1) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    char buffer[65536];
    while (std::chrono::steady_clock::now() < deadline) {
      const auto n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n == 0) {
        eof_ = true;
        return false;
      }
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
        eof_ = true;
        return false;
      }
      raw_.append(buffer, static_cast<std::size_t>(n));
    }
    return true;
  }
  /// Reads until `done(raw text)` holds, EOF, or `seconds` pass; returns done's last value.
  template <class Done>
  bool readUntil(Done done, double seconds = 10) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!done(raw_) && !eof_ && std::chrono::steady_clock::now() < deadline) readSome(0.05);
    return done(raw_);
  }
  /// Reads until EOF (the server closes after its response).
  HttpReply readAll(double seconds = 10) {
    readUntil([](const std::string&) { return false; }, seconds);
    return parse(raw_);
  }
  /// Reads one whole response (Content-Length or chunked), keeping what follows.
  HttpReply readResponse(double seconds = 10) {
    std::size_t end = 0;
    readUntil([&](const std::string& raw) { return (end = responseEnd(raw)) != 0; }, seconds);
    if (end == 0) return parse(raw_);
    HttpReply reply = parse(raw_.substr(0, end));
    raw_.erase(0, end);
    return reply;
  }
  [[nodiscard]] const std::string& raw() const { return raw_; }
  [[nodiscard]] bool eof() const { return eof_; }
  /// Returns the SSE events (data parsed as JSON) in what was read so far.
  [[nodiscard]] std::vector<core::mcp::Json> events() const { return parse(raw_).events; }

  /// Parses a raw response: status line, headers, body (de-chunked), SSE events.
  static HttpReply parse(const std::string& raw) {
    HttpReply reply;
    const auto headEnd = raw.find("\r\n\r\n");
    if (raw.size() < 12 || headEnd == std::string::npos) return reply;
    reply.status = std::atoi(raw.c_str() + 9);
    std::size_t line = raw.find("\r\n") + 2;
    while (line < headEnd) {
      const auto next = raw.find("\r\n", line);
      const auto colon = raw.find(':', line);
      if (colon != std::string::npos && colon < next) {
        std::string name = raw.substr(line, colon - line);
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::string value = raw.substr(colon + 1, next - colon - 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        reply.headers[name] = value;
      }
      line = next + 2;
    }
    std::string body = raw.substr(headEnd + 4);
    if (reply.header("transfer-encoding") == "chunked") body = dechunk(body);
    reply.body = body;
    if (reply.header("content-type").starts_with("text/event-stream")) readEvents(reply);
    return reply;
  }

 private:
  static std::string dechunk(const std::string& text) {
    std::string out;
    std::size_t at = 0;
    while (at < text.size()) {
      const auto lineEnd = text.find("\r\n", at);
      if (lineEnd == std::string::npos) break;
      const std::size_t size = std::strtoul(text.c_str() + at, nullptr, 16);
      if (size == 0) break;
      out += text.substr(lineEnd + 2, size);
      at = lineEnd + 2 + size + 2;
    }
    return out;
  }
  static void readEvents(HttpReply& reply) {
    std::size_t at = 0;
    const std::string& body = reply.body;
    while (at < body.size()) {
      const auto end = body.find("\n\n", at);
      if (end == std::string::npos) break;
      const std::string event = body.substr(at, end - at);
      at = end + 2;
      std::size_t line = 0;
      while (line < event.size()) {
        auto next = event.find('\n', line);
        if (next == std::string::npos) next = event.size();
        const std::string field = event.substr(line, next - line);
        if (field.starts_with("id: ")) reply.eventIds.push_back(field.substr(4));
        if (field.starts_with("data: ") && field.size() > 6) {
          reply.events.push_back(core::mcp::Json::parse(field.substr(6)));
        }
        line = next + 1;
      }
    }
  }
  static std::size_t responseEnd(const std::string& raw) {
    const auto headEnd = raw.find("\r\n\r\n");
    if (headEnd == std::string::npos) return 0;
    const HttpReply head = parse(raw.substr(0, headEnd + 4));
    if (head.header("transfer-encoding") == "chunked") {
      const auto last = raw.find("\r\n0\r\n\r\n", headEnd);
      return last == std::string::npos ? 0 : last + 7;
    }
    const std::size_t length = std::strtoul(head.header("content-length").c_str(), nullptr, 10);
    return raw.size() >= headEnd + 4 + length ? headEnd + 4 + length : 0;
  }

  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string raw_;
};

/// Returns the text of an HTTP/1.1 request to /mcp (or `path`) with `headers` and `body`
/// (Host: 127.0.0.1 unless `headers` name one).
inline std::string httpRequest(const std::string& method, const std::string& body,
                               const std::vector<std::pair<std::string, std::string>>& headers,
                               const std::string& path = "/mcp") {
  std::string text = method + " " + path + " HTTP/1.1\r\n";
  if (std::none_of(headers.begin(), headers.end(),
                   [](const auto& header) { return header.first == "Host"; })) {
    text += "Host: 127.0.0.1\r\n";
  }
  for (const auto& [name, value] : headers) text += name + ": " + value + "\r\n";
  if (method == "POST") text += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  return text + "\r\n" + body;
}

}  // namespace kaja::testing
