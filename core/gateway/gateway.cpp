#include "core/gateway/gateway.h"

#include <algorithm>

#include "core/gateway/gateway_impl.h"
#include "core/gateway/gateway_session.h"
#include "core/gateway/gateway_util.h"

namespace kaja::core::gateway {

using mcp::Json;

Gateway::Impl::Impl(boost::asio::io_context& context, GatewayOptions opts)
    : io(context), options(std::move(opts)), cache(options.cacheDir) {
  HostOptions hostOptions = options.host;
  hostOptions.forwardServerRequests = true;
  // Servers are spoken to at 2026-07-28 when they can (an ability's `protocol` decides
  // otherwise), else at 2025-11-25. What a 2026-07-28 server asks within a call reaches the
  // client as that client's era asks it; a 2025 client's subscriptions and log level become
  // the server's listen filter and each request's _meta (mcp::Client does that).
  auto user = hostOptions.events;
  // The host outlives no handler: each holds a weak reference to the gateway.
  // While failed abilities are tried again, only a new kind of failure is worth a line.
  hostOptions.events.warning = [this](const std::string& text) {
    if (!retryPending) log(text);
  };
  hostOptions.events.toolsChanged = [this](const std::string& ability,
                                           const std::vector<mcp::Tool>& tools) {
    if (!catalog) return;
    catalog->setTools(ability, tools);
    remember(ability, tools);
    broadcast({{"method", "notifications/tools/list_changed"}});
  };
  hostOptions.events.disconnected = [this](const std::string& ability, const Error& why) {
    if (!catalog) return;
    const Activation* activation = activationOf(ability);
    if (activation != nullptr && activation->ability.lifecycle != Lifecycle::kKeepAlive) {
      // A lazy or eager server that exits is started again on its next use; meanwhile its
      // tools are listed from the cache.
      log(ability + " stopped: " + why.describe() + "; it starts again on its next use");
      wanted.erase(ability);
      rebuildCatalog();
      return;
    }
    // A keep-alive server is started again; its last tools stay listed meanwhile, and a
    // call made before it is back waits for it.
    log(ability + " stopped: " + why.describe() + "; kaja starts it again");
    failures[ability] = why.describe();
    const bool known = cached.contains(ability);
    if (known) {
      rebuildCatalog();
    } else {
      catalog->clearTools(ability);
    }
    scheduleRetry();
    if (!known) broadcast({{"method", "notifications/tools/list_changed"}});
  };
  hostOptions.events.notification = [this](const std::string& ability,
                                           const mcp::Notification& notification) {
    onServerNotification(ability, notification);
  };
  hostOptions.events.serverRequest = [this](const std::string& ability, const std::string& method,
                                            const Json& params, const mcp::InputOrigin& origin,
                                            std::function<void(Result<Json>)> respond) {
    onServerRequest(ability, method, params, origin, std::move(respond));
  };
  hostOptions.events.connected = [this, user](const ConnectReport& report) {
    if (report.error) {
      const std::string why = report.error->describe();
      auto known = failures.find(report.ability);
      if (known == failures.end() || known->second != why) {
        log(report.ability + " could not start: " + why);
      }
      failures[report.ability] = why;
      // A lazy server that cannot start is tried again on its next use, not in a loop.
      const Activation* activation = activationOf(report.ability);
      if (activation != nullptr && activation->ability.lifecycle == Lifecycle::kLazy) {
        wanted.erase(report.ability);
      }
    } else {
      if (failures.contains(report.ability)) log(report.ability + " is running again");
      failures.erase(report.ability);
      if (!report.reused) {
        remember(report.ability, report.tools);
        // A server started after clients chose their levels (lazily, or again after it
        // stopped) is told too.
        sendLogLevel(report.ability);
      }
      for (const auto& note : report.notes) log(note);
    }
    if (user.connected) user.connected(report);
  };
  host = std::make_unique<AsyncHost>(io, std::move(hostOptions));
  if (!options.auditDir.empty()) {
    auto opened = policy::AuditLog::open(options.auditDir);
    if (opened) {
      audit.emplace(std::move(*opened));
    } else {
      log("no audit rows will be written: " + opened.error().describe());
    }
  }
}

void Gateway::Impl::broadcast(const Json& notification) {
  std::erase_if(sessions, [](const auto& weak) { return weak.expired(); });
  for (const auto& weak : sessions) {
    auto session = weak.lock();
    if (!session || !session->started()) continue;
    const std::string method = notification["method"].get<std::string>();
    if (session->stateless()) {
      session->notifyListener(method, notification.value("params", Json()));
    } else {
      session->sendNotification(method, notification.value("params", Json()));
    }
  }
}

void Gateway::Impl::rebuildCatalog() {
  CatalogSettings settings{config.persona, options.home, options.pipeline, options.names};
  catalog = std::make_unique<ToolCatalog>(std::move(settings), config.scopes);
  for (const auto& scope : config.scopes) {
    const std::string& ability = scope.ability.name;
    if (auto tools = host->tools(ability)) {
      catalog->setTools(ability, *tools);
    } else if (auto entry = cached.find(ability); entry != cached.end()) {
      catalog->setTools(ability, entry->second.tools);
    }
  }
}

void Gateway::Impl::scheduleRetry() {
  // Only servers meant to be running (keep-alive, or eager ones still starting) are retried.
  const bool due = std::ranges::any_of(
      failures, [&](const auto& failure) { return wanted.contains(failure.first); });
  if (stopped || retryPending || !due) return;
  retryPending = true;
  // 1 s, 2 s, 4 s … up to a minute between tries.
  const auto pause = std::chrono::seconds(1) * (1 << std::min(retries, 6));
  if (!retryTimer) retryTimer = std::make_unique<boost::asio::steady_timer>(io);
  retryTimer->expires_after(
      std::min<std::chrono::steady_clock::duration>(pause, std::chrono::seconds(60)));
  std::weak_ptr<Impl> weak = weak_from_this();
  retryTimer->async_wait([weak](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->stopped) return;
    if (self->activating) {  // a reload is connecting: try again after it
      self->retryPending = false;
      self->scheduleRetry();
      return;
    }
    self->activateWanted([weak](const std::vector<ConnectReport>&) {
      auto impl = weak.lock();
      if (!impl || impl->stopped) return;
      impl->retryPending = false;
      impl->broadcast({{"method", "notifications/tools/list_changed"}});
      impl->retries = impl->failures.empty() ? 0 : impl->retries + 1;
      impl->scheduleRetry();
    });
  });
}

