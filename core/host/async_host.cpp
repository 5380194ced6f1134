#include "core/host/async_host.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <map>

#include "core/host/transport_factory.h"
#include "core/mcp/client.h"
#include "core/process/cpu_time.h"

namespace kaja::core {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

// How long a roots server gets to apply the roots it fetched before it counts as ready:
// servers fetch roots after initialize and validate them asynchronously, and a call that
// arrives before that is judged against no folders at all.
constexpr std::chrono::milliseconds kRootsSettle{150};
// How long to wait for a roots server that never asks for its roots.
constexpr std::chrono::milliseconds kRootsWait{2000};
// How much later than the host's connect deadline the client's own connect timer fires.
constexpr std::chrono::milliseconds kClientTimerSlack{250};

struct Connection {
  /// Tells this connection from the ability's earlier ones, whose request ids start over.
  std::uint64_t serial = 0;
  Activation activation;
  bool rootsServed = false;                ///< the server has asked for roots at least once
  std::chrono::milliseconds rootsWait{0};  ///< how long connecting waited for that
  std::function<void()> onRootsServed;     ///< a waiter for the first roots/list
  std::shared_ptr<mcp::Client> client;
  std::shared_ptr<mcp::StdioTransport> stdio;
  std::shared_ptr<std::vector<mcp::Root>> roots = std::make_shared<std::vector<mcp::Root>>();
  std::vector<mcp::Tool> tools;
};

bool sameRoots(const std::vector<mcp::Root>& a, const std::vector<mcp::Root>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].uri != b[i].uri || a[i].name != b[i].name) return false;
  }
  return true;
}

// Two activations run the same server when nothing about how it starts has changed.
bool sameServer(const Activation& a, const Activation& b) {
  const Resolution& x = a.resolution;
  const Resolution& y = b.resolution;
  if (x.launch.has_value() != y.launch.has_value()) return false;
  if (x.launch) {
    if (x.launch->argv != y.launch->argv || x.launch->env.size() != y.launch->env.size()) {
      return false;
    }
    for (size_t i = 0; i < x.launch->env.size(); ++i) {
      if (x.launch->env[i].name != y.launch->env[i].name ||
          x.launch->env[i].value != y.launch->env[i].value) {
        return false;
      }
    }
  }
  if (x.remote.has_value() != y.remote.has_value()) return false;
  if (!x.remote) return true;
  // Headers made afresh for each request (a sandbox token) differ at every resolution.
  const bool fresh = x.remote->freshHeaders && y.remote->freshHeaders;
  return x.remote->url == y.remote->url && (fresh || x.remote->headers == y.remote->headers);
}

std::string seconds(std::chrono::milliseconds ms) {
  auto whole = ms.count() / 1000;
  return whole * 1000 == ms.count() ? std::to_string(whole) + " s"
                                    : std::to_string(ms.count()) + " ms";
}

}  // namespace

struct AsyncHost::Impl {
  /// One activate() call in progress: what is left to connect and close.
  struct Batch {
    std::vector<ConnectReport> reports;
    std::deque<size_t> queue;  ///< indexes into `wanted` still to start
    std::vector<Activation> wanted;
    size_t running = 0;       ///< connects started and not yet finished, of any transport
    size_t runningStdio = 0;  ///< of which stdio
    size_t outstanding = 0;   ///< connects and closes not yet finished
    std::function<void(std::vector<ConnectReport>)> done;
  };

  /// One connect in progress, from its start to its report.
  struct Attempt {
    std::shared_ptr<Batch> batch;
    size_t index = 0;
    std::string name;
    std::shared_ptr<Connection> connection = std::make_shared<Connection>();
    Clock::time_point deadline;
    Clock::time_point started;
    bool discover = true;
    bool finished = false;
    std::unique_ptr<asio::steady_timer> timer;
  };

  Impl(asio::io_context& context, HostOptions opts) : options(std::move(opts)), io(context) {}

  void warn(const std::string& text) const {
    if (options.events.warning) options.events.warning(text);
  }

  static void closeConnection(const std::shared_ptr<Connection>& connection,
                              std::function<void()> done) {
    auto client = connection->client;
    if (!client) {
      done();
      return;
    }
    client->close([client, done = std::move(done)] { done(); });
  }

  void finishOne(const std::shared_ptr<Batch>& batch) {
    if (--batch->outstanding == 0 && batch->queue.empty()) {
      batch->done(std::move(batch->reports));
      return;
    }
    startQueued(batch);
  }

