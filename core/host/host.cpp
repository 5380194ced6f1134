#include "core/host/host.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <map>

#include "core/host/transport_factory.h"
#include "core/mcp/client.h"
#include "core/process/cpu_time.h"
#include "core/util/loop_thread.h"

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
  return !x.remote || (x.remote->url == y.remote->url && x.remote->headers == y.remote->headers);
}

std::string seconds(std::chrono::milliseconds ms) {
  auto whole = ms.count() / 1000;
  return whole * 1000 == ms.count() ? std::to_string(whole) + " s"
                                    : std::to_string(ms.count()) + " ms";
}

}  // namespace

struct Host::Impl {
  /// One activate() call in progress: what is left to connect and close.
  struct Batch {
    std::vector<ConnectReport> reports;
    std::deque<size_t> queue;  ///< indexes into `wanted` still to start
    std::vector<Activation> wanted;
    size_t running = 0;
    size_t runningStdio = 0;
    size_t outstanding = 0;  ///< connects and closes not yet finished
    std::function<void(std::vector<ConnectReport>)> done;
  };

  explicit Impl(HostOptions opts) : options(std::move(opts)), io(loop.io()) {}
  // The loop stops before the connections go, so no handler runs while they are destroyed.
  ~Impl() { loop.stop(); }

  template <class T>
  T onLoop(std::function<void(std::function<void(T)>)> job) {
    return loop.call<T>(std::move(job));
  }

  void warn(const std::string& text) {
    if (options.events.warning) options.events.warning(text);
  }

