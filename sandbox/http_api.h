#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/server/http_front.h"
#include "sandbox/pool.h"
#include "sandbox/token.h"

namespace kaja::sandbox {

/// What the worker's HTTP API needs to route a request.
struct ApiSettings {
  WorkerKey key;        ///< tokens are checked against it
  bool shared = false;  ///< every MCP request names its turn (the Kaja-Turn header)
  /// Returns why the worker does not run `ability` (unknown, or not for the cloud), or
  /// nullopt when it does.
  std::function<std::optional<std::string>(const std::string& ability)> refusal;
  ServerPool* pool = nullptr;    ///< the servers; outlives the router
  std::size_t maxServers = 512;  ///< live servers in all; a request for another gets 503
  std::size_t maxPerUser = 32;   ///< live servers of one user; another gets 429
  /// The current time in seconds since the epoch (a seam for token expiry tests).
  std::function<std::int64_t()> now = unixNow;
};

/// The header that names a shared worker's turn.
inline constexpr const char* kTurnHeader = "Kaja-Turn";

/// Returns the router of the worker's endpoints:
/// - `/users/<user>/abilities/<ability>/mcp`: Streamable HTTP MCP for that user's copy of
///   the ability (in a shared worker, of the turn the Kaja-Turn header names);
/// - `POST /users/<user>/turns/<turn>/end`: stops that turn's servers, answering
///   {"stopped": N};
/// - `GET /healthz`: {"ok": true}, with no token, for load balancers.
/// A user id, ability name or turn outside [a-z0-9._-]{1,64} gets 400; a missing, wrong or
/// expired token 401 (WWW-Authenticate: Bearer), a token for another user 403, an ability
/// the worker does not run 404, and any other path 404. A request that would start a server
/// past maxPerUser gets 429 and past maxServers 503, both with Retry-After. None of them
/// starts anything.
core::server::Router makeRouter(ApiSettings settings);

}  // namespace kaja::sandbox
