#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/mcp/http_support.h"
#include "core/mcp/transport.h"
#include "core/net/http_worker.h"
#include "core/net/sse_parser.h"
#include "core/net/url.h"
#include "core/runner/launch_plan.h"

namespace kaja::core::mcp {

/// Error::detail of the error that ends a connection whose session expired (HTTP 404 on a
/// request carrying Mcp-Session-Id) and could not be renewed. isSessionExpired() tests it.
inline constexpr std::string_view kSessionExpiredDetail = "mcp-session-expired";

/// Returns true when `error` ended a connection because its session expired for good.
/// A caller may then connect a fresh Client once; the transport already re-initialized
/// once by itself before giving up.
bool isSessionExpired(const Error& error);

/// MCP over Streamable HTTP (2025-03-26 and later; P1, U3, U7).
///
/// Each message is POSTed to the URL with `Accept: application/json, text/event-stream`;
/// the answer is a JSON body or an event stream of messages. The transport:
/// - keeps the Mcp-Session-Id from the initialize response and sends it afterwards, and
///   MCP-Protocol-Version once the initialize result names one (it reads the version from
///   the response itself, so the Client needs no extra call; setProtocolVersion() exists
///   for callers that negotiate elsewhere);
/// - renews an expired session by itself: a 404 to a request that carried a session id
///   makes it replay the Client's initialize request (swallowing the answer), send
///   notifications/initialized and retry the failed messages once; a second 404 ends the
///   connection with an error whose detail is kSessionExpiredDetail;
/// - checks every value it sends back (Mcp-Session-Id, MCP-Protocol-Version, event ids):
///   a control character, a space or an overlong value ends the connection;
/// - resumes a dropped event stream with GET and Last-Event-ID after the server's
///   `retry:` delay (never under kMinReconnectDelay, doubling with each attempt), while
///   requests on it are unanswered;
/// - POSTs at most maxRepliesInFlight replies to the server's requests at once, queues
///   maxRepliesWaiting more, and ends the connection past that;
/// - opens the optional GET stream for server-initiated messages after initialization
///   (405 means the server offers none);
/// - probes the URL with a trailing slash once when the very first POST gets 404;
/// - follows only same-origin 307/308 redirects (at most maxRedirects);
/// - turns 401/403 into "key missing or wrong" (kConnect), 5xx into an error with the
///   status and an excerpt of the body, a stall into kTimeout within `timeout`;
/// - DELETEs the session on close(), waiting at most closeTimeout however the server
///   answers.
///
/// Every body goes through parseMessages before anything else reads it, and a reader that
/// falls behind pauses the transfer (HttpWorker), so no stream can grow kaja without bound.
///
/// Any failed POST ends the whole connection (onClosed), as the Transport contract asks.
/// Every connection goes through the address guard (see HttpWorker). Header values are
/// sent, never logged or put into errors.
class HttpTransport final : public Transport, public std::enable_shared_from_this<HttpTransport> {
 public:
  /// Checks `plan.url` and returns a transport that has not sent anything yet (the
  /// network is first used by the initialize request). Returns kInvalidConfig for a URL
  /// that is not absolute http(s).
  static Result<std::shared_ptr<HttpTransport>> create(boost::asio::io_context& io,
                                                       const RemotePlan& plan,
                                                       HttpOptions options = {});
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;
  ~HttpTransport() override;

  void start(TransportHandlers handlers) override;
  void send(const Message& message) override;
  void close() override;
  [[nodiscard]] bool isOpen() const override { return !finished_; }
  [[nodiscard]] std::string name() const override { return options_.serverName; }
  [[nodiscard]] std::string describe() const override;

  /// Sets the MCP-Protocol-Version sent with every later request.
  void setProtocolVersion(std::string version) override { protocolVersion_ = std::move(version); }
  /// Sets the tools/call arguments mirrored into Mcp-Param-* headers at 2026-07-28.
  void setToolParamHeaders(ToolParamHeaders headers) override {
    toolParamHeaders_ = std::move(headers);
  }
  /// Returns the session id the server assigned ("" when none).
  [[nodiscard]] std::string sessionId() const { return sessionId_.value_or(""); }
  /// Returns the URL POSTs go to now (after a trailing-slash probe or a 308).
  [[nodiscard]] std::string url() const { return url_.text; }
  /// Returns how many times the session was renewed after expiring.
  [[nodiscard]] int sessionRenewals() const { return renewals_; }
  /// Returns how many times a dropped stream was resumed with Last-Event-ID.
  [[nodiscard]] int resumptions() const { return resumptions_; }