  // The host's connectTimeout, or the ability's own shorter limit (K24: 5 s for a server in
  // a sandbox worker, so one worker that is down does not hold up a turn).
  [[nodiscard]] std::chrono::milliseconds connectLimit(const Activation& activation) const {
    const auto& own = activation.resolution.connectLimit;
    return own ? std::min(*own, options.connectTimeout) : options.connectTimeout;
  }

  void startQueued(const std::shared_ptr<Batch>& batch) {
    while (!batch->queue.empty()) {
      size_t index = batch->queue.front();
      bool isStdio = batch->wanted[index].resolution.launch.has_value();
      if (isStdio && batch->runningStdio >= options.maxParallelStdio) return;
      if (batch->running >= options.maxParallelConnects) return;
      batch->queue.pop_front();
      if (isStdio) ++batch->runningStdio;
      ++batch->running;
      ++batch->outstanding;
      const std::string& protocol = batch->wanted[index].ability.protocol;
      startConnect(batch, index, protocol.empty() ? options.discover : protocol == "2026-07-28",
                   Clock::now() + connectLimit(batch->wanted[index]));
    }
  }

  // Keeps the first `maxTools` of a server's tools (V7); returns what it says about the
  // rest, or "" when nothing was left out.
  static std::string capTools(const Connection& connection, const std::string& name,
                              std::vector<mcp::Tool>& tools) {
    const auto& max = connection.activation.ability.maxTools;
    if (!max || tools.size() <= *max) return "";
    std::string note = name + " offers " + std::to_string(tools.size()) +
                       " tools; kaja takes only the first " + std::to_string(*max) +
                       " from a workspace's server, so " + tools[*max].name +
                       " and the rest are left out";
    tools.resize(*max);
    return note;
  }

