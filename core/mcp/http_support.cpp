#include "core/mcp/http_support.h"

#include <algorithm>
#include <boost/asio/post.hpp>

#include "core/mcp/json_rpc.h"
#include "core/net/www_authenticate.h"

namespace kaja::core::mcp {

Result<net::Url> parseServerUrl(const std::string& url, const std::string& serverName) {
  auto parsed = net::parseUrl(url);
  if (!parsed) {
    Error error = parsed.error();
    error.context = serverName;
    return std::unexpected(std::move(error));
  }
  return parsed;
}

std::string displayUrl(const net::Url& url) {
  const bool v6 = url.host.find(':') != std::string::npos;
  std::string text = url.scheme + "://" + (v6 ? "[" + url.host + "]" : url.host);
  const int defaultPort = url.scheme == "https" ? 443 : 80;
  if (url.port != defaultPort) text += ":" + std::to_string(url.port);
  return text + url.path;
}

namespace {

Error statusError(const std::string& who, const std::string& serverName, std::string_view method,
                  const net::Url& url, long status, std::string_view body,
                  std::string_view credentialsHint, std::string_view challenge) {
  const std::string code = "HTTP " + std::to_string(status);
  const std::string excerpt = clip(body, 160);
  const std::string quoted = excerpt.empty() ? "" : ": \"" + excerpt + "\"";
  if (status == 401 || status == 403) {
    const auto bearer = net::bearerChallenge(challenge);
    std::string advice;
    if (!credentialsHint.empty()) {
      advice = std::string(credentialsHint);
    } else if (bearer && !bearer->resourceMetadata.empty()) {
      // RFC 9728: a challenge that names resource metadata is an OAuth-protected resource.
      advice = "it asks for an OAuth sign-in; run `kaja login " + serverName + "`";
    } else {
      advice = "its key is missing or wrong; set it with `kaja key set " + serverName + "`";
    }
    if (bearer && bearer->error == "insufficient_scope") {
      advice = "the token lacks the scope " +
               (bearer->scope.empty() ? std::string("it needs")
                                      : "\"" + clip(bearer->scope, 80) + "\"") +
               "; run `kaja login " + serverName + "` to sign in with it";
    }
    return Error{ErrorCode::kConnect,
                 who + " refused kaja's credentials (" + code + "): " + advice + ".", serverName,
                 excerpt};
  }
  if (status == 404) {
    return Error{ErrorCode::kConnect,
                 who + " has no MCP endpoint at " + displayUrl(url) + " (" + code +
                     "); check the ability's url.",
                 serverName, excerpt};
  }
  if (status >= 500) {
    return Error{ErrorCode::kConnect, who + " failed with " + code + quoted + ".", serverName,
                 std::string(body.substr(0, 4096))};
  }
  return Error{ErrorCode::kConnect,
               who + " answered " + code + " to " + std::string(method) + " " + displayUrl(url) +
                   quoted + ".",
               serverName, std::string(body.substr(0, 4096))};
}

}  // namespace

Error httpStatusError(const std::string& who, const std::string& serverName,
                      std::string_view method, const net::Url& url, long status,
                      std::string_view body, std::string_view credentialsHint,
                      std::string_view challenge) {
  Error error = statusError(who, serverName, method, url, status, body, credentialsHint, challenge);
  error.httpStatus = status;
  return error;
}

Result<net::Url> redirectTarget(const std::string& who, const std::string& serverName,
                                const net::Url& from, long status, std::string_view location,
                                int redirectsSoFar, int maxRedirects) {
  const std::string shown = clip(location, 200);
  if (location.empty()) {
    return fail(ErrorCode::kProtocol,
                who + " answered HTTP " + std::to_string(status) + " without a Location.",
                serverName);
  }
  if (status != 307 && status != 308) {
    return fail(ErrorCode::kConnect,
                who + " redirected to \"" + shown + "\" with HTTP " + std::to_string(status) +
                    ", which kaja does not follow; if the server moved, set the ability's url "
                    "to the new address.",
                serverName);
  }
  auto target = net::resolveUrl(from, location);
  if (!target && target.error().code == ErrorCode::kRefused) {
    return fail(ErrorCode::kRefused,
                who + " redirected to \"" + shown +
                    "\", which is not an http or https URL; kaja does not follow it.",
                serverName);
  }
  if (!target) {
    return fail(ErrorCode::kProtocol,
                who + " redirected to \"" + shown + "\", which is not a valid URL.", serverName);
  }
  if (!net::sameOrigin(from, *target)) {
    return fail(ErrorCode::kRefused,
                who + " redirected to \"" + shown + "\" on another origin (" + target->origin() +
                    "), which kaja does not follow.",
                serverName);
  }
  if (redirectsSoFar >= maxRedirects) {
    return fail(ErrorCode::kConnect,
                who + " redirected more than " + std::to_string(maxRedirects) +
                    " times (the last to \"" + shown + "\").",
                serverName);
  }
  return target;
}

Error requestError(const std::string& who, const std::string& serverName, std::string_view method,
                   const net::Url& url, const Error& cause) {
  if (cause.code == ErrorCode::kRefused) {
    return Error{ErrorCode::kRefused, cause.message, serverName, cause.detail};
  }
  // The cause is quoted inside this sentence, so its own full stop goes.
  std::string_view clause = cause.message;
  if (clause.ends_with('.')) clause.remove_suffix(1);
  if (cause.code == ErrorCode::kTimeout) {
    return Error{ErrorCode::kTimeout,
                 who + " timed out: " + std::string(clause) + " (" + std::string(method) + " " +
                     displayUrl(url) + ").",
                 serverName, cause.detail};
  }
  return Error{
      ErrorCode::kConnect,
      who + " could not be reached at " + displayUrl(url) + " (" + std::string(clause) + ").",
      serverName, cause.detail};
}

std::chrono::milliseconds reconnectDelay(std::optional<std::chrono::milliseconds> retry,
                                         std::chrono::milliseconds fallback, int attempt) {
  constexpr std::chrono::milliseconds kMax{30000};
  auto delay = std::clamp(retry.value_or(fallback), kMinReconnectDelay, kMax);
  // A server that drops the stream at once, again and again, is asked less and less often.
  for (int i = 1; i < attempt && delay < kMax; ++i) delay = std::min(delay * 2, kMax);
  return delay;
}

Result<void> checkEchoedHeader(const std::string& who, const std::string& serverName,
                               std::string_view header, std::string_view value,
                               std::size_t maxBytes) {
  if (net::isVisibleAscii(value, maxBytes)) return {};
  const std::string why = value.size() > maxBytes
                              ? "is " + std::to_string(value.size()) + " bytes long"
                              : "holds a space, a control character or a byte outside ASCII";
  return fail(ErrorCode::kProtocol,
              who + " sent an " + std::string(header) + " that " + why +
                  ", which kaja does not send back (it must be 1 to " + std::to_string(maxBytes) +
                  " visible ASCII characters).",
              serverName);
}

Error replyFloodError(const std::string& who, const std::string& serverName, std::size_t waiting) {
  return Error{ErrorCode::kProtocol,
               who + " sent requests faster than kaja could answer them (" +
                   std::to_string(waiting) + " answers were waiting); kaja closed the connection.",
               serverName,
               {}};
}

std::string SkipWarnings::next(const std::string& who, std::string_view data) {
  if (given_ >= kMaxSkipWarnings) return {};
  ++given_;
  std::string warning =
      who + " sent an event that is not JSON-RPC; kaja skipped it: \"" + clip(data, 120) + "\"";
  if (given_ == kMaxSkipWarnings) warning += " (further ones are skipped without a warning)";
  return warning;
}

bool failRequestAlone(const TransportHandlers& handlers, const std::optional<Message>& posted,
                      long status, const Error& error) {
  const auto* request = posted ? std::get_if<Request>(&*posted) : nullptr;
  if (request == nullptr || status == 401 || status == 403 || !handlers.onRequestFailed) {
    return false;
  }
  if (request->method == "initialize" || request->method == "server/discover") return false;
  // A 500 (or a 400, a 429) on a call came from a server that was reached and answered it
  // with something other than JSON-RPC: the call failed, and the CLI exits 1, not 4. A
  // proxy answers 407, 502, 503 and 504 for a server it could not reach, and a 404 names a
  // wrong URL; those stay connection failures.
  const bool reached =
      status >= 300 && status != 404 && status != 407 && (status < 502 || status > 504);
  Error failure = error;
  if (reached) failure.code = ErrorCode::kProtocol;
  handlers.onRequestFailed(request->id, failure);
  return true;
}

Error closedError(const std::string& who, const std::string& serverName) {
  return Error{ErrorCode::kConnect, who + " was closed.", serverName, {}};
}

Error unreadableBodyError(const std::string& who, const std::string& serverName,
                          std::string_view body, const Error& cause) {
  return Error{ErrorCode::kProtocol,
               who + " answered with a body that is not JSON-RPC: \"" + clip(body, 120) + "\".",
               serverName, cause.message};
}

Error streamFormatError(const std::string& who, const std::string& serverName, const Error& cause) {
  return Error{
      ErrorCode::kProtocol, who + " broke the protocol: " + cause.message + ".", serverName, {}};
}

bool wantsAuthorization(const RemotePlan& plan, long status, int retriesSoFar) {
  return (status == 401 || status == 403) && plan.onAuthChallenge && retriesSoFar < kMaxAuthRetries;
}

void askAuthorization(boost::asio::io_context& io, const RemotePlan& plan,
                      const net::HttpHead& head, std::weak_ptr<void> alive,
                      std::function<void(bool retry)> then) {
  auto executor = io.get_executor();
  plan.onAuthChallenge(head.status, head.header("www-authenticate"),
                       [executor, alive = std::move(alive), then = std::move(then)](bool retry) {
                         boost::asio::post(executor, [alive, then, retry] {
                           if (alive.lock()) then(retry);
                         });
                       });
}

}  // namespace kaja::core::mcp