 private:
  enum class Kind { kPost, kReinit, kReinitNotice, kResume, kListen, kDelete };
  struct Exchange {
    Kind kind = Kind::kPost;
    std::optional<Message> message;  // what was POSTed (kept for retries)
    net::Url url;
    int redirects = 0;
    bool afterRenewal = false;  // a second session expiry is fatal
    bool probingSlash = false;
    std::string sessionSent;  // the Mcp-Session-Id it carried ("" for none)
    int resumeAttempt = 0;
    std::size_t received = 0;  // body bytes so far
    std::uint64_t transfer = 0;
    net::HttpHead head;
    bool streaming = false;
    std::string body;
    net::SseParser sse;
    std::set<std::string> waiting;  // ids (as JSON text) of requests not yet answered
    bool reply = false;             // carries a Response to a request of the server's
    std::chrono::steady_clock::time_point launched;
    int authRetries = 0;  // sent again after new credentials (RemotePlan::onAuthChallenge)
  };

  HttpTransport(boost::asio::io_context& io, net::Url url, RemotePlan plan, HttpOptions options);

  Exchange newExchange(Kind kind) const;
  void post(Message message, bool afterRenewal);
  void sendReply(const Message& message);
  void pumpReplies();
  [[nodiscard]] std::size_t repliesInFlight() const;
  bool acceptEchoed(std::string_view header, std::string_view value, std::size_t maxBytes);
  std::uint64_t launch(Exchange exchange);
  net::HttpRequest buildRequest(const Exchange& exchange) const;
  void onHead(std::uint64_t key, const net::HttpHead& head);
  void onBody(std::uint64_t key, std::string_view chunk);
  void onDone(std::uint64_t key, Result<void> result);
  void settle(Exchange exchange, Result<void> result);
  void completePost(Exchange exchange);
  /// Fails what `exchange` carried (or the connection) for its non-2xx status.
  void failOnStatus(const Exchange& exchange);
  bool deliverErrorBody(Exchange& exchange);
  void completeListen(const Exchange& exchange, const Result<void>& result);
  void dispatch(Exchange& exchange, Message message);
  void unreadableAnswer(std::uint64_t key, const Error& cause);
  void finishRenewal();
  void releaseBeforeListen();
  /// Closes the stream of the request a notifications/cancelled names (2026-07-28).
  void closeStreamOf(const Json& cancelled);
  void deliver(Message message);
  void resume(const Exchange& exchange, const std::string& why);
  void sessionExpired(Exchange exchange);
  void onRenewed(const Response& response);
  void openListenStream(std::string lastEventId, int attempt);
  void after(std::chrono::milliseconds delay, std::function<void()> work);
  void cancelAll();
  void fatal(Error error);
  void finishSoon();
  void finish();
  [[nodiscard]] Error sessionExpiredError(const std::string& why) const;

  boost::asio::io_context& io_;
  net::Url url_;
  RemotePlan plan_;
  HttpOptions options_;
  std::unique_ptr<net::HttpWorker> worker_;
  TransportHandlers handlers_;
  std::map<std::uint64_t, Exchange> exchanges_;
  /// Resumed streams waiting out their reconnect delay, by a key of their own: a cancel
  /// meanwhile takes its request off the one it would have resumed.
  std::map<std::uint64_t, std::shared_ptr<Exchange>> resuming_;
  std::uint64_t nextKey_ = 1;
  std::vector<std::shared_ptr<boost::asio::steady_timer>> timers_;
  std::unique_ptr<boost::asio::steady_timer> closeTimer_;
  ReplyQueue replies_;  // replies waiting for a free slot
  SkipWarnings skipWarnings_;

  std::optional<std::string> sessionId_;
  std::string protocolVersion_;
  ToolParamHeaders toolParamHeaders_;
  std::optional<Request> initialize_;
  bool probedSlash_ = false;
  bool renewing_ = false;
  std::deque<Message> held_;  // sent again once the session is renewed
  bool awaitingListen_ = false;
  std::deque<Message> beforeListen_;  // sent once the GET stream is open (or not coming)
  std::optional<std::uint64_t> listenKey_;
  int renewals_ = 0;
  int resumptions_ = 0;

  bool started_ = false;
  bool closing_ = false;
  bool finishPosted_ = false;
  bool finished_ = false;
  std::optional<Error> failure_;
};

}  // namespace kaja::core::mcp