  // Ends one connect with its tools or its error, exactly once.
  void finishConnect(const std::shared_ptr<Attempt>& attempt,
                     Result<std::vector<mcp::Tool>> tools) {
    if (std::exchange(attempt->finished, true)) return;
    attempt->timer->cancel();
    const auto& batch = attempt->batch;
    const auto& connection = attempt->connection;
    ConnectReport& report = batch->reports[attempt->index];
    report.elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - attempt->started);
    if (connection->stdio) {
      report.stderrTail = connection->stdio->stderrTail();
      if (options.measureStartCpu) {
        report.cpu =
            processGroupCpuTime(connection->stdio->pid()).value_or(std::chrono::milliseconds(-1));
      }
    }
    if (connection->activation.resolution.launch) --batch->runningStdio;
    --batch->running;
    if (tools) {
      if (auto note = capTools(*connection, attempt->name, *tools); !note.empty()) {
        report.notes.push_back(std::move(note));
      }
      report.ok = true;
      report.rootsWait = connection->rootsWait;
      report.tools = *tools;
      connection->tools = std::move(*tools);
      if (connection->client) {
        report.protocolVersion = connection->client->serverInfo().protocolVersion;
        report.serverName = connection->client->serverInfo().name;
      }
      connections[attempt->name] = connection;
      closedWhy.erase(attempt->name);
      if (options.events.connected) options.events.connected(report);
      finishOne(batch);
      return;
    }
    Error error = tools.error();
    if (error.context.empty()) error.context = attempt->name;
    report.error = std::move(error);
    if (options.events.connected) options.events.connected(report);
    // The failed server is ended before the batch counts as done: no child outlives it.
    closeConnection(connection, [this, batch] { finishOne(batch); });
  }

  // Gives the client of a new connection its handlers: roots, warnings, server requests,
  // notifications, tool changes and the end of the connection.
  void wireClient(const std::shared_ptr<Connection>& connection, const std::string& name) {
    auto& client = *connection->client;
    connection->serial = ++connectionsMade;
    if (connection->activation.ability.roots) {
      std::weak_ptr<Connection> served = connection;
      client.setRootsProvider([this, served, roots = connection->roots] {
        if (auto alive = served.lock()) {
          alive->rootsServed = true;
          // The answer is sent after this returns, so the waiter runs on a later turn.
          if (auto waiter = std::exchange(alive->onRootsServed, nullptr)) asio::post(io, waiter);
        }
        return *roots;
      });
    }
    if (options.forwardServerRequests && options.events.serverRequest) {
      auto forward = [this, name, serial = connection->serial](const char* method) {
        return [this, name, method, serial](const mcp::Json& params, const mcp::InputOrigin& origin,
                                            std::function<void(Result<mcp::Json>)> respond) {
          mcp::InputOrigin from = origin;
          from.connection = serial;
          options.events.serverRequest(name, method, params, from, std::move(respond));
        };
      };
      client.setSamplingHandler(forward("sampling/createMessage"));
      client.setElicitationHandler(forward("elicitation/create"));
    }
    client.setWarningHandler([this, name](const std::string& text) { warn(name + ": " + text); });
    client.setNotificationHandler([this, name](const mcp::Notification& notification) {
      if (options.events.notification) options.events.notification(name, notification);
    });
    std::weak_ptr<Connection> weak = connection;
    client.setToolsChangedHandler([this, weak, name](const std::vector<mcp::Tool>& changed) {
      auto alive = weak.lock();
      if (!alive) return;
      std::vector<mcp::Tool> tools = changed;
      if (auto note = capTools(*alive, name, tools); !note.empty()) warn(note);
      alive->tools = tools;
      auto it = connections.find(name);
      if (it != connections.end() && it->second == alive && options.events.toolsChanged) {
        options.events.toolsChanged(name, tools);
      }
    });
    client.setClosedHandler([this, weak, name](const Error& error) {
      auto alive = weak.lock();
      auto it = connections.find(name);
      if (alive && it != connections.end() && it->second == alive) {
        connections.erase(it);
        closedWhy[name] = error;
        warn(name + " disconnected: " + error.describe());
        if (options.events.disconnected) options.events.disconnected(name, error);
      }
    });
  }

  // Connects one ability by `deadline`, which a second start (after server/discover failed)
  // keeps: one connect gets one connectTimeout, whatever happens inside it.
  void startConnect(const std::shared_ptr<Batch>& batch, size_t index, bool discover,
                    Clock::time_point deadline) {
    const Activation& wanted = batch->wanted[index];
    auto attempt = std::make_shared<Attempt>();
    attempt->batch = batch;
    attempt->index = index;
    attempt->name = wanted.ability.name;
    attempt->deadline = deadline;
    const std::chrono::milliseconds limit = connectLimit(wanted);
    attempt->started = deadline - limit;
    attempt->discover = discover;
    attempt->connection->activation = wanted;
    *attempt->connection->roots = wanted.roots;
    attempt->timer = std::make_unique<asio::steady_timer>(io, deadline);
    if (options.events.connecting) options.events.connecting(attempt->name);

    attempt->timer->async_wait([this, attempt, limit](const boost::system::error_code& ec) {
      if (ec) return;
      const auto& remote = attempt->connection->activation.resolution.remote;
      const std::string where = remote && !remote->via.empty() ? " in " + remote->via : "";
      finishConnect(attempt, fail(ErrorCode::kTimeout,
                                  "did not answer" + where + " within " + seconds(limit) +
                                      "; it is skipped (`kaja doctor --verbose` shows its stderr)",
                                  attempt->name));
    });

    auto opened = openTransport(io, wanted.ability, wanted.resolution, options.closeGrace);
    if (!opened) {
      finishConnect(attempt, std::unexpected(opened.error()));
      return;
    }
    attempt->connection->stdio = opened->stdio;
    mcp::ClientOptions clientOptions;
    // The host's own timer ends the connect at `deadline` and names the whole connectTimeout;
    // the client's is only a backstop, a moment later.
    clientOptions.connectTimeout =
        std::max(std::chrono::milliseconds(1),
                 std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now())) +
        kClientTimerSlack;
    clientOptions.requestTimeout = options.callTimeout;
    clientOptions.progressLimit = options.callTimeLimit;
    clientOptions.discover = discover;
    attempt->connection->client = mcp::Client::create(io, opened->transport, clientOptions);
    wireClient(attempt->connection, attempt->name);
    attempt->connection->client->connect(
        [this, attempt](Result<mcp::ServerInfo> info) { onConnected(attempt, std::move(info)); });
  }

  void onConnected(const std::shared_ptr<Attempt>& attempt, Result<mcp::ServerInfo> info) {
    // A server that hangs up on server/discover (rather than answering with an error,
    // which the client handles itself) gets one more start, with initialize alone.
    if (!info && attempt->discover && info.error().code == ErrorCode::kConnect &&
        !attempt->finished) {
      attempt->finished = true;
      attempt->timer->cancel();
      warn(attempt->name + ": the connection ended after server/discover (" + info.error().message +
           "); starting it again with initialize alone");
      closeConnection(attempt->connection, [this, attempt] {
        startConnect(attempt->batch, attempt->index, /*discover=*/false, attempt->deadline);
      });
      return;
    }
    if (!info) {
      finishConnect(attempt, std::unexpected(info.error()));
      return;
    }
    attempt->connection->client->listTools([this, attempt](Result<std::vector<mcp::Tool>> tools) {
      const auto& connection = attempt->connection;
      // At 2026-07-28 a server cannot ask for roots on its own: it asks inside the
      // request that needs them (input_required), so there is nothing to wait for.
      if (!tools || !connection->activation.ability.roots || !options.waitForRoots ||
          connection->client->isStateless()) {
        finishConnect(attempt, std::move(tools));
        return;
      }
      auto listed = Clock::now();
      waitForRoots(connection, [this, attempt, listed, tools = std::move(*tools)] {
        attempt->connection->rootsWait =
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - listed);
        finishConnect(attempt, tools);
      });
    });
  }

  // Runs `then` once a roots server has fetched its roots and had a moment to apply them,
  // or after kRootsWait when it never asks.
  void waitForRoots(const std::shared_ptr<Connection>& connection,
                    const std::function<void()>& then) {
    auto timer = std::make_shared<asio::steady_timer>(io);
    auto settle = [timer, then] {
      timer->expires_after(kRootsSettle);
      timer->async_wait([timer, then](const boost::system::error_code&) { then(); });
    };
    if (connection->rootsServed) {
      settle();
      return;
    }
    auto fired = std::make_shared<bool>(false);
    connection->onRootsServed = [fired, settle] {
      if (!std::exchange(*fired, true)) settle();
    };
    timer->expires_after(kRootsWait);
    timer->async_wait([fired, then, connection](const boost::system::error_code& ec) {
      if (ec || std::exchange(*fired, true)) return;
      connection->onRootsServed = nullptr;
      then();
    });
  }

  // Keeps a connection that still runs the same server: new roots are sent, not restarted.
  static void keep(Connection& connection, const Activation& next, ConnectReport& report) {
    if (!sameRoots(*connection.roots, next.roots)) {
      *connection.roots = next.roots;
      connection.client->notifyRootsChanged();
    }
    connection.activation = next;
    report.ok = true;
    report.reused = true;
    report.tools = connection.tools;
    report.protocolVersion = connection.client->serverInfo().protocolVersion;
    report.serverName = connection.client->serverInfo().name;
  }

  void activate(std::vector<Activation> wanted,
                std::function<void(std::vector<ConnectReport>)> done) {
    auto batch = std::make_shared<Batch>();
    batch->reports.resize(wanted.size());
    batch->done = std::move(done);
    batch->outstanding = 1;  // held until every job below is queued

    std::map<std::string, size_t> byName;
    for (size_t i = 0; i < wanted.size(); ++i) {
      batch->reports[i].ability = wanted[i].ability.name;
      byName[wanted[i].ability.name] = i;
    }
    for (auto it = connections.begin(); it != connections.end();) {
      auto match = byName.find(it->first);
      auto connection = it->second;
      if (match != byName.end() && sameServer(connection->activation, wanted[match->second])) {
        keep(*connection, wanted[match->second], batch->reports[match->second]);
        byName.erase(match);
        ++it;
        continue;
      }
      it = connections.erase(it);
      ++batch->outstanding;
      closeConnection(connection, [this, batch] { finishOne(batch); });
    }
    for (size_t i = 0; i < wanted.size(); ++i) {
      if (byName.contains(wanted[i].ability.name)) batch->queue.push_back(i);
    }
    batch->wanted = std::move(wanted);
    startQueued(batch);
    finishOne(batch);
  }

  [[nodiscard]] mcp::Client* client(const std::string& ability) const {
    auto it = connections.find(ability);
    return it == connections.end() ? nullptr : it->second->client.get();
  }
  [[nodiscard]] std::uint64_t serialOf(const std::string& ability) const {
    auto it = connections.find(ability);
    return it == connections.end() ? 0 : it->second->serial;
  }

  /// Whether a call to `tool` is one kaja left out of `ability`'s capped list (V7).
  [[nodiscard]] bool leftOut(const std::string& ability, const std::string& tool) const {
    auto it = connections.find(ability);
    if (it == connections.end() || !it->second->activation.ability.maxTools) return false;
    const auto& tools = it->second->tools;
    return std::none_of(tools.begin(), tools.end(),
                        [&](const mcp::Tool& held) { return held.name == tool; });
  }

  /// The error for a request to `ability` while it is not connected: why its connection
  /// ended, when it ended by itself, so that the reason is not lost to a race.
  [[nodiscard]] Error notConnected(const std::string& ability) const {
    auto why = closedWhy.find(ability);
    if (why == closedWhy.end()) return Error{ErrorCode::kConnect, "is not connected", ability, {}};
    return Error{ErrorCode::kConnect, "is not connected: " + why->second.message, ability,
                 why->second.detail};
  }

  HostOptions options;
  asio::io_context& io;
  std::map<std::string, std::shared_ptr<Connection>> connections;
  std::uint64_t connectionsMade = 0;       ///< for Connection::serial
  std::map<std::string, Error> closedWhy;  ///< why each connection that ended by itself did
};

