#pragma once

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/mcp/json_rpc.h"
#include "core/mcp/transport.h"
#include "core/net/address_guard.h"
#include "core/net/http_worker.h"
#include "core/net/url.h"
#include "core/runner/launch_plan.h"

namespace kaja::core::mcp {

/// Settings for one remote connection, Streamable HTTP or legacy HTTP+SSE.
struct HttpOptions {
  std::string serverName = "server";  ///< used in every error ("server 'context7'")
  /// Where the server runs when not at its own address ("the sandbox at https://…"),
  /// named in every error after the server's name.
  std::string via;
  /// What to do when the server refuses kaja's credentials (401/403) when they are not
  /// the ability's own key; empty means "set it with `kaja key set`".
  std::string credentialsHint;
  /// Which addresses the server may have. The default refuses loopback and private
  /// addresses (right for abilities from a registry); set allowPrivate for ones the user
  /// wrote.
  net::AddressPolicy addressPolicy;
  /// Per POST: connect, headers and the whole body (U3). An event-stream response is
  /// instead limited by streamIdleTimeout.
  std::chrono::milliseconds timeout{15000};
  /// An event stream that carries no byte for this long is treated as dropped.
  std::chrono::milliseconds streamIdleTimeout{std::chrono::minutes(5)};
  /// How long close() waits for the DELETE that ends the session (best effort).
  std::chrono::milliseconds closeTimeout{2000};
  /// Reconnect delay when the server sent no `retry:`; a server's retry is held between
  /// kMinReconnectDelay and 30 s, and doubles with each attempt that follows a failed one.
  std::chrono::milliseconds defaultRetry{1000};
  std::size_t maxBodyBytes = 16UL * 1024 * 1024;  ///< a larger JSON response is an error
  int maxRedirects = 3;                           ///< same-origin 307/308 followed per request (U7)
  /// Reconnects with Last-Event-ID for one dropped stream; for the GET stream, reconnects in
  /// a row that each lasted less than kHealthyStream.
  int maxResumeAttempts = 3;
  /// Replies to the server's own requests (ping, roots/list, …) POSTed at once; more wait.
  int maxRepliesInFlight = 4;
  /// Replies that may wait behind those; a server that asks faster than kaja can answer
  /// past this ends its connection, instead of growing kaja's queue and fds.
  std::size_t maxRepliesWaiting = 64;
  bool openGetStream = true;  ///< Streamable HTTP: listen for server-initiated messages
  /// After notifications/initialized, later messages wait at most this long for the GET
  /// stream to open, so a server request sent on it right after the next call is not lost.
  std::chrono::milliseconds listenWait{1000};
};

/// Parses a remote ability's URL; an error names the server in its context.
Result<net::Url> parseServerUrl(const std::string& url, const std::string& serverName);

/// Returns `url` for messages: scheme, host, port and path, never the query (which may
/// carry a key).
std::string displayUrl(const net::Url& url);

/// Returns the Error for an HTTP status that ends the connection: 401/403 name the key
/// (`kaja key set NAME`, or `credentialsHint` when given), 404 the URL, 5xx the status and
/// a short excerpt of `body`.
/// A 401/403 whose `challenge` (WWW-Authenticate) asks for an OAuth sign-in (a Bearer
/// challenge naming resource metadata) says to run `kaja login`, unless a hint is given.
/// The Error's httpStatus is `status`.
Error httpStatusError(const std::string& who, const std::string& serverName,
                      std::string_view method, const net::Url& url, long status,
                      std::string_view body, std::string_view credentialsHint = {},
                      std::string_view challenge = {});

/// Decides a redirect (U7): a same-origin 307/308 within `maxRedirects` returns the URL
/// to repeat the request at; 301/302/303, another origin or too many redirects return an
/// Error naming the Location.
Result<net::Url> redirectTarget(const std::string& who, const std::string& serverName,
                                const net::Url& from, long status, std::string_view location,
                                int redirectsSoFar, int maxRedirects);

/// Returns true for the statuses redirectTarget() handles.
/// Fails only the request a POST carried, through handlers.onRequestFailed, and returns true;
/// returns false when `error` should end the whole connection instead: the POST carried no
/// request, the session was not up yet (initialize, server/discover), the key was refused
/// (`status` 401, 403), which every request would meet again, or no handler is set. One
/// tool crashing its handler need not end every other call. `status` is 0 for a failure
/// that is not an HTTP status (a dropped stream). An error status the server itself sent
/// (any but 404 and a proxy's 407, 502, 503 and 504) fails the request as kProtocol, not
/// kConnect: the server was reached.
bool failRequestAlone(const TransportHandlers& handlers, const std::optional<Message>& posted,
                      long status, const Error& error);

/// Returns true when a request that got `status` should go to `plan.onAuthChallenge`: a
/// 401 or 403, a handler set, and fewer than kMaxAuthRetries retries of it so far.
bool wantsAuthorization(const RemotePlan& plan, long status, int retriesSoFar);

/// Hands the 401/403 answer `head` to `plan.onAuthChallenge` and calls `then(retry)` on
/// `io`'s thread when it answers, unless `alive` has expired by then (the transport is gone).
void askAuthorization(boost::asio::io_context& io, const RemotePlan& plan,
                      const net::HttpHead& head, std::weak_ptr<void> alive,
                      std::function<void(bool retry)> then);

/// Returns the Error a connection ends with when it was closed on purpose.
Error closedError(const std::string& who, const std::string& serverName);

/// Returns the Error for a response body that parseMessages could not read (`cause` says
/// why), quoting the start of `body`.
Error unreadableBodyError(const std::string& who, const std::string& serverName,
                          std::string_view body, const Error& cause);

/// Returns the Error for an event stream that broke the SSE format (`cause` says how).
Error streamFormatError(const std::string& who, const std::string& serverName, const Error& cause);

inline bool isRedirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

/// Returns the Error for a request that failed below HTTP (refused, timed out, reset).
Error requestError(const std::string& who, const std::string& serverName, std::string_view method,
                   const net::Url& url, const Error& cause);

/// The shortest wait before reconnecting a stream, whatever `retry:` the server asked for.
inline constexpr std::chrono::milliseconds kMinReconnectDelay{250};
/// A GET stream that stayed open this long was healthy: its reconnect budget starts again.
inline constexpr std::chrono::seconds kHealthyStream{10};
/// The longest Mcp-Session-Id or MCP-Protocol-Version kaja sends back.
inline constexpr std::size_t kMaxSessionIdBytes = 256;
inline constexpr std::size_t kMaxVersionBytes = 64;

/// Returns the reconnect delay for a stream's `attempt` (1 for the first): the server's
/// `retry` or `fallback`, held between kMinReconnectDelay and 30 s, doubled for each
/// attempt after the first (and still at most 30 s).
std::chrono::milliseconds reconnectDelay(std::optional<std::chrono::milliseconds> retry,
                                         std::chrono::milliseconds fallback, int attempt = 1);

/// Checks a value a server sent that kaja will send back in header `header`: it must be 1
/// to `maxBytes` visible ASCII characters. Returns kProtocol with one sentence that names
/// the header, never the value, when it is not.
Result<void> checkEchoedHeader(const std::string& who, const std::string& serverName,
                               std::string_view header, std::string_view value,
                               std::size_t maxBytes);

/// Returns the Error that ends a connection whose server asked more than kaja answers:
/// `waiting` replies were queued behind the ones in flight.
Error replyFloodError(const std::string& who, const std::string& serverName, std::size_t waiting);

/// The replies kaja owes a server over HTTP: at most `maxInFlight` posted at once (a server
/// that floods requests must not make kaja open a connection per reply) and `maxWaiting`
/// queued behind them. The transport counts what is in flight; this keeps the queue.
class ReplyQueue {
 public:
  /// What to do with one reply.
  enum class Verdict { kPostNow, kQueued, kFlooded };

