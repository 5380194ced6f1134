#pragma once

// One TCP connection of the HTTP front (Beast inside: include only from core/server/http_*).

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/server/http_front.h"

namespace kaja::core::server {

namespace http = boost::beast::http;

/// Extra response headers, name and value.
using HeaderList = std::vector<std::pair<std::string, std::string>>;

class HttpConnection;

/// What the front does with what a connection reads.
class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  /// Looks at a request's headers before its body is read; returns false after answering
  /// it (the connection then closes, the body unread).
  virtual bool admit(const std::shared_ptr<HttpConnection>& connection,
                     const http::request_parser<http::string_body>& parser) = 0;
  /// Handles a whole request; the handler answers through `connection`.
  virtual void handle(const std::shared_ptr<HttpConnection>& connection,
                      http::request<http::string_body>& request) = 0;
  /// The connection closed (counted by the front).
  virtual void closed(std::uint64_t connectionId) = 0;
};

/// Reads requests one at a time and answers each with a whole response or an SSE stream
/// (chunked). Lives while an operation of its own is pending.
class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  HttpConnection(boost::asio::ip::tcp::socket socket, HttpHandler& handler,
                 const HttpFrontOptions& options, std::uint64_t id);

  /// Starts reading the first request.
  void start();
  /// Answers the current request with `body` (a JSON-RPC object, or "") and `status`.
  /// `close` ends the connection afterwards.
  void respond(http::status status, std::string body, const HeaderList& headers = {},
               bool close = false);
  /// Answers the current request with an SSE stream; events follow through pushEvent.
  /// `standing`: the stream answers no request in progress (a GET stream, a listen), so at
  /// the connection limit it may be closed for a new client; it can be opened again.
  void beginSse(const HeaderList& headers, bool standing = false);
  /// Queues SSE text (whole events). Past maxQueuedBytes unsent, the connection is dropped.
  void pushEvent(const std::string& text);
  /// Waits for the reply to the current request (given later with respond()), watching
  /// for the client to go away meanwhile (then `onBroken` runs).
  void awaitReply();
  /// Ends the SSE stream once everything queued is written.
  void endSse();
  /// Closes the connection now; `onBroken` runs if set.
  void close();
  /// Runs once if the connection closes before an SSE stream it carries has ended.
  void setOnBroken(std::function<void()> onBroken) { onBroken_ = std::move(onBroken); }
  [[nodiscard]] bool isOpen() const { return open_; }
  /// True while the connection waits for a request or reads one: no request of its is
  /// being handled and no stream of its is open, so closing it loses nothing.
  [[nodiscard]] bool isBetweenRequests() const { return open_ && parser_.has_value(); }
  /// True while it carries a standing SSE stream (see beginSse), which may give way.
  [[nodiscard]] bool isStandingStream() const { return open_ && streaming_ && standing_; }
  [[nodiscard]] std::uint64_t id() const { return id_; }

 private:
  void readRequest();
  void onHeader(const boost::system::error_code& ec);
  void onBody(const boost::system::error_code& ec);
  /// Answers 413: the body passed maxMessageBytes (announced, or while it was read).
  /// Answers 400 for a request HTTP cannot read, or closes when the client went away.
  void refuseMalformed(const boost::system::error_code& ec);
  void refuseTooLarge();
  void flush();
  void afterResponse();
  void watchPeer();
  void keepAlive();

  boost::beast::tcp_stream stream_;
  HttpHandler& handler_;
  const HttpFrontOptions& options_;
  std::uint64_t id_;
  boost::beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool keepAliveRequested_ = true;
  bool open_ = true;

  // SSE state.
  std::shared_ptr<http::response<http::empty_body>> sseHead_;
  std::optional<http::response_serializer<http::empty_body>> sseSerializer_;
  bool streaming_ = false;
  bool standing_ = false;  ///< the stream answers no request in progress: it may give way
  bool awaiting_ = false;
  bool ending_ = false;
  bool writing_ = false;
  std::uint64_t streamGeneration_ = 0;
  std::string queue_;
  std::string inFlight_;
  boost::asio::steady_timer keepAliveTimer_;
  std::function<void()> onBroken_;
};

}  // namespace kaja::core::server
