// A 2026-07-28 client's subscriptions/listen stream: which change notifications it asked for,
// the acknowledgement, and each later notification tagged with its subscription id.
#include <algorithm>

#include "core/gateway/gateway_session.h"  // IWYU pragma: associated
#include "core/gateway/gateway_util.h"
#include "core/mcp/client.h"

namespace kaja::core::gateway {

using mcp::Json;

namespace {

// More resource URIs than this in one listen request are refused.
constexpr std::size_t kMaxListenedUris = 256;

// The filter key that asks for each list_changed notification.
const char* filterKeyOf(const std::string& method) {
  if (method == "notifications/tools/list_changed") return "toolsListChanged";
  if (method == "notifications/prompts/list_changed") return "promptsListChanged";
  if (method == "notifications/resources/list_changed") return "resourcesListChanged";
  return nullptr;
}

bool askedFor(const Json& filter, const char* key) {
  const auto it = filter.find(key);
  return it != filter.end() && it->is_boolean() && it->get<bool>();
}

Json tagged(Json params, const Json& subscriptionId) {
  if (!params.is_object()) params = Json::object();
  if (!params.contains("_meta") || !params["_meta"].is_object()) params["_meta"] = Json::object();
  params["_meta"][mcp::kMetaSubscriptionId] = subscriptionId;
  return params;
}

}  // namespace

std::string GatewaySession::resourceAbility(const std::string& uri) const {
  if (auto it = gateway_->resourceRoutes.find(uri); it != gateway_->resourceRoutes.end()) {
    return it->second;
  }
  auto candidates = gateway_->abilitiesWith("resources");
  return candidates.size() == 1 ? candidates.front() : std::string();
}

void GatewaySession::listen(const mcp::Request& request) {
  const Json filter =
      request.params.is_object() ? request.params.value("notifications", Json()) : Json();
  if (!filter.is_object()) {
    return respondError(request.id, rpc::kInvalidParams,
                        "subscriptions/listen needs a \"notifications\" object saying which "
                        "changes to send");
  }
  if (listening_) {
    return respondError(request.id, rpc::kInvalidRequest,
                        "this session is listening already; open another request to listen");
  }
  // What kaja can deliver: the kinds its capabilities announce.
  const Json caps = capabilities();
  Json honored = Json::object();
  for (const char* kind : {"tools", "prompts", "resources"}) {
    const std::string key = std::string(kind) + "ListChanged";
    if (askedFor(filter, key.c_str()) && caps.contains(kind)) honored[key] = true;
  }
  std::set<std::string> uris;
  if (const auto asked = filter.find("resourceSubscriptions"); asked != filter.end()) {
    if (!asked->is_array() || asked->size() > kMaxListenedUris ||
        !std::all_of(asked->begin(), asked->end(),
                     [](const Json& uri) { return uri.is_string(); })) {
      return respondError(request.id, rpc::kInvalidParams,
                          "\"resourceSubscriptions\" must be an array of at most " +
                              std::to_string(kMaxListenedUris) + " URI strings");
    }
    if (caps.contains("resources")) {
      for (const auto& uri : *asked) uris.insert(uri.get<std::string>());
    }
  }
  if (!uris.empty()) honored["resourceSubscriptions"] = Json(uris);
  sendNotification("notifications/subscriptions/acknowledged",
                   tagged(Json{{"notifications", honored}}, request.id), request.id);
  if (honored.empty()) {
    // Nothing to send: the stream ends with its result at once.
    return respond(request.id, Json{{"_meta", {{mcp::kMetaSubscriptionId, request.id}}}});
  }
  // A server tells of updates only to a connection that subscribed to the resource.
  for (const auto& uri : uris) {
    const std::string ability = resourceAbility(uri);
    if (ability.empty()) continue;
    gateway_->host->request(ability, "resources/subscribe", Json{{"uri", uri}},
                            std::chrono::milliseconds(0), [](const Result<Json>&) {});
  }
  listening_ = Listening{request.id, std::move(honored), std::move(uris)};
}

void GatewaySession::notifyListener(const std::string& method, const Json& params) {
  if (ended_ || !listening_) return;
  if (method == "notifications/resources/updated") {
    if (!listening_->uris.contains(stringAt(params, "uri"))) return;
  } else if (const char* key = filterKeyOf(method);
             key == nullptr || !askedFor(listening_->honored, key)) {
    return;
  }
  sendNotification(method, tagged(params, listening_->id), listening_->id);
}

}  // namespace kaja::core::gateway
