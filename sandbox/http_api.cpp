// The worker's HTTP API: which user, ability and turn a request is for, and whether its
// token lets it in.
#include "sandbox/http_api.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "core/server/wire.h"

namespace kaja::sandbox {
namespace {

using Json = nlohmann::json;

core::server::RouteDecision answer(unsigned status, const std::string& message) {
  core::server::RouteDecision decision;
  decision.status = status;
  decision.body = core::server::wire::errorObject(-32000, message).dump();
  return decision;
}

std::vector<std::string_view> split(std::string_view path) {
  std::vector<std::string_view> parts;
  if (!path.starts_with('/')) return parts;
  path.remove_prefix(1);
  while (true) {
    const auto slash = path.find('/');
    parts.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return parts;
}

// Checks the bearer token of `request` for `user`; nullopt when it may go on.
std::optional<core::server::RouteDecision> checkToken(const ApiSettings& settings,
                                                      const core::server::RouteRequest& request,
                                                      std::string_view user) {
  const std::string authorization = request.header("Authorization");
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size() ||
      !std::equal(kScheme.begin(), kScheme.end(), authorization.begin(), [](char a, char b) {
        return a == std::tolower(static_cast<unsigned char>(b));
      })) {
    auto refused = answer(401,
                          "This sandbox needs an Authorization: Bearer token; make one with "
                          "`kaja sandbox token USER --key-file F`.");
    refused.headers = {{"WWW-Authenticate", "Bearer"}};
    return refused;
  }
  auto verified = verifyToken(settings.key, authorization.substr(kScheme.size()), settings.now());
  if (!verified) {
    auto refused = answer(401, "The bearer token was refused: " + verified.error().message + ".");
    refused.headers = {{"WWW-Authenticate", R"(Bearer error="invalid_token")"}};
    return refused;
  }
  if (*verified != user) {
    return answer(403, "The token is for user " + *verified + ", not " + std::string(user) +
                           "; each user may reach only their own servers.");
  }
  return std::nullopt;
}

core::server::RouteDecision route(const ApiSettings& settings,
                                  const core::server::RouteRequest& request) {
  const auto parts = split(request.path);
  if (parts.size() == 1 && parts[0] == "healthz") {
    core::server::RouteDecision ok;
    ok.status = 200;
    ok.body = R"({"ok":true})";
    return ok;
  }
  const bool mcp =
      parts.size() == 5 && parts[0] == "users" && parts[2] == "abilities" && parts[4] == "mcp";
  const bool turnEnd =
      parts.size() == 5 && parts[0] == "users" && parts[2] == "turns" && parts[4] == "end";
  if (!mcp && !turnEnd) {
    return answer(404, "There is nothing at " + core::mcp::clip(request.path, 80) +
                           "; an ability's endpoint is /users/USER/abilities/ABILITY/mcp.");
  }
  const std::string_view user = parts[1];
  const std::string_view name = parts[3];
  if (!validName(user) || !validName(name)) {
    return answer(400, std::string(mcp ? "A user id and an ability name" : "A user id and a turn") +
                           " are 1 to 64 characters of a-z, 0-9, '.', '_' and '-'.");
  }
  if (auto refused = checkToken(settings, request, user)) return std::move(*refused);
  if (turnEnd) {
    if (request.method != "POST") return answer(405, "End a turn with POST.");
    const std::size_t stopped = settings.pool->endTurn(std::string(user), std::string(name));
    core::server::RouteDecision ended;
    ended.status = 200;
    ended.body = Json{{"stopped", stopped}}.dump();
    return ended;
  }
  if (auto why = settings.refusal(std::string(name))) {
    return answer(404, "This sandbox does not run " + std::string(name) + ": " + *why + ".");
  }
  ServerKey key{std::string(user), std::string(name), {}};
  if (settings.shared) {
    key.turn = request.header(kTurnHeader);
    if (!validName(key.turn)) {
      return answer(400,
                    "This sandbox is shared: every request names its turn in a Kaja-Turn "
                    "header of 1 to 64 characters of a-z, 0-9, '.', '_' and '-'.");
    }
  }
  if (!settings.pool->contains(key)) {
    if (settings.pool->countFor(key.user) >= settings.maxPerUser) {
      auto busy =
          answer(429, "User " + key.user + " already has " + std::to_string(settings.maxPerUser) +
                          " servers running here; end a turn or wait for one to go idle.");
      busy.headers = {{"Retry-After", "30"}};
      return busy;
    }
    if (settings.pool->size() >= settings.maxServers) {
      auto full = answer(503, "This sandbox runs as many servers as it may (" +
                                  std::to_string(settings.maxServers) + "); try again later.");
      full.headers = {{"Retry-After", "30"}};
      return full;
    }
  }
  core::server::RouteDecision decision;
  decision.endpoint = key.text();
  decision.owner = key.user;
  decision.sessions = settings.pool->sessions(key);
  return decision;
}

}  // namespace

core::server::Router makeRouter(ApiSettings settings) {
  return [settings = std::move(settings)](const core::server::RouteRequest& request) {
    return route(settings, request);
  };
}

}  // namespace kaja::sandbox