  ReplyQueue(int maxInFlight, std::size_t maxWaiting)
      : limit_(static_cast<std::size_t>(std::max(1, maxInFlight))), maxWaiting_(maxWaiting) {}

  /// Returns kPostNow while fewer than the limit are `inFlight`; otherwise queues `message`
  /// (kQueued), or refuses it when the queue is full (kFlooded: end the connection).
  Verdict offer(const Message& message, std::size_t inFlight) {
    if (inFlight < limit_) return Verdict::kPostNow;
    if (waiting_.size() >= maxWaiting_) return Verdict::kFlooded;
    waiting_.push_back(message);
    return Verdict::kQueued;
  }
  /// Returns the next queued reply when fewer than the limit are `inFlight`, else nullopt.
  std::optional<Message> take(std::size_t inFlight) {
    if (waiting_.empty() || inFlight >= limit_) return std::nullopt;
    Message next = std::move(waiting_.front());
    waiting_.pop_front();
    return next;
  }
  /// Forgets every queued reply.
  void clear() { waiting_.clear(); }
  /// Returns how many may wait.
  [[nodiscard]] std::size_t maxWaiting() const { return maxWaiting_; }

 private:
  std::size_t limit_;
  std::size_t maxWaiting_;
  std::deque<Message> waiting_;
};

/// Counts events that were not JSON-RPC and returns the warning to give for one more, or
/// "" once kMaxSkipWarnings were given (the last of them says later ones are silent), so a
/// flood of junk events cannot flood the output.
class SkipWarnings {
 public:
  static constexpr int kMaxSkipWarnings = 3;
  /// Returns the warning for an event with `data` from `who`, or "".
  std::string next(const std::string& who, std::string_view data);

 private:
  int given_ = 0;
};

}  // namespace kaja::core::mcp
