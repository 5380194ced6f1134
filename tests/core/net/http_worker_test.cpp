// HttpWorker against a server thread of the test's own on 127.0.0.1: a reader that falls
// behind pauses the transfer, a hard limit ends a stream that keeps talking, and a header
// holding a control character is never sent.
#include "core/net/http_worker.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>

#include "tests/core/mcp/test_servers.h"

namespace kaja::core::net {
namespace {

using namespace std::chrono_literals;
using kaja::testing::runUntil;

// Accepts one connection, reads the request head, answers with an event-stream head and
// then `piece` again and again (after `pause` each time) until the client hangs up.
class StreamServer {
 public:
  StreamServer(std::string piece, std::chrono::milliseconds pause)
      : piece_(std::move(piece)), pause_(pause) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(::listen(listener_, 4), 0);
    socklen_t length = sizeof address;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~StreamServer() {
    stop_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
    ::close(listener_);
  }
  StreamServer(const StreamServer&) = delete;
  StreamServer& operator=(const StreamServer&) = delete;

  [[nodiscard]] std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/stream";
  }
  /// Bytes of body the server managed to hand to its socket so far.
  [[nodiscard]] std::size_t written() const { return written_.load(); }

 private:
  void serve() {
    const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    std::string head;
    char buffer[4096];
    while (head.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      head.append(buffer, static_cast<std::size_t>(n));
    }
    const std::string response = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n";
    bool ok = ::send(fd, response.data(), response.size(), MSG_NOSIGNAL) > 0;
    while (ok && !stop_) {
      std::size_t done = 0;
      while (ok && done < piece_.size()) {
        const ssize_t n = ::send(fd, piece_.data() + done, piece_.size() - done, MSG_NOSIGNAL);
        ok = n > 0;
        if (ok) {
          done += static_cast<std::size_t>(n);
          written_ += static_cast<std::size_t>(n);
        }
      }
      if (pause_.count() > 0) std::this_thread::sleep_for(pause_);
    }
    ::close(fd);
  }

  std::string piece_;
  std::chrono::milliseconds pause_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> written_{0};
  std::thread thread_;
};

std::string tinyEvents() {
  std::string out;
  while (out.size() < 64 * 1024) out += ": k\n\ndata:\n\n";
  return out;
}

AddressPolicy loopback() {
  AddressPolicy policy;
  policy.allowPrivate = true;
  return policy;
}

TEST(HttpWorkerTest, AReaderThatFallsBehindPausesTheTransfer) {
  StreamServer server(tinyEvents(), 0ms);
  boost::asio::io_context io;
  HttpWorker worker(io, loopback());
  bool head = false;
  std::size_t received = 0;
  std::optional<Result<void>> done;
  HttpRequest request;
  request.url = server.url();
  request.streamIdleTimeout = 5s;
  worker.start(request, {[&](const HttpHead&) { head = true; },
                         [&](std::string_view chunk) { received += chunk.size(); },
                         [&](Result<void> result) { done = std::move(result); }});
  ASSERT_TRUE(runUntil(
      io, [&] { return head; }, 10s));
  // The io_context does not run: whatever the server sends must wait in its socket.
  std::this_thread::sleep_for(2s);
  const std::size_t whileStalled = server.written();
  // Loopback moves gigabytes in 2 s; paused, only the queue and the socket buffers fill.
  EXPECT_LT(whileStalled, 48UL * 1024 * 1024);
  // Once the reader drains, the transfer resumes and keeps flowing.
  runUntil(
      io, [&] { return received > whileStalled + 16UL * 1024 * 1024; }, 20s);
  EXPECT_GT(received, whileStalled + 16UL * 1024 * 1024);
  EXPECT_FALSE(done) << "the paused stream must not count as silent";
}

TEST(HttpWorkerTest, TotalTimeoutEndsAStreamThatKeepsTalking) {
  StreamServer server(": keep-alive\n\n", 100ms);
  boost::asio::io_context io;
  HttpWorker worker(io, loopback());
  std::optional<Result<void>> done;
  HttpRequest request;
  request.method = "DELETE";
  request.url = server.url();
  request.timeout = 500ms;
  request.streamIdleTimeout = 5s;
  request.totalTimeout = 500ms;
  const auto start = std::chrono::steady_clock::now();
  worker.start(request, {nullptr, nullptr, [&](Result<void> result) { done = std::move(result); }});
  ASSERT_TRUE(runUntil(
      io, [&] { return done.has_value(); }, 10s));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  ASSERT_FALSE(*done);
  EXPECT_EQ(done->error().code, ErrorCode::kTimeout);
  EXPECT_NE(done->error().message.find("did not finish within"), std::string::npos);
}

TEST(HttpWorkerTest, HeadersWithControlCharactersAreNeverSent) {
  StreamServer server("data: x\n\n", 100ms);
  boost::asio::io_context io;
  HttpWorker worker(io, loopback());
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"Authorization", "Bearer a\r\nX-Evil: 1"},
                                                        {"X-Key", "a\rb"},
                                                        {"X-Key", std::string("a\0b", 3)},
                                                        {"X-Key", "a\x1b[31m"},
                                                        {"X-A\r\nB", "v"},
                                                        {"X:Y", "v"}}) {
    std::optional<Result<void>> done;
    HttpRequest request;
    request.url = server.url();
    request.headers = {{name, value}};
    worker.start(request,
                 {nullptr, nullptr, [&](Result<void> result) { done = std::move(result); }});
    ASSERT_TRUE(runUntil(
        io, [&] { return done.has_value(); }, 5s));
    ASSERT_FALSE(*done) << name;
    EXPECT_EQ(done->error().code, ErrorCode::kRefused);
    EXPECT_EQ(done->error().message.find("Bearer"), std::string::npos) << "never the value";
  }
  EXPECT_EQ(server.written(), 0u) << "no request may have reached the server";
}

TEST(HttpWorkerTest, VisibleAsciiIsTheOnlyEchoableValue) {
  EXPECT_TRUE(isVisibleAscii("2025-06-18", 64));
  EXPECT_FALSE(isVisibleAscii("", 64));
  EXPECT_FALSE(isVisibleAscii("a b", 64));
  EXPECT_FALSE(isVisibleAscii("a\rb", 64));
  EXPECT_FALSE(isVisibleAscii("\xc3\xa9", 64));
  EXPECT_FALSE(isVisibleAscii(std::string(65, 'a'), 64));
}

}  // namespace
}  // namespace kaja::core::net
