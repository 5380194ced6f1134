#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/mcp/request_ledger.h"
#include "core/mcp/transport.h"
#include "core/mcp/types.h"

namespace kaja::core::mcp {

/// The _meta key with which a server tags each notification of a subscriptions/listen stream
/// (2026-07-28): the id of the listen request.
inline constexpr const char* kMetaSubscriptionId = "io.modelcontextprotocol/subscriptionId";

/// The _meta key of a 2026-07-28 request that asks for its log messages, from a level up.
inline constexpr const char* kMetaLogLevel = "io.modelcontextprotocol/logLevel";

/// Settings for one Client.
struct ClientOptions {
  std::string clientName = "kaja";
  std::string clientVersion = KAJA_VERSION;
  std::chrono::milliseconds connectTimeout{10000};  ///< connect + initialize (K9)
  std::chrono::milliseconds requestTimeout{15000};  ///< default per request (U6)
  /// Offer 2026-07-28 first: send server/discover and, when the server lists that version,
  /// speak it statelessly (per-request _meta, no initialize). Any error or older answer
  /// falls back to the initialize handshake (2025-11-25 and lower), as when false.
  bool discover = false;
  /// The largest tools/list page kaja reads (U6); a larger one fails the listing.
  std::size_t maxListPageBytes = 4UL * 1024 * 1024;
  /// The most bytes, over all its pages, of one listing of tools.
  std::size_t maxListingBytes = 16UL * 1024 * 1024;
  /// The most server requests kaja answers at once (sampling, elicitation); more are
  /// answered with an error at once.
  std::size_t maxServerRequestsInFlight = 16;
  /// Warnings about one server past this many are not passed on (one last warning says so).
  std::size_t maxWarnings = 20;
  /// However much progress it reports, a call whose timeout restarts on progress ends this
  /// long after it was sent (the spec's maximum timeout), so a server cannot hold a call, and
  /// whatever it holds for it, for ever; 0: no limit.
  std::chrono::milliseconds progressLimit{std::chrono::hours(1)};
};

/// Settings for one tools/call.
struct CallOptions {
  /// 0: the client's requestTimeout. One deadline for the whole call: at 2026-07-28 every
  /// round of input_required shares it.
  std::chrono::milliseconds timeout{0};
  /// Called on each notifications/progress for this call; asks the server for progress.
  std::function<void(const Progress&)> onProgress;
  /// Restart the timeout on each progress update, so a long call that keeps reporting
  /// is not cut off (the spec's resetTimeoutOnProgress).
  bool resetTimeoutOnProgress = false;
  /// At 2026-07-28, the client capabilities this call's _meta declares instead of kaja's
  /// own (a gateway declares what its client can answer); null: kaja's own.
  Json capabilities;
  /// At 2026-07-28, the log level this call names instead of the one logging/setLevel chose;
  /// "" names none, so the server sends no log messages for it.
  std::optional<std::string> logLevel;
};

/// An MCP client over any Transport: the initialize handshake, tools, ping, progress,
/// cancellation, logging, and answers to the server's own requests (roots, sampling,
/// elicitation, ping). Asynchronous: every method returns at once and its callback runs
/// later on the io_context's thread, exactly once. Not thread-safe: use it only from
/// that thread (BlockingClient wraps it for other threads). Many Clients may share one
/// io_context. Hold it by std::shared_ptr; destroying it closes the transport.
class Client : public std::enable_shared_from_this<Client> {
 public:
  /// Callback for a request's result.
  using ResultCallback = std::function<void(Result<Json>)>;
  /// Answers one server→client request: call `respond` once, now or later, with the
  /// result object or an Error (sent as a JSON-RPC error).
  using RequestHandler = std::function<void(const Json& params, const InputOrigin& origin,
                                            std::function<void(Result<Json>)> respond)>;

  /// Returns a client that will talk over `transport` (not yet started).
  static std::shared_ptr<Client> create(boost::asio::io_context& io,
                                        std::shared_ptr<Transport> transport,
                                        ClientOptions options = {});
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client();

