#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/server/session.h"

namespace boost::asio {
class io_context;
}

namespace kaja::core::server {

/// What a router sees of one request, before its body is read.
struct RouteRequest {
  std::string_view method;  ///< "POST", "GET", "DELETE", …
  std::string_view path;    ///< the target without its query
  /// Returns a header's value, "" when absent.
  std::function<std::string(std::string_view name)> header;
};

/// A router's answer for one request: serve MCP at `endpoint` with `sessions`, or answer
/// with `status` and serve nothing.
struct RouteDecision {
  unsigned status = 0;  ///< non-zero: the answer (with `body`, a JSON text, and `headers`)
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  /// Which endpoint the request is for. A session belongs to the endpoint that made it, and
  /// a request for another endpoint that names it gets 404.
  std::string endpoint;
  SessionFactory sessions;  ///< makes the session of a new client of `endpoint`
  /// Whom the session counts against for HttpFrontOptions::maxSessionsPerOwner (a user);
  /// "" counts against no one.
  std::string owner;
};

/// Decides where each request of an HTTP front goes. It is called once when a request's
/// headers arrive and again before the request is handled, so it must have no side effects
/// for the requests it serves (an answer it gives is given once).
using Router = std::function<RouteDecision(const RouteRequest& request)>;

/// Where an HTTP front listens and what it accepts.
struct HttpFrontOptions {
  std::string host = "127.0.0.1";  ///< an IP address to bind
  std::uint16_t port = 0;          ///< 0 picks a free port (see HttpFront::port())
  std::string path = "/mcp";       ///< the MCP endpoint
  /// When set, decides every request in place of `path` and `bearerToken`, and the front's
  /// own session factory is not used: many endpoints on one listener (the sandbox worker's
  /// /users/<user>/abilities/<ability>/mcp).
  Router router;
  /// When set, every request must carry `Authorization: Bearer <token>` (else 401).
  std::string bearerToken;
  /// Origins allowed besides loopback ones: a host ("app.example") or a whole origin
  /// ("https://app.example"). A request with any other Origin header gets 403.
  std::vector<std::string> allowedOrigins;
  std::size_t maxMessageBytes = 4UL * 1024 * 1024;  ///< a larger body gets 413
  std::size_t maxHeaderBytes = 16UL * 1024;         ///< larger headers get 431
  std::size_t maxConnections = 256;                 ///< more are closed at once
  std::size_t maxSessions = 1024;  ///< initialize past this gets 503 until one ends
  /// With a router: one owner's sessions past this get 429 until one ends (0: no limit),
  /// so that one user cannot take every session.
  std::size_t maxSessionsPerOwner = 0;
  /// A connection silent this long between or inside requests is closed.
  std::chrono::milliseconds idleTimeout{std::chrono::seconds(60)};
  /// A stream whose client has not taken a write this long is dropped.
  std::chrono::milliseconds writeTimeout{std::chrono::seconds(30)};
  /// A session without requests or open streams this long is ended.
  std::chrono::milliseconds sessionIdle{std::chrono::minutes(30)};
  /// At maxSessions, a session idle at least this long may be ended for a new one; a
  /// younger one (its client may be about to open its stream) never is.
  std::chrono::milliseconds sessionGrace{std::chrono::seconds(10)};
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
