// When the gateway's servers run (V4, V9, V10): keep-alive and eager ones from the start,
// lazy ones on first use, with their tools listed from the metadata cache meanwhile; lazy
// and eager ones stop after idleTimeout with nothing in flight, and start again on use.
#include <algorithm>

#include "core/gateway/gateway_impl.h"
#include "core/gateway/gateway_session.h"
#include "core/gateway/gateway_util.h"

namespace kaja::core::gateway {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

const Activation* Gateway::Impl::activationOf(const std::string& ability) const {
  for (const auto& activation : config.activations) {
    if (activation.ability.name == ability) return &activation;
  }
  return nullptr;
}

void Gateway::Impl::planWanted() {
  std::set<std::string> next;
  cached.clear();
  refreshing.clear();
  const auto now = unixSeconds();
  for (const auto& activation : config.activations) {
    const std::string& name = activation.ability.name;
    auto entry = cache.load(activation);
    const bool fresh = entry && !entry->staleAt(now);
    if (entry) cached.emplace(name, std::move(*entry));
    const bool running = host->serverInfo(name) != nullptr;
    if (activation.ability.lifecycle != Lifecycle::kLazy || !entry || running ||
        waiters.contains(name)) {
      next.insert(name);
    } else if (!fresh) {
      refreshing.insert(name);  // listed from the stale entry; started once the rest is up
    }
  }
  wanted = std::move(next);
}

void Gateway::Impl::refreshStale() {
  if (refreshing.empty()) return;
  for (const auto& name : std::exchange(refreshing, {})) {
    if (activationOf(name) != nullptr) wanted.insert(name);
  }
  activateWanted();
}

void Gateway::Impl::whenRunning(const std::string& ability,
                                std::function<void(Result<void>)> ready) {
  if (host->serverInfo(ability) != nullptr && !stopping.contains(ability)) return ready({});
  if (activationOf(ability) == nullptr) {
    return ready(fail(ErrorCode::kNotFound,
                      ability + " is no longer in persona \"" + config.persona + "\""));
  }
  waiters[ability].push_back(std::move(ready));
  if (wanted.insert(ability).second) log("starting " + ability + " for its first use");
  activateWanted();
}

void Gateway::Impl::activateWanted(std::function<void(const std::vector<ConnectReport>&)> done) {
  if (done) activateWaiters.push_back(std::move(done));
  if (stopped) {
    for (auto& waiter : std::exchange(activateWaiters, {})) waiter({});
    return;
  }
  if (activating) {
    activatePending = true;
    return;
  }
  activating = true;
  const std::uint64_t generation = ++activationsStarted;
  auto callers = std::exchange(activateWaiters, {});
  std::vector<Activation> list;
  std::vector<std::string> names;
  for (const auto& activation : config.activations) {
    const std::string& name = activation.ability.name;
    if (!wanted.contains(name)) continue;
    list.push_back(activation);
    names.push_back(name);
    if (host->serverInfo(name) == nullptr) connecting.insert(name);
  }
  std::weak_ptr<Impl> weak = weak_from_this();
  host->activate(std::move(list), [weak, names, generation, callers = std::move(callers)](
                                      const std::vector<ConnectReport>& reports) {
    auto self = weak.lock();
    if (!self) return;
    self->activating = false;
    for (const auto& name : names) self->connecting.erase(name);
    std::erase_if(self->stopping, [&](const auto& stop) { return stop.second <= generation; });
    // Whoever waited for a server that this activation started hears how it went.
    for (const auto& name : names) {
      auto waiting = self->waiters.find(name);
      if (waiting == self->waiters.end()) continue;
      auto list = std::move(waiting->second);
      self->waiters.erase(waiting);
      Result<void> outcome;
      if (self->host->serverInfo(name) == nullptr) {
        auto why = self->failures.find(name);
        outcome = fail(ErrorCode::kConnect,
                       name + " could not start: " +
                           (why != self->failures.end() ? why->second : "it did not connect"));
      }
      for (auto& waiter : list) waiter(outcome);
    }
    // Whoever waited for an ability that a reload took away hears so.
    for (auto it = self->waiters.begin(); it != self->waiters.end();) {
      if (self->activationOf(it->first) != nullptr) {
        ++it;
        continue;
      }
      auto list = std::move(it->second);
      const std::string name = it->first;
      it = self->waiters.erase(it);
      for (auto& waiter : list) {
        waiter(fail(ErrorCode::kNotFound,
                    name + " is no longer in persona \"" + self->config.persona + "\""));
      }
    }
    self->rebuildCatalog();
    for (const auto& caller : callers) caller(reports);
    if (std::exchange(self->activatePending, false)) self->activateWanted();
    self->runQueued();
    self->scheduleIdleCheck();
  });
}

void Gateway::Impl::use(const std::string& ability) {
  ++busy[ability];
  lastUsed[ability] = Clock::now();
}

void Gateway::Impl::release(const std::string& ability) {
  auto it = busy.find(ability);
  if (it == busy.end()) return;
  if (--it->second <= 0) busy.erase(it);
  lastUsed[ability] = Clock::now();
}

void Gateway::Impl::scheduleIdleCheck() {
  if (stopped || idleCheckPending) return;
  const bool any = std::ranges::any_of(wanted, [&](const std::string& name) {
    const Activation* activation = activationOf(name);
    return activation != nullptr && activation->ability.lifecycle != Lifecycle::kKeepAlive;
  });
  if (!any) return;
  idleCheckPending = true;
  if (!idleTimer) idleTimer = std::make_unique<boost::asio::steady_timer>(io);
  idleTimer->expires_after(std::chrono::seconds(1));
  idleTimer->async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (!self) return;
    self->idleCheckPending = false;
    if (ec || self->stopped) return;
    self->checkIdle();
    self->scheduleIdleCheck();
  });
}

