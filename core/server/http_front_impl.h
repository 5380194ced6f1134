#pragma once

// The inside of HttpFront: sessions, streams and the routes (include only from
// core/server/http_*.cpp).

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>

#include "core/server/http_connection.h"
#include "core/server/http_front.h"

namespace kaja::core::server {

/// One SSE event kept for replay: its sequence number in its stream and its whole text.
struct StreamEvent {
  std::uint64_t seq = 0;
  std::string text;
};

/// One logical stream of a session: the reply to one POST (a request, or a batch) or the
/// session's own GET stream. Its connection may come and go (Last-Event-ID resumes it).
struct ReplyStream {
  std::uint64_t number = 0;  ///< unique in the front; the first part of its event ids
  bool standalone = false;   ///< the session's GET stream
  bool json = false;         ///< the client accepts only JSON: one body, no events
  bool batch = false;        ///< the POST was a batch: a JSON reply is an array
  bool withIds = true;       ///< events carry ids (not for 2026-07-28)
  /// A 2026-07-28 SSE reply whose HTTP status waits for its first message: an error
  /// response alone goes back as one JSON body with the status it calls for.
  bool deferred = false;
  /// A stream that stays open for what comes, a 2026-07-28 subscriptions/listen: at the
  /// connection limit it may give way, as a GET stream may.
  bool standing = false;
  std::set<std::string> pending;  ///< ids (as JSON text) of requests still unanswered
  std::vector<mcp::Json> jsonReplies;
  std::deque<StreamEvent> replay;
  std::size_t replayBytes = 0;
  std::uint64_t nextSeq = 1;
  std::uint64_t delivered = 0;  ///< the last seq queued on a connection
  bool complete = false;        ///< every response is in
  bool evicted = false;         ///< dropped from its session's streams: keeps no replay
  std::shared_ptr<HttpConnection> connection;
};

/// One client session: a 2025 session (with an Mcp-Session-Id), or one 2026-07-28 request.
struct SessionState {
  std::string id;        ///< the Mcp-Session-Id, or "" when stateless
  std::string endpoint;  ///< the router's endpoint that made it ("" without a router)
  std::string owner;     ///< whom it counts against ("" for no one)
  std::uint64_t key = 0;
  bool stateless = false;
  bool ended = false;
  std::string protocolVersion;  ///< as negotiated by initialize, when seen
  std::string initializeKey;    ///< the id (as JSON text) of the initialize request
  std::shared_ptr<Session> session;
  std::map<std::uint64_t, std::shared_ptr<ReplyStream>> streams;
  std::unordered_map<std::string, std::shared_ptr<ReplyStream>> byRequest;
  std::shared_ptr<ReplyStream> standalone;
  std::chrono::steady_clock::time_point lastActive = std::chrono::steady_clock::now();
};

struct HttpFront::Impl final : HttpHandler, std::enable_shared_from_this<HttpFront::Impl> {
  Impl(boost::asio::io_context& io, SessionFactory factory, HttpFrontOptions options)
      : io(io),
        factory(std::move(factory)),
        options(std::move(options)),
        acceptor(io),
        sweepTimer(io) {}

  // Listening (http_front.cpp).
  void accept();
  void sweep();
  void stop();

  // Routes (http_routes.cpp).
  bool admit(const std::shared_ptr<HttpConnection>& connection,
             const http::request_parser<http::string_body>& parser) override;
  void handle(const std::shared_ptr<HttpConnection>& connection,
              http::request<http::string_body>& request) override;
  /// At the connection limit: closes the oldest connection that has no request in
  /// progress, else the oldest standing stream (a GET stream or a listen), if there is one.
  void makeRoom();
  /// Answers a connection over the limit with `reply` (a whole HTTP response) and closes it.
  void refuseBusy(const std::shared_ptr<boost::asio::ip::tcp::socket>& socket,
                  const std::string& reply);
  /// Refused connections still draining (see refuseBusy).
  std::shared_ptr<std::size_t> drainingCount = std::make_shared<std::size_t>(0);
  /// At the session limit: ends the session that has waited longest with no request in
  /// progress and no open stream, if there is one. Returns true when it ended one.
  bool makeSessionRoom();
  void closed(std::uint64_t connectionId) override { connections.erase(connectionId); }
  RouteDecision route(const http::request_header<>& request) const;
  std::shared_ptr<SessionState> findSession(const std::string& id,
                                            const RouteDecision& route) const;
  bool ownerFull(const std::shared_ptr<HttpConnection>& connection, const RouteDecision& route);
  void handlePost(const std::shared_ptr<HttpConnection>& connection,
                  http::request<http::string_body>& request, const RouteDecision& route);
  void handleStateless(const std::shared_ptr<HttpConnection>& connection,
                       const http::request<http::string_body>& request, mcp::Message message,
                       const RouteDecision& route);
  void handleGet(const std::shared_ptr<HttpConnection>& connection,
                 const http::request<http::string_body>& request, const RouteDecision& route);
  void handleDelete(const std::shared_ptr<HttpConnection>& connection,
                    const http::request<http::string_body>& request, const RouteDecision& route);
  void openReply(const std::shared_ptr<HttpConnection>& connection,
                 const std::shared_ptr<SessionState>& state, std::vector<mcp::Message> messages,
                 bool sse, bool batch, const HeaderList& headers, const std::string& version);

  // Sessions and streams (http_streams.cpp).
  std::shared_ptr<SessionState> newSession(bool stateless, const RouteDecision& route);
  void deliver(const std::shared_ptr<SessionState>& state, mcp::Json message,
               const mcp::Json& relatedTo);
  void pushEvent(ReplyStream& stream, const mcp::Json& message);
  void limitStreams(SessionState& state);
  void attach(const std::shared_ptr<SessionState>& state,
              const std::shared_ptr<ReplyStream>& stream,
              const std::shared_ptr<HttpConnection>& connection, std::uint64_t after);
  void completeStream(const std::shared_ptr<SessionState>& state,
                      const std::shared_ptr<ReplyStream>& stream);
  void detach(const std::weak_ptr<SessionState>& state, const std::weak_ptr<ReplyStream>& stream);
  void endSession(std::shared_ptr<SessionState> state);  // by value: it erases the map's copy
  void receiveAll(const std::shared_ptr<SessionState>& state, std::vector<mcp::Message> messages);

  boost::asio::io_context& io;
  SessionFactory factory;
  HttpFrontOptions options;
  boost::asio::ip::tcp::acceptor acceptor;
  boost::asio::steady_timer sweepTimer;
  std::uint16_t boundPort = 0;
  bool stopped = false;
  std::uint64_t nextConnection = 1;
  std::uint64_t nextStream = 1;
  std::uint64_t nextSessionKey = 1;
  std::unordered_map<std::uint64_t, std::weak_ptr<HttpConnection>> connections;
  std::unordered_map<std::string, std::shared_ptr<SessionState>> sessions;  ///< by id
  std::unordered_map<std::uint64_t, std::shared_ptr<SessionState>> statelessSessions;
  std::unordered_map<std::string, std::size_t> ownerSessions;  ///< open sessions per owner
};

}  // namespace kaja::core::server
