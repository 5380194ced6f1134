#include "core/auth/preflight.h"

#include "core/net/blocking_http.h"
#include "core/net/www_authenticate.h"

namespace kaja::core::auth {

const char* toString(Access access) {
  switch (access) {
    case Access::kOpen:
      return "open";
    case Access::kOAuth:
      return "oauth";
    case Access::kKey:
      return "key";
    case Access::kOther:
      return "other";
  }
  return "other";
}

namespace {

// True when the server publishes protected resource metadata at a well-known URL.
bool publishesResourceMetadata(const net::Url& url, const net::AddressPolicy& policy,
                               std::chrono::steady_clock::time_point deadline) {
  std::string path = url.path;
  while (path.ends_with('/')) path.pop_back();
  for (const std::string& candidate :
       {url.origin() + "/.well-known/oauth-protected-resource" + path,
        url.origin() + "/.well-known/oauth-protected-resource"}) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    net::HttpRequest request;
    request.url = candidate;
    request.timeout = left;
    request.totalTimeout = left;
    request.headers.emplace_back("Accept", "application/json");
    auto reply = net::fetchBlocking(std::move(request), policy, true);
    if (reply && reply->status == 200) return true;
  }
  return false;
}

}  // namespace

net::AddressPolicy fetchPolicyFor(const net::Url& server) {
  if (server.host == "localhost") return {.allowPrivate = true};
  auto pinned = net::resolveAndCheck(server.host, server.port, {.allowPrivate = true});
  if (!pinned) return {.allowPrivate = false};
  return {.allowPrivate = net::classify(pinned->address) != net::AddressClass::kPublic};
}

Result<Preflight> preflight(const net::Url& url, bool sse, const net::AddressPolicy& policy,
                            std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  net::HttpRequest request;
  request.url = url.text;
  request.timeout = timeout;
  request.totalTimeout = timeout;
  if (sse) {
    request.headers.emplace_back("Accept", "text/event-stream");
  } else {
    request.method = "POST";
    request.headers = {{"Content-Type", "application/json"},
                       {"Accept", "application/json, text/event-stream"}};
    request.body =
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
        R"("2025-11-25","capabilities":{},"clientInfo":{"name":"kaja","version":")" KAJA_VERSION
        R"("}}})";
  }
  auto reply = net::fetchBlocking(std::move(request), policy, true);
  if (!reply) return std::unexpected(reply.error());
  Preflight out;
  out.status = reply->status;
  out.challenge = reply->header("www-authenticate");
  if (reply->status / 100 == 2) {
    out.access = Access::kOpen;
  } else if (reply->status == 401 || reply->status == 403) {
    const auto bearer = net::bearerChallenge(out.challenge);
    const bool oauth = (bearer && !bearer->resourceMetadata.empty()) ||
                       publishesResourceMetadata(url, policy, deadline);
    out.access = oauth ? Access::kOAuth : Access::kKey;
  }
  return out;
}

}  // namespace kaja::core::auth