std::vector<std::string> Gateway::Impl::abilitiesWith(const std::string& capability) const {
  std::vector<std::string> found;
  for (const auto& scope : config.scopes) {
    const mcp::ServerInfo* info = host->serverInfo(scope.ability.name);
    if (info == nullptr) {
      if (auto entry = cached.find(scope.ability.name); entry != cached.end()) {
        info = &entry->second.server;
      }
    }
    if (info != nullptr && info->capabilities.is_object() &&
        info->capabilities.contains(capability)) {
      found.push_back(scope.ability.name);
    }
  }
  return found;
}

void Gateway::Impl::onServerRequest(const std::string& ability, const std::string& method,
                                    const Json& params, const mcp::InputOrigin& origin,
                                    std::function<void(Result<Json>)> respond) {
  const std::string capability = method == "sampling/createMessage" ? "sampling" : "elicitation";
  if (!params.is_object()) {
    respond(fail(ErrorCode::kProtocol, "the server's " + method + " has params that are a " +
                                           params.type_name() + ", not an object"));
    return;
  }
  // The client whose call is running on this server is the one asked, on that call's stream.
  // With calls of several clients running there, kaja cannot tell whose request it is, and
  // asking the wrong person would hand one client's question (and answer) to another.
  auto range = running.equal_range(ability);
  std::shared_ptr<GatewaySession> asked;
  Json relatedTo;
  bool ambiguous = false;
  for (auto it = range.first; it != range.second; ++it) {
    auto session = it->second.session.lock();
    if (!session) continue;
    // A 2026-07-28 server asks inside one call, so it is known whose question it is.
    if (origin.callId != 0) {
      if (!session->runs(HostCall{ability, origin.callId, origin.connection})) continue;
      asked = session;
      relatedTo = it->second.requestId;
      break;
    }
    if (asked && asked != session) ambiguous = true;
    if (!asked) {
      asked = session;
      relatedTo = it->second.requestId;
    }
  }
  if (ambiguous) {
    respond(fail(ErrorCode::kRefused, "calls of several clients are running on " + ability +
                                          ", so kaja cannot tell which one " + method +
                                          " is for; it asks none of them"));
    return;
  }
  if (asked && asked->clientHas(capability)) {
    asked->sendRequest(method, params, relatedTo, options.approvalTimeout, std::move(respond),
                       origin.key);
    return;
  }
  respond(fail(ErrorCode::kRefused, "no client of kaja's gateway that can answer " + method +
                                        " is waiting on " + ability));
}

