// The per-user pool: one server per (user, ability[, turn]), started on first use, kept
// warm, reaped when idle, and the client sessions that ride on it.
#include "sandbox/pool.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <map>
#include <set>

#include "core/server/wire.h"

namespace kaja::sandbox {
namespace asio = boost::asio;
using core::mcp::Json;
using Clock = std::chrono::steady_clock;

namespace {

// The id of the initialize kaja sends for a client whose server was started again.
constexpr std::string_view kReplayId = "kaja-sandbox-replay";

}  // namespace

std::string ServerKey::text() const {
  return user + "/" + ability + (turn.empty() ? std::string() : "@" + turn);
}

struct PoolSession;

// One live server and the clients attached to it.
struct Entry {
  enum class State { kStarting, kReady, kStopping };

  ServerKey key;
  std::uint64_t generation = 0;
  std::unique_ptr<core::gateway::Gateway> gateway;
  State state = State::kStarting;
  std::optional<core::Error> failed;  ///< the server could not be made at all
  std::vector<std::weak_ptr<PoolSession>> sessions;
  std::vector<std::function<void()>> waiting;  ///< messages held until it is ready
  std::size_t inFlight = 0;
  Clock::time_point idleSince = Clock::now();
  std::uint64_t calls = 0;
  std::vector<std::function<void()>> afterStop;  ///< waiters for a stop in progress
};

struct ServerPool::Impl : std::enable_shared_from_this<ServerPool::Impl> {
  Impl(asio::io_context& io, PoolOptions options)
      : io(io), options(std::move(options)), timer(io) {}

  std::shared_ptr<Entry> acquire(const ServerKey& key);
  void start(const std::shared_ptr<Entry>& entry);
  void ready(const std::shared_ptr<Entry>& entry);
  void stopEntry(const std::shared_ptr<Entry>& entry, std::function<void()> done);
  void sweep();
  static void requestStarted(Entry& entry) { ++entry.inFlight; }
  static void requestEnded(Entry& entry, bool call) {
    if (entry.inFlight > 0 && --entry.inFlight == 0) entry.idleSince = Clock::now();
    if (call) ++entry.calls;
  }

  asio::io_context& io;
  PoolOptions options;
  asio::steady_timer timer;
  bool stopped = false;
  std::uint64_t nextGeneration = 1;
  std::map<ServerKey, std::shared_ptr<Entry>> entries;
  /// Entries whose servers are being stopped (no longer in `entries`). A stop in progress
  /// holds its entry, and so its gateway, from inside that gateway: the pool must see it end,
  /// or break that hold when it is destroyed first.
  std::set<std::shared_ptr<Entry>> stopping;
};

// One client of one server. The server may be stopped under it (idle) and started again;
// the client's session goes on.
struct PoolSession final : core::server::Session, std::enable_shared_from_this<PoolSession> {
  PoolSession(std::weak_ptr<ServerPool::Impl> pool, ServerKey key,
              std::shared_ptr<core::server::Outbox> client)
      : pool(std::move(pool)), key(std::move(key)), client(std::move(client)) {}

  void receive(core::mcp::Message message) override;
  void end() override;
  void detach(const std::string& why);
  void fromInner(std::uint64_t generation, Json message, const Json& relatedTo);

  std::weak_ptr<ServerPool::Impl> pool;
  ServerKey key;
  std::shared_ptr<core::server::Outbox> client;
  std::shared_ptr<Entry> entry;
  std::uint64_t generation = 0;  ///< of the entry `inner` belongs to
  std::shared_ptr<core::server::Session> inner;
  std::optional<Json> initializeParams;
  std::map<std::string, std::pair<Json, bool>> pending;  ///< id text: id, is a tools/call
  bool ended = false;