AsyncHost::AsyncHost(asio::io_context& io, HostOptions options)
    : impl_(std::make_unique<Impl>(io, std::move(options))) {}

AsyncHost::~AsyncHost() = default;

void AsyncHost::activate(std::vector<Activation> wanted,
                         std::function<void(std::vector<ConnectReport>)> done) {
  impl_->activate(std::move(wanted), std::move(done));
}

std::vector<std::string> AsyncHost::connected() const {
  std::vector<std::string> names;
  for (const auto& [name, connection] : impl_->connections) names.push_back(name);
  return names;
}

Result<std::vector<mcp::Tool>> AsyncHost::tools(const std::string& ability) const {
  auto it = impl_->connections.find(ability);
  if (it == impl_->connections.end()) return fail(ErrorCode::kConnect, "is not connected", ability);
  return it->second->tools;
}

const mcp::ServerInfo* AsyncHost::serverInfo(const std::string& ability) const {
  mcp::Client* client = impl_->client(ability);
  return client == nullptr ? nullptr : &client->serverInfo();
}

std::optional<std::chrono::milliseconds> AsyncHost::toolsTtl(const std::string& ability) const {
  mcp::Client* client = impl_->client(ability);
  return client == nullptr ? std::nullopt : client->toolsTtl();
}

std::optional<pid_t> AsyncHost::serverPid(const std::string& ability) const {
  auto it = impl_->connections.find(ability);
  if (it == impl_->connections.end() || !it->second->stdio) return std::nullopt;
  return it->second->stdio->pid();
}

