// The sandbox worker: marketplace in, per-user servers out, behind one HTTP listener.
#include "sandbox/worker.h"

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/manifest/cloud_eligibility.h"
#include "core/process/process_tree.h"
#include "core/server/http_front.h"
#include "sandbox/http_api.h"

namespace kaja::sandbox {
namespace asio = boost::asio;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

constexpr std::chrono::seconds kStatusEvery{1};

void setEnv(core::LaunchPlan& plan, const std::string& name, const std::string& value) {
  for (auto& var : plan.env) {
    if (var.name == name) {
      var.value = value;
      return;
    }
  }
  plan.env.push_back({name, value, false});
}

}  // namespace

std::string statusFile(const std::string& stateDir) { return stateDir + "/status.json"; }

std::uint64_t treeRssKb(pid_t pid) {
  std::uint64_t total = 0;
  std::vector<pid_t> todo{pid};
  for (std::size_t seen = 0; !todo.empty() && seen < 4096; ++seen) {
    const pid_t next = todo.back();
    todo.pop_back();
    std::ifstream status("/proc/" + std::to_string(next) + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.starts_with("VmRSS:")) total += std::strtoull(line.c_str() + 6, nullptr, 10);
    }
    for (const pid_t child : core::childrenOf(next)) todo.push_back(child);
  }
  return total;
}

struct Worker::Impl {
  Impl(asio::io_context& io, WorkerOptions options)
      : io(io), options(std::move(options)), statusTimer(io) {}

  core::Result<core::Activation> activation(const ServerKey& key);
  ServerDirs dirs(const ServerKey& key) const;
  void released(const ServerKey& key);
  void writeStatus();

  asio::io_context& io;
  WorkerOptions options;
  std::map<std::string, std::pair<core::Ability, core::Resolution>> served;
  std::map<std::string, std::string> refusals;  ///< ability name: why it is not served
  std::vector<std::string> offeredLines;
  std::vector<std::string> refusedLines;
  std::unique_ptr<ServerPool> pool;
  std::unique_ptr<core::server::HttpFront> front;
  asio::steady_timer statusTimer;
  bool stopping = false;
};

ServerDirs Worker::Impl::dirs(const ServerKey& key) const {
  const std::string base =
      key.turn.empty()
          ? options.stateDir + "/users/" + key.user + "/" + key.ability
          : options.stateDir + "/turns/" + key.user + "/" + key.turn + "/" + key.ability;
  return {base + "/home", base + "/tmp"};
}

core::Result<core::Activation> Worker::Impl::activation(const ServerKey& key) {
  const auto found = served.find(key.ability);
  if (found == served.end()) {
    return core::fail(core::ErrorCode::kNotFound, "this sandbox does not run " + key.ability);
  }
  const ServerDirs where = dirs(key);
  std::error_code ec;
  for (const auto& dir : {where.home, where.tmp}) {
    fs::create_directories(dir, ec);
    fs::permissions(dir, fs::perms::owner_all, ec);
  }
  if (ec) {
    return core::fail(core::ErrorCode::kIo, "the sandbox could not make the folders of " +
                                                key.text() + ": " + ec.message());
  }
  core::Activation made;
  made.ability = found->second.first;
  made.resolution = found->second.second;
  core::LaunchPlan plan = *made.resolution.launch;
  setEnv(plan, "HOME", where.home);
  setEnv(plan, "TMPDIR", where.tmp);
  plan.workingDir = where.home;
  if (options.confine) {
    auto confined = options.confine(plan, key, where);
    if (!confined) return std::unexpected(confined.error());
    plan = std::move(*confined);
  }
  made.resolution.launch = std::move(plan);
  return made;
}

void Worker::Impl::released(const ServerKey& key) {
  const ServerDirs where = dirs(key);
  std::error_code ec;
  fs::remove_all(where.tmp, ec);
  // A shared worker's turn leaves nothing behind, a login included.
  if (!key.turn.empty()) fs::remove_all(fs::path(where.home).parent_path(), ec);
  if (options.released) options.released(key);
}

void Worker::Impl::writeStatus() {
  Json servers = Json::array();
  for (const auto& server : pool->status()) {
    Json entry{{"user", server.key.user},
               {"ability", server.key.ability},
               {"ready", server.ready},
               {"sessions", server.sessions},
               {"inFlight", server.inFlight},
               {"idleSeconds", static_cast<std::int64_t>(server.idleSeconds)},
               {"calls", server.calls}};
    if (!server.key.turn.empty()) entry["turn"] = server.key.turn;
    if (server.pid) {
      entry["pid"] = *server.pid;
      entry["rssKb"] = treeRssKb(*server.pid);
    }
    servers.push_back(std::move(entry));
  }
  const Json status{
      {"pid", ::getpid()},        {"listen", options.host + ":" + std::to_string(front->port())},
      {"shared", options.shared}, {"idleSeconds", options.idle.count() / 1000},
      {"updated", unixNow()},     {"servers", std::move(servers)}};
  const std::string path = statusFile(options.stateDir);
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::trunc);
    out << status.dump() << '\n';
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
}