 private:
  void attach(const std::shared_ptr<ServerPool::Impl>& impl, bool initializing);
  void forward(core::mcp::Message message);
  void refuse(const Json& id, const std::string& why);
};

// Hands what the server's gateway session says to its PoolSession, unless that session has
// moved on to a newer server.
struct InnerOutbox final : core::server::Outbox {
  InnerOutbox(std::weak_ptr<PoolSession> owner, std::uint64_t generation)
      : owner(std::move(owner)), generation(generation) {}
  void send(Json message, const Json& relatedTo) override {
    if (auto session = owner.lock()) {
      session->fromInner(generation, std::move(message), relatedTo);
    }
  }
  std::weak_ptr<PoolSession> owner;
  std::uint64_t generation;
};

void PoolSession::receive(core::mcp::Message message) {
  auto impl = pool.lock();
  if (ended || !impl) return;
  const auto* request = std::get_if<core::mcp::Request>(&message);
  const bool initializing = request != nullptr && request->method == "initialize";
  if (initializing) initializeParams = request->params;
  attach(impl, initializing);
  if (request != nullptr) {
    const std::string id = request->id.dump();
    if (pending.emplace(id, std::make_pair(request->id, request->method == "tools/call")).second) {
      ServerPool::Impl::requestStarted(*entry);
    }
  }
  forward(std::move(message));
}

void PoolSession::attach(const std::shared_ptr<ServerPool::Impl>& impl, bool initializing) {
  if (entry && !entry->failed && entry->generation == generation &&
      entry->state != Entry::State::kStopping) {
    return;
  }
  entry = impl->acquire(key);
  generation = entry->generation;
  entry->sessions.push_back(weak_from_this());
  inner.reset();
  if (entry->gateway) {
    inner = entry->gateway->sessions()(std::make_shared<InnerOutbox>(weak_from_this(), generation));
  }
  // A client that initialized an earlier server: kaja initializes this one as it did.
  if (!initializing && initializeParams) {
    forward(core::mcp::Request{Json(kReplayId), "initialize", *initializeParams});
    forward(core::mcp::Notification{"notifications/initialized", Json()});
  }
}

void PoolSession::forward(core::mcp::Message message) {
  if (entry->state == Entry::State::kStarting) {
    entry->waiting.push_back(
        [weak = weak_from_this(), gen = generation, message = std::move(message)]() mutable {
          auto self = weak.lock();
          if (self && !self->ended && self->generation == gen) self->forward(std::move(message));
        });
    return;
  }
  if (entry->failed || !inner) {
    if (const auto* request = std::get_if<core::mcp::Request>(&message)) {
      refuse(request->id, entry->failed ? entry->failed->message
                                        : std::string("the server is stopping; try again"));
    }
    return;
  }
  inner->receive(std::move(message));
}

void PoolSession::refuse(const Json& id, const std::string& why) {
  if (id == Json(kReplayId)) return;
  const auto found = pending.find(id.dump());
  if (found == pending.end()) return;
  const Json reply{{"jsonrpc", "2.0"},
                   {"id", id},
                   {"error", {{"code", core::mcp::rpc_error::kInternalError}, {"message", why}}}};
  if (entry) ServerPool::Impl::requestEnded(*entry, false);
  pending.erase(found);
  client->send(reply, id);
}

void PoolSession::fromInner(std::uint64_t from, Json message, const Json& relatedTo) {
  if (ended || from != generation) return;
  if (core::server::wire::isResponse(message)) {
    if (message["id"] == Json(kReplayId)) return;  // the answer to kaja's own initialize
    const auto found = pending.find(message["id"].dump());
    if (found != pending.end()) {
      if (entry) ServerPool::Impl::requestEnded(*entry, found->second.second);
      pending.erase(found);
    }
  }
  client->send(std::move(message), relatedTo);
}

void PoolSession::detach(const std::string& why) {
  if (inner) inner->end();
  inner.reset();
  std::vector<Json> ids;
  ids.reserve(pending.size());
  for (const auto& [text, request] : pending) ids.push_back(request.first);
  for (const auto& id : ids) refuse(id, why);
  entry.reset();
  generation = 0;
}

void PoolSession::end() {
  if (std::exchange(ended, true)) return;
  if (inner) inner->end();
  inner.reset();
  if (!entry) return;
  for (std::size_t i = 0; i < pending.size(); ++i) ServerPool::Impl::requestEnded(*entry, false);
  pending.clear();
  auto& sessions = entry->sessions;
  std::erase_if(sessions, [this](const std::weak_ptr<PoolSession>& weak) {
    auto session = weak.lock();
    return !session || session.get() == this;
  });
  auto impl = pool.lock();
  if (impl && impl->options.shared && sessions.empty() && entry->state != Entry::State::kStopping) {
    impl->stopEntry(entry, {});
  }
  entry.reset();
}

std::shared_ptr<Entry> ServerPool::Impl::acquire(const ServerKey& key) {
  if (const auto found = entries.find(key); found != entries.end()) return found->second;
  auto entry = std::make_shared<Entry>();
  entry->key = key;
  entry->generation = nextGeneration++;
  entries.emplace(key, entry);
  start(entry);
  return entry;
}

void ServerPool::Impl::start(const std::shared_ptr<Entry>& entry) {
  auto activation = options.activation(entry->key);
  if (!activation) {
    entry->failed = activation.error();
    // Nothing runs: answer what waits, and let the next message try again.
    entries.erase(entry->key);
    asio::post(io, [self = shared_from_this(), entry] { self->ready(entry); });
    return;
  }
  core::gateway::GatewayOptions gatewayOptions = options.gateway;
  gatewayOptions.serverName = entry->key.ability;
  entry->gateway = std::make_unique<core::gateway::Gateway>(io, std::move(gatewayOptions));
  core::gateway::GatewayConfig config;
  config.persona = "sandbox";
  core::policy::CallScope scope;
  scope.persona = config.persona;
  scope.ability = activation->ability;
  // The kaja host that called in applies the persona's approvals and folder rules; here a
  // call runs as it comes, within the ability's own tool list.
  scope.ability.approval = core::ApprovalMode::kNever;
  scope.ability.readOnly.clear();
  scope.entry.ability = activation->ability.name;
  scope.home = options.gateway.home;
  config.scopes.push_back(std::move(scope));
  // The pool decides when a user's server stops (--idle, turn ends); inside, it just runs.
  activation->ability.lifecycle = core::Lifecycle::kKeepAlive;
  config.activations.push_back(std::move(*activation));
  entry->gateway->start(std::move(config),
                        [weak = weak_from_this(), entry](const core::Result<void>& started) {
                          auto self = weak.lock();
                          if (!self) return;
                          if (!started) entry->failed = started.error();
                          self->ready(entry);
                        });
}

void ServerPool::Impl::ready(const std::shared_ptr<Entry>& entry) {
  if (entry->state == Entry::State::kStarting) entry->state = Entry::State::kReady;
  entry->idleSince = Clock::now();
  auto waiting = std::exchange(entry->waiting, {});
  for (auto& deliver : waiting) deliver();
}

void ServerPool::Impl::stopEntry(const std::shared_ptr<Entry>& entry, std::function<void()> done) {
  if (stopping.contains(entry)) {
    if (done) entry->afterStop.push_back(std::move(done));
    return;
  }
  entry->state = Entry::State::kStopping;
  stopping.insert(entry);
  if (const auto found = entries.find(entry->key);
      found != entries.end() && found->second == entry) {
    entries.erase(found);
  }
  const auto sessions = std::exchange(entry->sessions, {});
  for (const auto& weak : sessions) {
    if (auto session = weak.lock(); session && session->entry == entry) {
      session->detach("the server for " + entry->key.text() + " was stopped");
    }
  }
  auto finish = [weak = weak_from_this(), entry, done = std::move(done)] {
    auto self = weak.lock();
    if (self) self->stopping.erase(entry);
    if (self && self->options.stopped) self->options.stopped(entry->key);
    // The gateway is destroyed outside its own callback.
    if (self) {
      asio::post(self->io, [entry] { entry->gateway.reset(); });
    }
    if (done) done();
    for (auto& waiter : std::exchange(entry->afterStop, {})) waiter();
  };
  if (!entry->gateway) {
    asio::post(io, std::move(finish));
    return;
  }
  entry->gateway->stop(std::move(finish));
}

void ServerPool::Impl::sweep() {
  if (stopped) return;
  timer.expires_after(options.sweep);
  timer.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->stopped) return;
    const auto now = Clock::now();
    std::vector<std::shared_ptr<Entry>> idle;
    for (const auto& [key, entry] : self->entries) {
      if (entry->state == Entry::State::kReady && entry->inFlight == 0 &&
          now - entry->idleSince >= self->options.idle) {
        idle.push_back(entry);
      }
    }
    for (const auto& entry : idle) self->stopEntry(entry, {});
    self->sweep();
  });
}