  /// Serves roots/list from `provider` and announces `roots: {listChanged: true}`. Set it
  /// before connect() for the capability to be offered.
  void setRootsProvider(std::function<std::vector<Root>()> provider);
  /// Answers sampling/createMessage with `handler` (else -32601). Set before connect().
  void setSamplingHandler(RequestHandler handler);
  /// Answers elicitation/create with `handler` (else -32601). Set before connect().
  void setElicitationHandler(RequestHandler handler);
  /// Receives every notification from the server, including those handled here.
  void setNotificationHandler(std::function<void(const Notification&)> handler);
  /// Receives the server's notifications/message logging.
  void setLogHandler(std::function<void(const LogMessage&)> handler);
  /// Receives transport warnings (stray stdout lines) and ignored protocol oddities.
  void setWarningHandler(std::function<void(const std::string&)> handler);
  /// Receives the new list after notifications/tools/list_changed was followed.
  void setToolsChangedHandler(std::function<void(const std::vector<Tool>&)> handler);
  /// Receives why the connection ended (server exit, protocol error, close()).
  void setClosedHandler(std::function<void(const Error&)> handler);

  /// Starts the transport, sends initialize (offering 2025-11-25), checks the server's
  /// version and sends notifications/initialized. With ClientOptions::discover it first
  /// tries server/discover at 2026-07-28 (see there). Fails with kTimeout after
  /// connectTimeout, kProtocol for an unsupported version, or the transport's error.
  void connect(std::function<void(Result<ServerInfo>)> done);

  /// Lists every tool, following nextCursor across pages, and caches the list.
  void listTools(std::function<void(Result<std::vector<Tool>>)> done);

  /// Calls tool `name`. On timeout sends notifications/cancelled and fails with kTimeout.
  /// Returns the request id, which cancel() accepts. At 2026-07-28 a call the server answers
  /// with input_required takes a new request per round; it keeps its first request's id.
  std::int64_t callTool(const std::string& name, Json arguments, CallOptions options,
                        std::function<void(Result<ToolResult>)> done);

  /// Cancels a pending request: sends notifications/cancelled and fails its callback with
  /// kRefused. For a call with rounds of input_required, the round in flight is the one
  /// named, and none is while kaja gathers the inputs. Returns false when `requestId` is not
  /// pending.
  bool cancel(std::int64_t requestId, const std::string& reason = "cancelled by the user");

  /// Sends ping; succeeds on any result.
  void ping(std::function<void(Result<void>)> done);

  /// Sends any request. `timeout` 0 means the client's default. Returns its id.
  std::int64_t request(const std::string& method, Json params, std::chrono::milliseconds timeout,
                       ResultCallback done, std::function<void(const Progress&)> onProgress = {});

  /// Sends any notification (dropped when not connected).
  void notify(const std::string& method, Json params = Json());

  /// Tells the server the roots changed (notifications/roots/list_changed).
  void notifyRootsChanged();

  /// Ends the connection gracefully; pending requests fail, then `done` runs.
  void close(std::function<void()> done = {});

  /// Returns true when connect() settled on the stateless 2026-07-28 protocol.
  [[nodiscard]] bool isStateless() const { return stateless_; }
  /// Returns true between a successful connect() and the end of the connection.
  [[nodiscard]] bool isReady() const { return state_ == State::kReady; }
  /// Returns the initialize result (empty before connect succeeds).
  [[nodiscard]] const ServerInfo& serverInfo() const { return serverInfo_; }
  /// Returns the tools from the last successful listTools().
  [[nodiscard]] const std::vector<Tool>& tools() const { return tools_; }
  /// Returns how long the server said its last tool listing may be reused (a 2026-07-28
  /// result's ttlMs), or nullopt when it said nothing.
  [[nodiscard]] std::optional<std::chrono::milliseconds> toolsTtl() const { return toolsTtl_; }
  /// Returns the transport's name for errors ("server 'time'").
  [[nodiscard]] std::string describe() const { return transport_->describe(); }

