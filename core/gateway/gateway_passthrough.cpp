// What passes through a session to the servers besides tools: resources, prompts and
// completion, gathered from every server or routed to the one that offers them.
#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

#include "core/gateway/gateway_session.h"
#include "core/gateway/gateway_util.h"
#include "core/mcp/client.h"
#include "core/policy/call_pipeline.h"

namespace kaja::core::gateway {

using mcp::Json;

namespace {

// The pages of one list kaja reads from each server.
constexpr int kMaxPages = 20;
// The most resources one client may subscribe to; kaja's one connection to a server follows
// at most mcp::Client's limit for all of its clients together.
constexpr std::size_t kMaxSubscriptionsPerClient = 256;

// Gathers one list from several servers: every page of each, in ability order.
struct Gathering {
  std::vector<std::string> abilities;
  std::vector<Json> items;  ///< per ability
  std::size_t remaining = 0;
  /// Gets the gathering by reference: capturing its own shared_ptr would make a cycle that
  /// outlives the session (LeakSanitizer found one).
  std::function<void(Gathering&)> done;
};

// Runs the gathering's `done` once the last answer is in.
void countDown(Gathering& gathering) {
  if (--gathering.remaining == 0 && gathering.done)
    std::exchange(gathering.done, nullptr)(gathering);
}

void listPages(AsyncHost& host, const std::shared_ptr<Gathering>& gathering, std::size_t index,
               const std::string& method, const std::string& key, const Json& cursor, int page) {
  Json params = Json::object();
  if (!cursor.is_null()) params["cursor"] = cursor;
  host.request(gathering->abilities[index], method, std::move(params), std::chrono::milliseconds(0),
               [&host, gathering, index, method, key, page](Result<Json> result) {
                 if (result && result->is_object()) {
                   auto list = result->find(key);
                   if (list != result->end() && list->is_array()) {
                     for (auto& item : *list) {
                       if (item.is_object()) gathering->items[index].push_back(std::move(item));
                     }
                   }
                   auto next = result->find("nextCursor");
                   if (next != result->end() && next->is_string() && page + 1 < kMaxPages) {
                     listPages(host, gathering, index, method, key, *next, page + 1);
                     return;
                   }
                 }
                 countDown(*gathering);
               });
}

}  // namespace

void GatewaySession::listEverywhere(const mcp::Request& request, const std::string& capability,
                                    const std::string& key) {
  auto gathering = std::make_shared<Gathering>();
  gathering->abilities = gateway_->abilitiesWith(capability);
  gathering->items.assign(gathering->abilities.size(), Json::array());
  gathering->remaining = gathering->abilities.size();
  gathering->done = [weak = weak_from_this(), id = request.id, key](Gathering& gathering) {
    auto self = weak.lock();
    if (!self) return;
    Gateway::Impl& gateway = *self->gateway_;
    Json all = Json::array();
    std::map<std::string, std::string> seen;  // a URI or name to the ability that has it
    for (std::size_t i = 0; i < gathering.abilities.size(); ++i) {
      const std::string& ability = gathering.abilities[i];
      for (auto& item : gathering.items[i]) {
        if (key == "prompts") {
          const std::string name = stringAt(item, "name");
          const std::string shown = gateway.options.names == NameStyle::kBare
                                        ? name
                                        : exposedName(gateway.options.names, ability, name);
          if (name.empty() || !seen.emplace(shown, ability).second) continue;
          gateway.promptRoutes[shown] = {ability, name};
          item["name"] = shown;
        } else {
          const std::string uri = stringAt(item, key == "resources" ? "uri" : "uriTemplate");
          if (uri.empty()) continue;
          // Two abilities with one URI would be ambiguous: the first in the persona keeps it.
          if (!seen.emplace(uri, ability).second) {
            gateway.log(ability + " offers " + mcp::clip(uri, 120) + ", which " + seen[uri] +
                        " offers too; kaja leaves " + ability + "'s out");
            continue;
          }
          if (key == "resources") gateway.resourceRoutes[uri] = ability;
        }
        all.push_back(std::move(item));
      }
    }
    self->respond(id, Json{{key, std::move(all)}});
  };
  if (gathering->abilities.empty()) {
    gathering->remaining = 1;
    countDown(*gathering);
    return;
  }
  const std::string method = key == "resourceTemplates" ? "resources/templates/list"
                             : key == "prompts"         ? "prompts/list"
                                                        : "resources/list";
  for (std::size_t i = 0; i < gathering->abilities.size(); ++i) {
    // A lazy server that offers the capability starts to answer; one that cannot start
    // adds nothing to the list.
    gateway_->use(gathering->abilities[i]);
    gateway_->whenRunning(gathering->abilities[i], [gateway = std::weak_ptr(gateway_), gathering, i,
                                                    method, key](Result<void> ready) {
      auto impl = gateway.lock();
      if (!impl) return;
      impl->release(gathering->abilities[i]);
      if (!ready) {
        countDown(*gathering);
        return;
      }
      listPages(*impl->host, gathering, i, method, key, Json(), 0);
    });
  }
}

bool GatewaySession::endChange(const std::string& uri, std::uint64_t change) {
  const auto it = subscriptionChanges_.find(uri);
  if (it == subscriptionChanges_.end()) return false;
  const bool latest = it->second.latest == change;
  if (--it->second.inFlight <= 0) subscriptionChanges_.erase(it);
  return latest;
}

void GatewaySession::forward(const mcp::Request& request) {
  Json params = request.params.is_object() ? request.params : Json::object();
  Gateway::Impl& gateway = *gateway_;
  // kaja holds one subscription per resource for all its clients: one client's unsubscribe
  // must not end another's updates.
  if (request.method == "resources/unsubscribe") {
    const std::string uri = stringAt(params, "uri");
    const bool shared = std::ranges::any_of(gateway.sessions, [this, &uri](const auto& weak) {
      auto other = weak.lock();
      return other && other.get() != this && other->holds(uri);
    });
    // A client that does not follow it (it never did, or another still does) changes
    // nothing at the server.
    if (shared || !subscribed_.contains(uri)) {
      subscribed_.erase(uri);
      // A subscribe of this client still on its way no longer decides.
      if (auto it = subscriptionChanges_.find(uri); it != subscriptionChanges_.end()) {
        it->second.latest = ++lastChange_;
      }
      return respond(request.id, Json::object());
    }
  }
  // One client cannot take up the subscriptions kaja holds for all of them.
  if (request.method == "resources/subscribe" && subscribed_.size() >= kMaxSubscriptionsPerClient &&
      !subscribed_.contains(stringAt(params, "uri"))) {
    return respondError(request.id, rpc::kInvalidRequest,
                        "this client follows " + std::to_string(kMaxSubscriptionsPerClient) +
                            " resources already, the most kaja keeps for one client; "
                            "unsubscribe from some first");
  }
  std::string ability;
  std::string capability = request.method.starts_with("prompts") ? "prompts" : "resources";
  std::string promptName = stringAt(params, "name");
  std::string uri = stringAt(params, "uri");
  if (request.method == "completion/complete") {
    const Json ref = params.value("ref", Json::object());
    capability = stringAt(ref, "type") == "ref/prompt" ? "prompts" : "resources";
    promptName = stringAt(ref, "name");
    uri = stringAt(ref, "uri");
  }
  if (capability == "prompts") {
    std::string serverName;
    if (auto it = gateway.promptRoutes.find(promptName); it != gateway.promptRoutes.end()) {
      ability = it->second.first;
      serverName = it->second.second;
    } else if (gateway.options.names != NameStyle::kBare) {
      // Before any listing, a plain "<ability>__<prompt>" still says where it goes.
      for (const auto& candidate : gateway.abilitiesWith("prompts")) {
        const std::string prefix = exposedName(gateway.options.names, candidate, "");
        if (promptName.size() > prefix.size() && promptName.starts_with(prefix) &&
            candidate.size() > ability.size()) {
          ability = candidate;
          serverName = promptName.substr(prefix.size());
        }
      }
    }
    if (!ability.empty()) {
      if (request.method == "completion/complete") {
        params["ref"]["name"] = serverName;
      } else {
        params["name"] = serverName;
      }
    }
  } else if (auto it = gateway.resourceRoutes.find(uri); it != gateway.resourceRoutes.end()) {
    ability = it->second;
  }
  // Before any listing, or for a URI made from a template, one server with the capability
  // is the only place it can go.
  if (ability.empty()) {
    auto candidates = gateway.abilitiesWith(capability);
    if (candidates.size() == 1) ability = candidates.front();
  }
  if (ability.empty()) {
    return respondError(request.id, rpc::kInvalidParams,
                        "no ability of persona \"" + gateway.config.persona + "\" offers " +
                            mcp::clip(capability == "prompts" ? promptName : uri, 120) + "; list " +
                            capability + " first");
  }
  // No server is handed a name for kaja's own files (its secrets, its audit log): not as the
  // resource to read or follow, nor as a prompt's argument.
  if (request.method == "resources/read" || request.method == "resources/subscribe" ||
      request.method == "prompts/get") {
    const policy::OwnFiles own = policy::ownFilesOf(gateway.options.pipeline, gateway.options.home);
    // The URI to read or follow is a path however it is spelled; everything the request
    // carries (a prompt's arguments, any other field) is passed on too, so it is judged as a
    // tool's arguments are.
    auto refusal = request.method == "prompts/get" ? std::nullopt : own.checkUri(uri, ability);
    if (!refusal) refusal = own.checkArguments(params, {}, false, ability);
    if (refusal) {
      return respondError(request.id, rpc::kInvalidParams,
                          "kaja refused the request (" + refusal->rule + "): " + refusal->message);
    }
  }
  std::function<void(const mcp::Progress&)> onProgress;
  Json progressToken = params.value("_meta", Json::object()).value("progressToken", Json());
  if (!progressToken.is_null())
    onProgress = progressRelay(weak_from_this(), request.id, progressToken);
  params.erase("_meta");
  // The log messages of this request, for a 2026-07-28 server: the client's level, or none.
  params["_meta"][mcp::kMetaLogLevel] =
      requestLogLevel_.empty() ? Json(nullptr) : Json(requestLogLevel_);
  // A client's answers to input rounds are kaja's to read, not the server's: kaja answers a
  // server's own rounds itself, from what it asks the client.
  params.erase("inputResponses");
  params.erase("requestState");
  const std::string key = idKey(request.id);
  if (refusedAsRunning(request.id, key)) return;
  // The resource counts as followed from now, so that the per-client limit sees subscribes
  // in flight and another client's unsubscribe meanwhile is not passed on.
  const bool subscribing = request.method == "resources/subscribe";
  const bool reserved = subscribing && !subscribed_.contains(uri);
  if (subscribing) subscribed_[uri] = ability;
  std::uint64_t change = 0;
  if (subscribing || request.method == "resources/unsubscribe") {
    auto& changes = subscriptionChanges_[uri];
    change = changes.latest = ++lastChange_;
    ++changes.inFlight;
  }
  inFlight_[key] = InFlight{ability, HostCall{}, false};
  // What the server asks meanwhile (elicitation, sampling) goes to this client.
  gateway.running.emplace(ability, RunningCall{weak_from_this(), request.id, requestLogLevel_});
  gateway.use(ability);
  auto finish = [weak = weak_from_this(), gateway = std::weak_ptr(gateway_), ability,
                 id = request.id, key, method = request.method, uri, reserved,
                 change](Result<Json> result) {
    auto impl = gateway.lock();
    if (impl) impl->release(ability);
    auto self = weak.lock();
    const bool subscribing = method == "resources/subscribe";
    // A subscribe that ended after its client left (the server may have taken it even when
    // cancelled) is undone, unless another client follows the resource.
    if (subscribing && (!self || self->ended_) && impl) impl->unsubscribeUnlessHeld(ability, uri);
    if (!self) return;
    auto it = self->inFlight_.find(key);
    const bool cancelled = it != self->inFlight_.end() && it->second.cancelled;
    if (it != self->inFlight_.end()) self->inFlight_.erase(it);
    self->forgetRunning(ability, id);
    // This client alone gets the updates of what it subscribed to, as its latest change of
    // the resource left them.
    if (change != 0 && self->endChange(uri, change) && !self->ended_) {
      if (subscribing && result) self->subscribed_[uri] = ability;
      if (!subscribing && result) self->subscribed_.erase(uri);
      if (subscribing && !result && reserved) {
        // Failed or cancelled, it may still have reached the server.
        self->subscribed_.erase(uri);
        if (impl) impl->unsubscribeUnlessHeld(ability, uri);
      }
    }
    if (!cancelled) self->respond(id, std::move(result));
  };
  // A lazy server starts first. The client may cancel the request like a call: the server
  // is told, and no answer follows.
  gateway.whenRunning(ability, [weak = weak_from_this(), ability, key, method = request.method,
                                params = std::move(params), onProgress = std::move(onProgress),
                                finish = std::move(finish)](Result<void> ready) mutable {
    auto self = weak.lock();
    if (!ready || !self)
      return finish(ready ? fail(ErrorCode::kRefused, "the client went away")
                          : std::unexpected(ready.error()));
    auto it = self->inFlight_.find(key);
    if (it == self->inFlight_.end() || it->second.cancelled) {
      return finish(fail(ErrorCode::kRefused, "the client cancelled the request"));
    }
    it->second.call = self->gateway_->host->request(
        ability, method, std::move(params), std::chrono::milliseconds(0), std::move(finish),
        std::move(onProgress), self->capabilitiesFor(ability));
  });
}

}  // namespace kaja::core::gateway