void Gateway::Impl::checkIdle() {
  const auto now = Clock::now();
  bool changed = false;
  for (auto it = wanted.begin(); it != wanted.end();) {
    const std::string name = *it;
    const Activation* activation = activationOf(name);
    const auto used = lastUsed.find(name);
    const bool idle =
        activation != nullptr && activation->ability.lifecycle != Lifecycle::kKeepAlive &&
        host->serverInfo(name) != nullptr && !busy.contains(name) && !waiters.contains(name) &&
        !subscribed(name) && used != lastUsed.end() &&
        now - used->second >= std::chrono::seconds(activation->ability.idleTimeoutSeconds);
    if (!idle) {
      ++it;
      continue;
    }
    log(name + " stopped after " + std::to_string(activation->ability.idleTimeoutSeconds) +
        " s unused; it starts again on its next use");
    stopping[name] = activationsStarted + 1;  // the next activation closes it
    it = wanted.erase(it);
    changed = true;
  }
  if (changed) activateWanted();
}

bool Gateway::Impl::subscribed(const std::string& ability) const {
  return std::ranges::any_of(sessions, [&](const std::weak_ptr<GatewaySession>& weak) {
    auto session = weak.lock();
    return session && session->subscribesTo(ability);
  });
}

void Gateway::Impl::sendLogLevel(const std::string& ability) {
  if (stopped) return;
  std::string lowest;
  for (const auto& weak : sessions) {
    auto session = weak.lock();
    if (!session || session->ended() || session->logLevel().empty()) continue;
    if (lowest.empty() || logLevelRank(session->logLevel()) < logLevelRank(lowest)) {
      lowest = session->logLevel();
    }
  }
  if (lowest.empty()) return;
  for (const auto& name : abilitiesWith("logging")) {
    if (!ability.empty() && name != ability) continue;
    host->request(name, "logging/setLevel", mcp::Json{{"level", lowest}},
                  std::chrono::milliseconds(0), [](const Result<mcp::Json>&) {});
  }
}

void Gateway::Impl::unsubscribeUnlessHeld(const std::string& ability, const std::string& uri) {
  if (stopped || ability.empty()) return;
  const bool held =
      std::ranges::any_of(sessions, [&uri](const std::weak_ptr<GatewaySession>& weak) {
        auto session = weak.lock();
        return session && session->holds(uri);
      });
  if (held) return;
  host->request(ability, "resources/unsubscribe", mcp::Json{{"uri", uri}},
                std::chrono::milliseconds(0), [](const Result<mcp::Json>&) {});
}

std::string Gateway::Impl::stateOf(const std::string& ability) const {
  if (auto tools = host->tools(ability)) {
    // What the persona offers of them, which is what a model can call.
    std::size_t offered = 0;
    if (catalog) {
      for (const auto& tool : catalog->list()) offered += tool.ability == ability ? 1 : 0;
    }
    return "ready, " + std::to_string(offered) + " of its " + std::to_string(tools->size()) +
           " tools offered";
  }
  if (connecting.contains(ability)) return "connecting";
  if (auto why = failures.find(ability); why != failures.end()) {
    return (wanted.contains(ability) ? "failed, starting again: " : "failed: ") + why->second;
  }
  const Activation* activation = activationOf(ability);
  if (activation == nullptr) return "not running";
  std::string text = std::string("idle (") + toString(activation->ability.lifecycle) + ")";
  if (auto entry = cached.find(ability); entry != cached.end()) {
    text += ", " + std::to_string(entry->second.tools.size()) + " tools cached";
  }
  return text;
}

void Gateway::Impl::remember(const std::string& ability, const std::vector<mcp::Tool>& tools) {
  const Activation* activation = activationOf(ability);
  const mcp::ServerInfo* info = host->serverInfo(ability);
  if (activation == nullptr || info == nullptr) return;
  // A 2026-07-28 server says how long its listing may be reused; kaja keeps it no longer.
  const std::int64_t ttlSeconds = MetadataCache::freshFor(host->toolsTtl(ability));
  if (auto saved = cache.save(*activation, *info, tools, ttlSeconds); !saved) {
    log("the tools of " + ability + " were not cached: " + saved.error().describe());
  }
  CachedMetadata entry;
  entry.tools = tools;
  entry.server = *info;
  entry.savedAt = unixSeconds();
  entry.ttlSeconds = ttlSeconds;
  cached[ability] = std::move(entry);
  lastUsed[ability] = Clock::now();
}

}  // namespace kaja::core::gateway