 private:
  enum class State { kIdle, kConnecting, kReady, kClosed };
  using ConnectDone = std::shared_ptr<std::function<void(Result<ServerInfo>)>>;
  using Clock = std::chrono::steady_clock;
  struct Pending {
    std::string method;
    std::string label;     ///< for errors; "" means describe() derives it
    std::string toolName;  ///< for tools/call, so describe() can say "tools/call 'echo'"
    ResultCallback done;
    std::function<void(const Progress&)> onProgress;
    std::chrono::milliseconds timeout{0};  ///< <= 0: none
    /// The whole call's time when this request has only what is left of it (a later round of
    /// input_required), for the timeout error; 0 when it is `timeout`.
    std::chrono::milliseconds budget{0};
    bool resetTimeoutOnProgress = false;
    /// The latest its deadline may move to on progress (ClientOptions::progressLimit).
    std::chrono::steady_clock::time_point latest = std::chrono::steady_clock::time_point::max();

    /// Returns the request's name for errors, such as "tools/call 'echo'".
    [[nodiscard]] std::string describe() const;
  };
  /// A call at 2026-07-28 that may take several requests, one per round of input_required,
  /// known by its first request's id.
  struct InputCall {
    std::string label;          ///< for errors, such as "tools/call 'echo'"
    ResultCallback done;        ///< the caller's callback, run once when the call ends
    std::int64_t inFlight = 0;  ///< the round the server has; 0 while kaja gathers its inputs
  };

  Client(boost::asio::io_context& io, std::shared_ptr<Transport> transport, ClientOptions options);

  std::int64_t startRequest(const std::string& method, std::string label, Json params,
                            std::chrono::milliseconds timeout, ResultCallback done,
                            std::function<void(const Progress&)> onProgress,
                            bool resetTimeoutOnProgress = false, std::string toolName = {},
                            std::int64_t id = 0);
  void onMessage(Message message);
  void onResponse(Response&& response);
  void onRequestFailed(const Json& id, const Error& error);
  void onServerRequest(const Request& request);
  void onNotification(const Notification& notification);
  void onTimeout(std::int64_t id, const Pending& pending);
  void onTransportClosed(const Error& error);
  void onInitialized(Result<Json> result, const std::function<void(Result<ServerInfo>)>& done);
  void sendInitialize(const ConnectDone& once);
  // 2026-07-28 (client_stateless.cpp).
  void sendDiscover(const ConnectDone& once, int attempt);
  void onDiscovered(Result<Json> result, const ConnectDone& once, int attempt);
  [[nodiscard]] Json withMeta(Json params) const;
  std::int64_t requestWithInputs(const std::string& method, std::string label, Json params,
                                 CallOptions options, ResultCallback done);
  void sendRound(std::int64_t callId, int round, const std::string& method, Json params,
                 CallOptions options, Clock::time_point deadline);
  void onRoundAnswered(std::int64_t callId, int round, const std::string& method, Json params,
                       CallOptions options, Clock::time_point deadline, Result<Json> result);
  void endInputCall(std::int64_t callId, Result<Json> result);
  void answerInputs(std::int64_t callId, const Json& inputRequests,
                    std::function<void(Result<Json>)> done);
  void applyToolHeaders(std::vector<Tool>& tools);
  /// Leaves out every tool whose name the listing holds more than once, with a warning.
  void dropDuplicateTools(std::vector<Tool>& tools);
  // 2026-07-28 has no session to subscribe or set a log level on (client_listen.cpp): a
  // subscription is a filter of the one subscriptions/listen stream, and the log level goes
  // in each request's _meta.
  /// Opens the listen stream when something wants it and none is open.
  void listen();
  /// Closes the open listen stream (the server is told) and opens one with today's filter.
  void relisten();
  /// relisten() once the handler running now returns, so that the subscribes one request
  /// makes reopen the stream once.
  void relistenSoon();
  /// Fails every subscribe waiting for an acknowledgement (the connection closed).
  void failListenWaiters(const Error& error);
  /// Settles the subscribes whose change the last acknowledged filter holds.
  void settleAcknowledged();
  /// The open stream failed (refused, ended or never acknowledged): settles the waiters
  /// already in effect and the removals it carried, fails the additions it carried and takes
  /// those resources out of the filter. Returns how many it took out. Only waiters whose
  /// deadline is at or before `due` are settled; the rest keep waiting.
  std::size_t failCarried(const Error& error, Clock::time_point due = Clock::time_point::max());
  /// Waits for the earliest deadline of the waiters, then gives up on those due.
  void armListenAckTimer();
  void stopListening();
  [[nodiscard]] Json listenFilter() const;
  void onListenEnded(Result<Json> result);
  /// The open stream's acknowledgement came (onNotification checked its subscription id).
  void onListenAcknowledged();
  void reopenListenLater(const Error& why);
  std::int64_t subscribe(const std::string& method, const Json& params, ResultCallback done);
  std::int64_t setLogLevel(const Json& params, ResultCallback done);
  void listPage(std::optional<std::string> cursor, const std::shared_ptr<std::vector<Tool>>& tools,
                int pages, std::function<void(Result<std::vector<Tool>>)> done,
                std::size_t bytesSoFar = 0);
  void refreshTools();
  void respond(const Json& id, Result<Json> result);
  void warn(const std::string& text);
  void onUnmatched(const Response& response);
  void postFailure(ResultCallback done, Error error);
  [[nodiscard]] Json clientCapabilities() const;
  [[nodiscard]] Error makeError(ErrorCode code, std::string message) const;

