#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/server/session.h"

namespace boost::asio {
class io_context;
}

namespace kaja::core::server {

/// Where an HTTP front listens and what it accepts.
struct HttpFrontOptions {
  std::string host = "127.0.0.1";  ///< an IP address to bind
  std::uint16_t port = 0;          ///< 0 picks a free port (see HttpFront::port())
  std::string path = "/mcp";       ///< the MCP endpoint
  /// When set, every request must carry `Authorization: Bearer <token>` (else 401).
  std::string bearerToken;
  /// Origins allowed besides loopback ones: a host ("app.example") or a whole origin
  /// ("https://app.example"). A request with any other Origin header gets 403.
  std::vector<std::string> allowedOrigins;
  std::size_t maxMessageBytes = 4UL * 1024 * 1024;  ///< a larger body gets 413
  std::size_t maxHeaderBytes = 16UL * 1024;         ///< larger headers get 431
  std::size_t maxConnections = 256;                 ///< more are closed at once
  std::size_t maxSessions = 1024;  ///< initialize past this gets 503 until one ends
  /// A connection silent this long between or inside requests is closed.
  std::chrono::milliseconds idleTimeout{std::chrono::seconds(60)};
  /// A stream whose client has not taken a write this long is dropped.
  std::chrono::milliseconds writeTimeout{std::chrono::seconds(30)};
  /// A session without requests or open streams this long is ended.
  std::chrono::milliseconds sessionIdle{std::chrono::minutes(30)};
  /// An SSE comment is sent on an open stream this often, so dead clients are noticed.
  std::chrono::milliseconds keepAlive{std::chrono::seconds(15)};
  /// Bytes waiting on one SSE connection past this drop it (the client is not reading);
  /// the events stay in the stream's replay buffer.
  std::size_t maxQueuedBytes = 8UL * 1024 * 1024;
  /// Each stream keeps its last events up to this size for Last-Event-ID replay (the
  /// newest event is always kept).
  std::size_t replayBytes = 1UL * 1024 * 1024;
};

/// kaja's server side over Streamable HTTP (MCP 2025-03-26 to 2025-11-25 with sessions,
/// 2026-07-28 stateless) at one endpoint, on the io_context it is given.
///
/// A POST with `initialize` makes a Session and answers with its `Mcp-Session-Id`; later
/// requests name it. Replies go back on the POST as SSE (with every message the session
/// relates to that request) or as one JSON body for a client that accepts only JSON. A GET
/// opens the session's own stream for unrelated messages; Last-Event-ID resumes a stream.
/// DELETE ends the session. A 2026-07-28 request gets a Session of its own, ended with its
/// response or when the client closes the stream.
///
/// A message sent on a stream whose connection is gone is kept in that stream's bounded
/// replay buffer, for a GET with Last-Event-ID; the session is told nothing.
class HttpFront {
 public:
  /// Binds and listens; accepts nothing before start(). Returns kUsage for an address that
  /// is not an IP, kIo when the bind fails.
  static Result<std::unique_ptr<HttpFront>> create(boost::asio::io_context& io,
                                                   SessionFactory factory,
                                                   HttpFrontOptions options = {});
  /// Closes every connection and ends every session.
  // NOLINTNEXTLINE(bugprone-exception-escape): stop() reports errors as values.
  ~HttpFront();
  HttpFront(const HttpFront&) = delete;
  HttpFront& operator=(const HttpFront&) = delete;

  /// Starts accepting connections.
  void start();
  /// Stops accepting, closes every connection and ends every session.
  void stop();
  /// Returns the bound port.
  [[nodiscard]] std::uint16_t port() const;
  /// Returns how many sessions are open (2026-07-28 requests in flight included).
  [[nodiscard]] std::size_t sessionCount() const;
  /// Returns how many connections are open.
  [[nodiscard]] std::size_t connectionCount() const;

  struct Impl;

 private:
  explicit HttpFront(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace kaja::core::server