void Gateway::Impl::onServerNotification(const std::string& ability,
                                         const mcp::Notification& notification) {
  const std::string& method = notification.method;
  if (method == "notifications/message") {
    Json params = notification.params.is_object() ? notification.params : Json::object();
    params["logger"] = ability + (params.contains("logger") && params["logger"].is_string()
                                      ? "/" + params["logger"].get<std::string>()
                                      : "");
    // A message while calls run on the server belongs to one of them, on its stream, if its
    // client asked for messages of that level. When calls of several clients run there,
    // whose it is cannot be told (a server names no request in it), so it goes to none:
    // no client reads another's.
    auto range = running.equal_range(ability);
    if (range.first != range.second) {
      std::shared_ptr<GatewaySession> owner;
      const RunningCall* call = nullptr;
      for (auto it = range.first; it != range.second; ++it) {
        auto session = it->second.session.lock();
        if (!session) continue;
        if (owner && owner != session) return;
        if (!owner) {
          owner = std::move(session);
          call = &it->second;
        }
      }
      if (owner && wantsLog(call->logLevel, params)) {
        owner->sendNotification(method, params, call->requestId);
      }
      return;
    }
    // With no call running it is the server's own news, for each 2025 client that chose a
    // level it reaches (a 2026-07-28 client asks for messages per request only).
    for (const auto& weak : sessions) {
      auto session = weak.lock();
      if (session && session->started() && !session->stateless() &&
          wantsLog(session->logLevel(), params)) {
        session->sendNotification(method, params);
      }
    }
    return;
  }
  if (method == "notifications/resources/updated") {
    // Only the clients that subscribed to the resource hear of it.
    const Json& params = notification.params;
    const std::string uri =
        params.is_object() && params.contains("uri") && params["uri"].is_string()
            ? params["uri"].get<std::string>()
            : std::string();
    for (const auto& weak : sessions) {
      auto session = weak.lock();
      if (!session || !session->started()) continue;
      if (session->stateless()) {
        session->notifyListener(method, params);
      } else if (session->subscribedTo(uri)) {
        session->sendNotification(method, params);
      }
    }
    return;
  }
  if (method == "notifications/resources/list_changed" ||
      method == "notifications/prompts/list_changed") {
    broadcast({{"method", method}, {"params", notification.params}});
  }
  // Progress reaches its call through the host; tool changes come as toolsChanged.
}

Gateway::Gateway(boost::asio::io_context& io, GatewayOptions options)
    : impl_(std::make_shared<Impl>(io, std::move(options))) {}

Gateway::~Gateway() {
  // Nothing is started or sent any more, not even the unsubscribes of the sessions ended below.
  impl_->stopped = true;
  impl_->suspendedBytes = 0;
  for (auto& [token, session] : std::exchange(impl_->suspended, {})) session->abandonRound();
  // Sessions a front still holds must not reach a gateway that is gone.
  for (const auto& weak : impl_->sessions) {
    if (auto session = weak.lock()) session->end();
  }
}

void Gateway::start(GatewayConfig config, std::function<void(Result<void>)> done) {
  reload(std::move(config), std::move(done));
}

void Gateway::reload(GatewayConfig config, std::function<void(Result<void>)> done) {
  impl_->reload(std::move(config), std::move(done));
}

void Gateway::Impl::runQueued() {
  if (auto next = std::exchange(queued, nullptr)) next();
}

void Gateway::Impl::reload(GatewayConfig next, std::function<void(Result<void>)> done) {
  if (stopped) {
    done({});
    return;
  }
  // One activation at a time: two at once could each start the same server. The newest
  // configuration waits for the running one and replaces any other that waited.
  if (activating) {
    if (auto replaced = std::exchange(queuedDone, nullptr)) replaced({});
    queuedDone = std::move(done);
    queued = [weak = weak_from_this(), next = std::move(next)]() mutable {
      auto self = weak.lock();
      if (!self) return;
      self->reload(std::move(next), std::exchange(self->queuedDone, nullptr));
    };
    return;
  }
  for (const auto& why : next.skipped) log(why);
  config = std::move(next);
  failures.clear();
  // Routes found by an earlier listing may name abilities that are gone.
  promptRoutes.clear();
  resourceRoutes.clear();
  planWanted();
  rebuildCatalog();
  std::weak_ptr<Impl> weak = weak_from_this();
  activateWanted([weak, done = std::move(done)](const std::vector<ConnectReport>&) {
    auto impl = weak.lock();
    if (!impl) return;
    if (auto names = impl->catalog->checkNames(); !names) {
      done(std::unexpected(names.error()));
      return;
    }
    impl->broadcast({{"method", "notifications/tools/list_changed"}});
    impl->retries = 0;
    impl->scheduleRetry();
    done({});
    impl->refreshStale();
  });
}

std::optional<pid_t> Gateway::serverPid(const std::string& ability) const {
  return impl_->host->serverPid(ability);
}

server::SessionFactory Gateway::sessions() {
  return [impl = impl_](std::shared_ptr<server::Outbox> outbox) {
    return makeSession(impl, std::move(outbox));
  };
}

void Gateway::stop(std::function<void()> done) {
  impl_->stopped = true;
  if (impl_->retryTimer) impl_->retryTimer->cancel();
  if (impl_->idleTimer) impl_->idleTimer->cancel();
  // Whoever waits for a server to start hears that none will.
  for (auto& [ability, list] : std::exchange(impl_->waiters, {})) {
    for (auto& waiter : list) waiter(fail(ErrorCode::kRefused, "kaja's gateway is stopping"));
  }
  impl_->suspendedBytes = 0;
  for (auto& [token, session] : std::exchange(impl_->suspended, {})) session->abandonRound();
  for (const auto& weak : impl_->sessions) {
    if (auto session = weak.lock()) session->end();
  }
  impl_->host->closeAll(std::move(done));
}

}  // namespace kaja::core::gateway