  boost::asio::io_context& io_;
  std::shared_ptr<Transport> transport_;
  ClientOptions options_;
  State state_ = State::kIdle;
  /// Requests sent and not yet answered, with their deadlines and the ids given up on.
  RequestLedger<Pending> pending_;
  std::map<std::int64_t, InputCall> inputCalls_;  ///< by the id callTool() returned
  boost::asio::steady_timer connectTimer_;
  ServerInfo serverInfo_;
  std::vector<Tool> tools_;
  std::optional<std::chrono::milliseconds> toolsTtl_;
  bool toolsListed_ = false;
  bool stateless_ = false;
  bool refreshing_ = false;
  bool refreshAgain_ = false;
  boost::asio::steady_timer refreshTimer_;  ///< a re-listing held back by kMinToolRefreshGap
  bool refreshTimerArmed_ = false;
  Clock::time_point lastRefresh_;
  bool listening_ = false;                  ///< a subscriptions/listen stream is open (2026-07-28)
  std::int64_t listenId_ = 0;               ///< its request id
  std::uint64_t listenGeneration_ = 0;      ///< bumped when kaja itself ends a listen stream
  std::set<std::string> subscribedUris_;    ///< the listen filter's resourceSubscriptions
  std::set<std::string> listenUris_;        ///< those of the open stream, as sent
  std::set<std::string> acknowledgedUris_;  ///< those of the last stream the server acknowledged
  bool relistenPosted_ = false;
  /// A resources/subscribe or unsubscribe waiting for a stream with its change to be
  /// acknowledged.
  struct ListenWaiter {
    std::string uri;
    bool adding = true;
    ResultCallback done;
    /// When it is given up unacknowledged: its own request timeout, however many reopens
    /// come after it.
    Clock::time_point deadline;
  };
  std::vector<ListenWaiter> listenWaiters_;
  boost::asio::steady_timer listenAckTimer_;
  std::string logLevel_;                   ///< from logging/setLevel; sent in each request's _meta
  boost::asio::steady_timer listenTimer_;  ///< the wait before a closed listen stream reopens
  int listenDrops_ = 0;                    ///< listen streams closed in a row, for the backoff
  Clock::time_point listenOpened_;
  bool relistOnListen_ = false;  ///< re-list the tools once the reopened stream is acknowledged
  std::size_t warnings_ = 0;
  std::size_t lastResponseBytes_ = 0;  ///< the size of the reply being handed to its callback
  std::size_t serverRequestsInFlight_ = 0;
  std::optional<Error> closedError_;
  std::vector<std::function<void()>> closeWaiters_;

  std::function<std::vector<Root>()> rootsProvider_;
  RequestHandler samplingHandler_;
  RequestHandler elicitationHandler_;
  std::function<void(const Notification&)> notificationHandler_;
  std::function<void(const LogMessage&)> logHandler_;
  std::function<void(const std::string&)> warningHandler_;
  std::function<void(const std::vector<Tool>&)> toolsChangedHandler_;
  std::function<void(const Error&)> closedHandler_;
};

}  // namespace kaja::core::mcp