core::Result<std::unique_ptr<Worker>> Worker::create(asio::io_context& io, WorkerOptions options) {
  if (options.stateDir.empty()) {
    return core::fail(core::ErrorCode::kUsage, "the sandbox worker needs a state folder");
  }
  std::error_code ec;
  fs::create_directories(options.stateDir, ec);
  fs::permissions(options.stateDir, fs::perms::owner_all, ec);
  if (ec) {
    return core::fail(core::ErrorCode::kIo, "cannot make the sandbox state folder " +
                                                options.stateDir + ": " + ec.message());
  }
  if (!options.runners) options.runners = core::RunnerContext::fromProcess({});
  auto impl = std::make_unique<Impl>(io, std::move(options));
  for (const auto& ability : impl->options.abilities) {
    if (auto why = core::cloudRefusal(ability, impl->options.shared)) {
      impl->refusals.emplace(ability.name, *why);
      impl->refusedLines.push_back(*why);
      continue;
    }
    core::Resolution resolution = core::resolveAbility(ability, *impl->options.runners, {});
    if (resolution.state != core::AbilityState::kOn || !resolution.launch) {
      const std::string why =
          "ability " + ability.name + " cannot start here: " + resolution.reason;
      impl->refusals.emplace(ability.name, why);
      impl->refusedLines.push_back(why);
      continue;
    }
    impl->offeredLines.push_back(ability.name + ": " + resolution.runs(true));
    impl->served.emplace(ability.name, std::make_pair(ability, std::move(resolution)));
  }
  PoolOptions pool;
  pool.idle = impl->options.idle;
  pool.shared = impl->options.shared;
  pool.activation = [raw = impl.get()](const ServerKey& key) { return raw->activation(key); };
  pool.stopped = [raw = impl.get()](const ServerKey& key) { raw->released(key); };
  pool.gateway.names = core::gateway::NameStyle::kBare;
  pool.gateway.home = impl->options.stateDir;
  pool.gateway.host.connectTimeout = impl->options.connectTimeout;
  pool.gateway.host.callTimeout = impl->options.callTimeout;
  pool.gateway.host.maxParallelStdio = 8;
  pool.gateway.log = impl->options.log;
  // Long results go back whole: the kaja host that called in applies its own output guard.
  constexpr std::size_t kWhole = std::size_t{64} * 1024 * 1024;
  pool.gateway.pipeline.limits = {kWhole, kWhole, kWhole, kWhole};
  impl->pool = std::make_unique<ServerPool>(io, std::move(pool));

  core::server::HttpFrontOptions front;
  front.host = impl->options.host;
  front.port = impl->options.port;
  ApiSettings api;
  api.key = impl->options.key;
  api.shared = impl->options.shared;
  api.pool = impl->pool.get();
  api.refusal = [raw = impl.get()](const std::string& ability) -> std::optional<std::string> {
    if (raw->served.contains(ability)) return std::nullopt;
    if (const auto found = raw->refusals.find(ability); found != raw->refusals.end()) {
      return found->second;
    }
    return "it has no ability of that name";
  };
  front.router = makeRouter(std::move(api));
  // Every server process has its own session; a worker holds many users.
  front.maxSessions = 4096;
  front.maxConnections = 2048;
  auto made = core::server::HttpFront::create(io, {}, std::move(front));
  if (!made) return std::unexpected(made.error());
  impl->front = std::move(*made);
  return std::unique_ptr<Worker>(new Worker(std::move(impl)));
}

Worker::Worker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Worker::~Worker() = default;

void Worker::start() {
  impl_->front->start();
  auto tick = std::make_shared<std::function<void()>>();
  *tick = [this, tick] {
    if (impl_->stopping) return;
    impl_->writeStatus();
    impl_->statusTimer.expires_after(kStatusEvery);
    impl_->statusTimer.async_wait([this, tick](const boost::system::error_code& ec) {
      if (!ec) (*tick)();
    });
  };
  (*tick)();
}

void Worker::stop(std::function<void()> done) {
  if (std::exchange(impl_->stopping, true)) return;
  impl_->statusTimer.cancel();
  impl_->front->stop();
  std::error_code ec;
  fs::remove(statusFile(impl_->options.stateDir), ec);
  impl_->pool->stop(std::move(done));
}

std::uint16_t Worker::port() const { return impl_->front->port(); }

const std::vector<std::string>& Worker::offered() const { return impl_->offeredLines; }

const std::vector<std::string>& Worker::refused() const { return impl_->refusedLines; }

std::vector<ServerStatus> Worker::status() const { return impl_->pool->status(); }

}  // namespace kaja::sandbox