  void closeConnection(const std::shared_ptr<Connection>& connection, std::function<void()> done) {
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

  void startQueued(const std::shared_ptr<Batch>& batch) {
    while (!batch->queue.empty()) {
      size_t index = batch->queue.front();
      bool isStdio = batch->wanted[index].resolution.launch.has_value();
      if (isStdio && batch->runningStdio >= options.maxParallelStdio) return;
      batch->queue.pop_front();
      if (isStdio) ++batch->runningStdio;
      ++batch->outstanding;
      startConnect(batch, index, options.discover, Clock::now() + options.connectTimeout);
    }
  }

  // Connects one ability by `deadline`, which a second start (after server/discover failed)
  // keeps: one connect gets one connectTimeout, whatever happens inside it.
  void startConnect(const std::shared_ptr<Batch>& batch, size_t index, bool discover,
                    Clock::time_point deadline) {
    const Activation& wanted = batch->wanted[index];
    const std::string name = wanted.ability.name;
    if (options.events.connecting) options.events.connecting(name);
    const auto started = deadline - options.connectTimeout;
    auto connection = std::make_shared<Connection>();
    connection->activation = wanted;
    *connection->roots = wanted.roots;
    auto finished = std::make_shared<bool>(false);
    auto timer = std::make_shared<asio::steady_timer>(io, deadline);
    bool isStdio = wanted.resolution.launch.has_value();

    auto finish = [this, batch, index, connection, finished, timer, started, isStdio,
                   name](Result<std::vector<mcp::Tool>> tools) {
      if (std::exchange(*finished, true)) return;
      timer->cancel();
      ConnectReport& report = batch->reports[index];
      report.elapsed =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
      if (connection->stdio) {
        report.stderrTail = connection->stdio->stderrTail();
        if (options.measureStartCpu) {
          report.cpu =
              processGroupCpuTime(connection->stdio->pid()).value_or(std::chrono::milliseconds(-1));
        }
      }
      if (isStdio) --batch->runningStdio;
      if (tools) {
        report.ok = true;
        report.rootsWait = connection->rootsWait;
        report.tools = *tools;
        connection->tools = std::move(*tools);
        if (connection->client) {
          report.protocolVersion = connection->client->serverInfo().protocolVersion;
          report.serverName = connection->client->serverInfo().name;
        }
        connections[name] = connection;
        if (options.events.connected) options.events.connected(report);
        finishOne(batch);
        return;
      }
      Error error = tools.error();
      if (error.context.empty()) error.context = name;
      report.error = std::move(error);
      if (options.events.connected) options.events.connected(report);
      // The failed server is ended before the batch counts as done: no child outlives it.
      closeConnection(connection, [this, batch] { finishOne(batch); });
    };

    timer->async_wait([this, finish, name](const boost::system::error_code& ec) {
      if (ec) return;
      finish(fail(ErrorCode::kTimeout,
                  "did not answer within " + seconds(options.connectTimeout) +
                      "; it is skipped (`kaja doctor --verbose` shows its stderr)",
                  name));
    });

    auto opened = openTransport(io, wanted.ability, wanted.resolution, options.closeGrace);
    if (!opened) {
      finish(std::unexpected(opened.error()));
      return;
    }
    connection->stdio = opened->stdio;
    mcp::ClientOptions clientOptions;
    // The host's own timer ends the connect at `deadline` and names the whole connectTimeout;
    // the client's is only a backstop, a moment later.
    clientOptions.connectTimeout =
        std::max(std::chrono::milliseconds(1),
                 std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now())) +
        kClientTimerSlack;
    clientOptions.requestTimeout = options.callTimeout;
    clientOptions.discover = discover;
    connection->client = mcp::Client::create(io, opened->transport, clientOptions);
    auto& client = *connection->client;
    if (wanted.ability.roots) {
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
    client.setWarningHandler([this, name](const std::string& text) { warn(name + ": " + text); });
    std::weak_ptr<Connection> weak = connection;
    client.setToolsChangedHandler([weak](const std::vector<mcp::Tool>& tools) {
      if (auto alive = weak.lock()) alive->tools = tools;
    });
    client.setClosedHandler([this, weak, name](const Error& error) {
      auto alive = weak.lock();
      auto it = connections.find(name);
      if (alive && it != connections.end() && it->second == alive) {
        connections.erase(it);
        warn(name + " disconnected: " + error.describe());
      }
    });
    client.connect([this, batch, index, discover, deadline, connection, finish, finished, timer,
                    name](Result<mcp::ServerInfo> info) {
      // A server that hangs up on server/discover (rather than answering with an error,
      // which the client handles itself) gets one more start, with initialize alone.
      if (!info && discover && info.error().code == ErrorCode::kConnect && !*finished) {
        *finished = true;
        timer->cancel();
        warn(name + ": the connection ended after server/discover (" + info.error().message +
             "); starting it again with initialize alone");
        closeConnection(connection, [this, batch, index, deadline] {
          startConnect(batch, index, /*discover=*/false, deadline);
        });
        return;
      }
      if (!info) {
        finish(std::unexpected(info.error()));
        return;
      }
      connection->client->listTools(
          [this, connection, finish](Result<std::vector<mcp::Tool>> tools) {
            // At 2026-07-28 a server cannot ask for roots on its own: it asks inside the
            // request that needs them (input_required), so there is nothing to wait for.
            if (!tools || !connection->activation.ability.roots || !options.waitForRoots ||
                connection->client->isStateless()) {
              finish(std::move(tools));
              return;
            }
            auto listed = Clock::now();
            waitForRoots(connection, [finish, connection, listed, tools = std::move(*tools)] {
              connection->rootsWait =
                  std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - listed);
              finish(tools);
            });
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
      bool keep =
          match != byName.end() && sameServer(connection->activation, wanted[match->second]);
      if (keep) {
        const Activation& next = wanted[match->second];
        if (!sameRoots(*connection->roots, next.roots)) {
          *connection->roots = next.roots;
          connection->client->notifyRootsChanged();
        }
        connection->activation = next;
        ConnectReport& report = batch->reports[match->second];
        report.ok = true;
        report.reused = true;
        report.tools = connection->tools;
        report.protocolVersion = connection->client->serverInfo().protocolVersion;
        report.serverName = connection->client->serverInfo().name;
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

  HostOptions options;
  LoopThread loop;
  asio::io_context& io;
  std::map<std::string, std::shared_ptr<Connection>> connections;  ///< touched on `io` only
};

Host::Host(HostOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Host::~Host() { closeAll(); }

std::vector<ConnectReport> Host::activate(std::vector<Activation> wanted) {
  return impl_->onLoop<std::vector<ConnectReport>>(
      [this, wanted = std::move(wanted)](std::function<void(std::vector<ConnectReport>)> done) {
        impl_->activate(wanted, std::move(done));
      });
}

std::vector<std::string> Host::connected() {
  return impl_->onLoop<std::vector<std::string>>([this](auto done) {
    std::vector<std::string> names;
    for (const auto& [name, connection] : impl_->connections) names.push_back(name);
    done(std::move(names));
  });
}

Result<std::vector<mcp::Tool>> Host::tools(const std::string& ability) {
  return impl_->onLoop<Result<std::vector<mcp::Tool>>>([this, ability](auto done) {
    auto it = impl_->connections.find(ability);
    if (it == impl_->connections.end()) {
      done(fail(ErrorCode::kConnect, "is not connected", ability));
      return;
    }
    done(it->second->tools);
  });
}

Result<mcp::ToolResult> Host::callTool(const std::string& ability, const std::string& tool,
                                       const mcp::Json& arguments,
                                       std::chrono::milliseconds timeout) {
  return impl_->onLoop<Result<mcp::ToolResult>>(
      [this, ability, tool, arguments, timeout](std::function<void(Result<mcp::ToolResult>)> done) {
        auto it = impl_->connections.find(ability);
        if (it == impl_->connections.end()) {
          done(fail(ErrorCode::kConnect, "is not connected", ability));
          return;
        }
        mcp::CallOptions call;
        call.timeout = timeout;
        it->second->client->callTool(tool, arguments, call, std::move(done));
      });
}

std::optional<pid_t> Host::serverPid(const std::string& ability) {
  return impl_->onLoop<std::optional<pid_t>>([this, ability](auto done) {
    auto it = impl_->connections.find(ability);
    if (it == impl_->connections.end() || !it->second->stdio) {
      done(std::optional<pid_t>());
      return;
    }
    done(std::optional<pid_t>(it->second->stdio->pid()));
  });
}

void Host::closeAll() {
  impl_->onLoop<bool>([this](const std::function<void(bool)>& done) {
    impl_->activate({}, [done](const std::vector<ConnectReport>&) { done(true); });
  });
}

}  // namespace kaja::core