ServerPool::ServerPool(asio::io_context& io, PoolOptions options)
    : impl_(std::make_shared<Impl>(io, std::move(options))) {
  impl_->sweep();
}

// Cancelling a timer reports errors as values; only an allocation failure could throw, and
// then ending the process is right.
// NOLINTNEXTLINE(bugprone-exception-escape)
ServerPool::~ServerPool() {
  impl_->stopped = true;
  impl_->timer.cancel();
  // A stop still in progress would keep its gateway alive through its own callback.
  for (const auto& entry : std::exchange(impl_->stopping, {})) entry->gateway.reset();
}

core::server::SessionFactory ServerPool::sessions(const ServerKey& key) {
  return [weak = std::weak_ptr<Impl>(impl_), key](std::shared_ptr<core::server::Outbox> outbox) {
    return std::make_shared<PoolSession>(weak, key, std::move(outbox));
  };
}

std::size_t ServerPool::endTurn(const std::string& user, const std::string& turn) {
  std::vector<std::shared_ptr<Entry>> ending;
  for (const auto& [key, entry] : impl_->entries) {
    if (key.user == user && key.turn == turn) ending.push_back(entry);
  }
  for (const auto& entry : ending) impl_->stopEntry(entry, {});
  return ending.size();
}

std::vector<ServerStatus> ServerPool::status() const {
  std::vector<ServerStatus> out;
  const auto now = Clock::now();
  for (const auto& [key, entry] : impl_->entries) {
    ServerStatus status;
    status.key = key;
    status.ready = entry->state == Entry::State::kReady && !entry->failed;
    if (entry->gateway) status.pid = entry->gateway->serverPid(key.ability);
    status.sessions = entry->sessions.size();
    status.inFlight = entry->inFlight;
    status.idleSeconds =
        entry->inFlight > 0 ? 0.0 : std::chrono::duration<double>(now - entry->idleSince).count();
    status.calls = entry->calls;
    out.push_back(std::move(status));
  }
  return out;
}