HostCall AsyncHost::callTool(const std::string& ability, const std::string& tool,
                             mcp::Json arguments, HostCallOptions options,
                             std::function<void(Result<mcp::ToolResult>)> done) {
  mcp::Client* client = impl_->client(ability);
  if (client == nullptr) {
    asio::post(impl_->io, [done = std::move(done), why = impl_->notConnected(ability)] {
      done(std::unexpected(why));
    });
    return {ability, 0};
  }
  if (impl_->leftOut(ability, tool)) {
    asio::post(impl_->io, [done = std::move(done), ability, tool] {
      done(core::fail(ErrorCode::kRefused, ability + " offers no tool " + tool +
                                               " here: kaja takes only the first tools of a "
                                               "workspace's server"));
    });
    return {ability, 0};
  }
  mcp::CallOptions call;
  call.timeout = options.timeout;
  call.onProgress = std::move(options.onProgress);
  call.resetTimeoutOnProgress = options.resetTimeoutOnProgress;
  call.capabilities = std::move(options.capabilities);
  call.logLevel = std::move(options.logLevel);
  return {ability, client->callTool(tool, std::move(arguments), std::move(call), std::move(done)),
          impl_->serialOf(ability)};
}

HostCall AsyncHost::request(const std::string& ability, const std::string& method, mcp::Json params,
                            std::chrono::milliseconds timeout,
                            std::function<void(Result<mcp::Json>)> done,
                            std::function<void(const mcp::Progress&)> onProgress,
                            mcp::Json capabilities) {
  mcp::Client* client = impl_->client(ability);
  if (client == nullptr) {
    asio::post(impl_->io, [done = std::move(done), why = impl_->notConnected(ability)] {
      done(std::unexpected(why));
    });
    return {ability, 0};
  }
  if (timeout.count() == 0) timeout = impl_->options.callTimeout;
  // Only a 2026-07-28 server reads the capabilities of each request.
  if (capabilities.is_object() && client->isStateless()) {
    if (!params.is_object()) params = mcp::Json::object();
    params["_meta"][mcp::kMetaClientCapabilities] = std::move(capabilities);
  }
  return {
      ability,
      client->request(method, std::move(params), timeout, std::move(done), std::move(onProgress)),
      impl_->serialOf(ability)};
}

void AsyncHost::notify(const std::string& ability, const std::string& method, mcp::Json params) {
  if (mcp::Client* client = impl_->client(ability)) client->notify(method, std::move(params));
}

bool AsyncHost::cancel(const HostCall& call, const std::string& reason) {
  mcp::Client* client = impl_->client(call.ability);
  return client != nullptr && call.id != 0 && client->cancel(call.id, reason);
}

void AsyncHost::closeAll(std::function<void()> done) {
  impl_->activate({}, [done = std::move(done)](const std::vector<ConnectReport>&) { done(); });
}

}  // namespace kaja::core