std::size_t ServerPool::size() const { return impl_->entries.size(); }

std::size_t ServerPool::countFor(const std::string& user) const {
  std::size_t count = 0;
  for (auto it = impl_->entries.lower_bound(ServerKey{user, {}, {}});
       it != impl_->entries.end() && it->first.user == user; ++it) {
    ++count;
  }
  return count;
}

bool ServerPool::contains(const ServerKey& key) const { return impl_->entries.contains(key); }

void ServerPool::stop(std::function<void()> done) {
  impl_->stopped = true;
  impl_->timer.cancel();
  // The servers still running, and those whose stop (a turn's end, idleness) is under way;
  // an entry being stopped has already left `entries`.
  std::vector<std::shared_ptr<Entry>> all(impl_->stopping.begin(), impl_->stopping.end());
  for (const auto& [key, entry] : impl_->entries) all.push_back(entry);
  if (all.empty()) {
    asio::post(impl_->io, std::move(done));
    return;
  }
  auto left = std::make_shared<std::size_t>(all.size());
  auto shared = std::make_shared<std::function<void()>>(std::move(done));
  for (const auto& entry : all) {
    impl_->stopEntry(entry, [left, shared] {
      if (--*left == 0 && *shared) (*shared)();
    });
  }
}

}  // namespace kaja::sandbox
