// The sandbox worker: marketplace in, per-user servers out, behind one HTTP listener.
#include "sandbox/worker.h"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/manifest/cloud_eligibility.h"
#include "core/process/process_tree.h"
#include "core/server/http_front.h"
#include "core/util/sys.h"
#include "sandbox/cgroups.h"
#include "sandbox/confine.h"
#include "sandbox/egress_proxy.h"
#include "sandbox/http_api.h"

namespace kaja::sandbox {
namespace asio = boost::asio;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

constexpr std::chrono::seconds kStatusEvery{1};

/// The mode of the state folder and of those between it and each server's home and tmp when
/// servers run as another user: that user's group may pass through, never list or write.
constexpr auto kPassThrough = fs::perms::owner_all | fs::perms::group_exec;

core::Result<void> giveGroup(const std::string& dir, const RunAs& who) {
  std::error_code ec;
  fs::permissions(dir, kPassThrough, ec);
  if (ec) return core::fail(core::ErrorCode::kIo, "chmod " + dir + ": " + ec.message());
  if (::lchown(dir.c_str(), static_cast<uid_t>(-1), who.gid) != 0) {
    return core::fail(core::ErrorCode::kIo, core::syscallMessage("lchown", dir, errno));
  }
  return {};
}

/// Lets the servers' user `who` pass through the state folder, and checks that it can reach
/// it and run `programs` (kaja and bwrap), so that a worker that could start no server
/// says so at once.
core::Result<void> openStateDir(const std::string& stateDir, const RunAs& who,
                                const std::vector<std::string>& programs) {
  if (auto given = giveGroup(stateDir, who); !given) return given;
  std::vector<std::string> paths{stateDir};
  paths.insert(paths.end(), programs.begin(), programs.end());
  auto reachable = accessibleTo(who, paths, X_OK);
  if (!reachable) return std::unexpected(reachable.error());
  if (!(*reachable)[0]) {
    return core::fail(core::ErrorCode::kUsage,
                      "the servers' user \"" + who.name + "\" cannot reach the state folder " +
                          stateDir +
                          " (a folder above it is closed to others); give --state a folder it "
                          "can reach, such as /var/lib/kaja-sandbox, or another --run-as");
  }
  for (std::size_t i = 1; i < paths.size(); ++i) {
    if (!(*reachable)[i]) {
      return core::fail(core::ErrorCode::kUsage,
                        "the servers' user \"" + who.name + "\" cannot run " + paths[i] +
                            "; install it where others may read and run it");
    }
  }
  return {};
}

/// Drops from `paths` what `who` cannot reach (bwrap, running as `who`, could not show it
/// and would start no server), saying so through `log`.
void keepReachable(std::vector<std::string>& paths, const RunAs& who,
                   const std::function<void(const std::string&)>& log) {
  const auto reachable = accessibleTo(who, paths, F_OK);
  if (!reachable) return;
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    std::error_code ec;
    if ((*reachable)[i]) {
      kept.push_back(paths[i]);
    } else if (fs::exists(paths[i], ec) && log) {
      log("servers will not see " + paths[i] + ": their user \"" + who.name + "\" cannot reach it");
    }
  }
  paths = std::move(kept);
}

}  // namespace

std::vector<std::string> argumentPaths(const core::LaunchPlan& plan) {
  std::vector<std::string> out;
  constexpr std::string_view kModules = "/node_modules/";
  for (const auto& arg : plan.argv) {
    if (!arg.starts_with('/')) continue;
    std::error_code ec;
    const std::string real = fs::canonical(arg, ec).string();
    // Only a regular file, after every link: never a folder, a socket or a device.
    if (ec || !fs::is_regular_file(real, ec) || ec) continue;
    const auto modules = real.rfind(kModules);
    if (modules != std::string::npos) out.push_back(real.substr(0, modules + kModules.size() - 1));
  }
  return out;
}

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
  core::Result<void> makeDirs(const ServerDirs& where) const;
  core::Result<core::LaunchPlan> confined(const core::LaunchPlan& plan, const ServerKey& key,
                                          const ServerDirs& where);
  void released(const ServerKey& key);
  void writeStatus();

  asio::io_context& io;
  WorkerOptions options;
  std::map<std::string, std::pair<core::Ability, core::Resolution>> served;
  std::map<std::string, std::string> refusals;  ///< ability name: why it is not served
  std::vector<std::string> offeredLines;
  std::vector<std::string> refusedLines;
  std::optional<CgroupTree> cgroups;
  std::string limitsOff;
  std::map<ServerKey, ServerCgroup> groups;
  std::uint64_t nextGroup = 1;
  std::unique_ptr<EgressProxy> egress;
  std::string egressSocket;
  std::optional<RunAs> runAs;  ///< whom confined servers run as; nullopt: the worker's user
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

core::Result<void> Worker::Impl::makeDirs(const ServerDirs& where) const {
  std::error_code ec;
  // A fresh /tmp each start: nothing the last run left there (a link where a mount point
  // goes, say) carries over.
  fs::remove_all(where.tmp, ec);
  ec.clear();
  for (const auto& dir : {where.home, where.tmp}) {
    fs::create_directories(dir, ec);
    if (ec) return core::fail(core::ErrorCode::kIo, ec.message());
    fs::permissions(dir, fs::perms::owner_all, ec);
    if (ec) return core::fail(core::ErrorCode::kIo, ec.message());
    if (runAs && ::lchown(dir.c_str(), runAs->uid, runAs->gid) != 0) {
      return core::fail(core::ErrorCode::kIo, core::syscallMessage("lchown", dir, errno));
    }
  }
  if (!runAs) return {};
  // The folders between the state folder and these two: passable by the servers' group only.
  for (fs::path dir = fs::path(where.home).parent_path();
       dir.string().size() > options.stateDir.size() && dir.string().starts_with(options.stateDir);
       dir = dir.parent_path()) {
    if (auto given = giveGroup(dir.string(), *runAs); !given) return given;
  }
  return {};
}

core::Result<core::Activation> Worker::Impl::activation(const ServerKey& key) {
  const auto found = served.find(key.ability);
  if (found == served.end()) {
    return core::fail(core::ErrorCode::kNotFound, "this sandbox does not run " + key.ability);
  }
  const ServerDirs where = dirs(key);
  if (auto made = makeDirs(where); !made) {
    return core::fail(core::ErrorCode::kIo, "the sandbox could not make the folders of " +
                                                key.text() + ": " + made.error().message);
  }
  core::Activation made;
  made.ability = found->second.first;
  made.resolution = found->second.second;
  core::LaunchPlan plan = *made.resolution.launch;
  if (options.isolate) {
    auto confinedPlan = confined(plan, key, where);
    if (!confinedPlan) return std::unexpected(confinedPlan.error());
    plan = std::move(*confinedPlan);
  } else {
    core::setEnvVar(plan.env, "HOME", where.home);
    core::setEnvVar(plan.env, "TMPDIR", where.tmp);
    plan.workingDir = where.home;
  }
  made.resolution.launch = std::move(plan);
  return made;
}

core::Result<core::LaunchPlan> Worker::Impl::confined(const core::LaunchPlan& plan,
                                                      const ServerKey& key,
                                                      const ServerDirs& where) {
  Confinement confinement;
  confinement.kaja = options.kaja;
  confinement.home = where.home;
  confinement.tmp = where.tmp;
  confinement.readOnly = options.readOnly;
  for (auto& path : argumentPaths(plan)) confinement.readOnly.push_back(std::move(path));
  confinement.hidden = options.hidden;
  confinement.hidden.push_back(options.keyFile);
  confinement.hidden.push_back(options.stateDir);
  confinement.nestedUserNamespaces =
      std::ranges::find(options.userNamespaces, key.ability) != options.userNamespaces.end();
  confinement.egressSocket = egressSocket;
  confinement.runAs = runAs;
  if (cgroups && (options.memoryBytes > 0 || options.pids > 0)) {
    groups.erase(key);
    auto group = cgroups->create("s" + std::to_string(nextGroup++),
                                 CgroupLimits{options.memoryBytes, options.pids});
    if (!group) return std::unexpected(group.error());
    confinement.cgroups = group->folders();
    groups.emplace(key, std::move(*group));
  }
  // confine() sets HOME and TMPDIR to the inside ones and starts in the inside home; the
  // host's PATH names host folders, and inside there is only the system's.
  core::LaunchPlan inside = plan;
  inside.workingDir.clear();
  core::setEnvVar(inside.env, "PATH", "/usr/local/bin:/usr/bin:/bin");
  return confine(inside, confinement);
}

void Worker::Impl::released(const ServerKey& key) {
  if (const auto found = groups.find(key); found != groups.end()) {
    // Removing a group waits for its processes to die: off the event loop.
    std::thread([group = std::move(found->second)]() mutable { (void)group.remove(); }).detach();
    groups.erase(found);
  }
  const ServerDirs where = dirs(key);
  std::error_code ec;
  fs::remove_all(where.tmp, ec);
  // A shared worker's turn leaves nothing behind, a login included.
  if (!key.turn.empty()) {
    const fs::path ability = fs::path(where.home).parent_path();
    fs::remove_all(ability, ec);
    // The turn's folder, and the user's, once nothing else is in them.
    fs::remove(ability.parent_path(), ec);
    fs::remove(ability.parent_path().parent_path(), ec);
  }
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
  // The servers' user may enter the state folder: it must not read who uses the worker.
  std::error_code ec;
  fs::permissions(temp, fs::perms::owner_read | fs::perms::owner_write, ec);
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
  // A turn lives only as long as the worker that ran it: the homes of turns an earlier run
  // did not end (it crashed or was stopped) are removed, so that no login outlives its
  // turn, even when a later turn reuses the id. Users' own homes are kept.
  fs::remove_all(options.stateDir + "/turns", ec);
  if (ec) {
    return core::fail(core::ErrorCode::kIo,
                      "cannot remove the turn folders an earlier run left in " + options.stateDir +
                          ": " + ec.message());
  }
  if (!options.runners) options.runners = core::RunnerContext::fromProcess({});
  if (options.kaja.empty()) options.kaja = fs::read_symlink("/proc/self/exe", ec).string();
  std::optional<RunAs> runAs;
  if (options.isolate) {
    auto bwrap = findBwrap(Confinement{});
    if (!bwrap) return std::unexpected(bwrap.error());
    auto who = resolveRunAs(options.runAs, ::geteuid());
    if (!who) return std::unexpected(who.error());
    runAs = *who;
    if (runAs) {
      if (auto opened = openStateDir(options.stateDir, *runAs, {options.kaja, *bwrap}); !opened) {
        return std::unexpected(opened.error());
      }
      keepReachable(options.readOnly, *runAs, options.log);
    }
  }
  auto impl = std::make_unique<Impl>(io, std::move(options));
  impl->runAs = runAs;
  if (impl->options.isolate && (impl->options.memoryBytes > 0 || impl->options.pids > 0)) {
    auto tree = CgroupTree::open("kaja-sandbox-" + std::to_string(::getpid()));
    if (tree) {
      impl->cgroups = std::move(*tree);
    } else {
      impl->limitsOff = tree.error().message;
    }
  }
  for (const auto& ability : impl->options.abilities) {
    if (auto why = core::cloudRefusal(ability, impl->options.shared)) {
      impl->refusals.emplace(ability.name, *why);
      impl->refusedLines.push_back(*why);
      continue;
    }
    core::Resolution resolution = core::resolveAbility(ability, *impl->options.runners, {});
    if (resolution.state != core::AbilityState::kOn || !resolution.launch) {
      // A refusal by the allow-list names the ability and the fix already.
      const std::string why =
          resolution.state == core::AbilityState::kRefused
              ? resolution.reason
              : "ability " + ability.name + " cannot start here: " + resolution.reason;
      impl->refusals.emplace(ability.name, why);
      impl->refusedLines.push_back(why);
      continue;
    }
    impl->offeredLines.push_back(ability.name + ": " + resolution.runs(true));
    impl->served.emplace(ability.name, std::make_pair(ability, std::move(resolution)));
  }
  if (impl->options.isolate && impl->options.egress) {
    EgressOptions egress;
    egress.socketPath = impl->options.stateDir + "/egress.sock";
    egress.allowPrivate = impl->options.allowPrivate;
    egress.socketOwner = impl->runAs;
    egress.log = impl->options.log;
    auto proxy = EgressProxy::create(io, std::move(egress));
    if (!proxy) return std::unexpected(proxy.error());
    impl->egress = std::move(*proxy);
    impl->egressSocket = impl->options.stateDir + "/egress.sock";
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
  // A server that keeps reporting progress on a call whose client left still loses it then.
  pool.gateway.host.callTimeLimit = impl->options.callTimeout;
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
  api.maxServers = impl->options.maxServers;
  api.maxPerUser = impl->options.maxPerUser;
  api.refusal = [raw = impl.get()](const std::string& ability) -> std::optional<std::string> {
    if (raw->served.contains(ability)) return std::nullopt;
    if (const auto found = raw->refusals.find(ability); found != raw->refusals.end()) {
      return found->second;
    }
    return "it has no ability of that name";
  };
  front.router = makeRouter(std::move(api));
  // Every server process has its own session; a worker holds many users.
  front.maxSessions = std::max<std::size_t>(4096, impl->options.maxServers * 4);
  front.maxConnections = 4096;
  // No user may hold more than a share of the sessions (a session nobody uses ends after
  // the front's 30 minutes).
  front.maxSessionsPerOwner = std::max<std::size_t>(64, impl->options.maxPerUser * 4);
  // A connection that sends nothing (or headers a byte at a time) is dropped sooner.
  front.idleTimeout = std::chrono::seconds(20);
  auto made = core::server::HttpFront::create(io, {}, std::move(front));
  if (!made) return std::unexpected(made.error());
  impl->front = std::move(*made);
  return std::unique_ptr<Worker>(new Worker(std::move(impl)));
}

Worker::Worker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Worker::~Worker() = default;

void Worker::start() {
  impl_->front->start();
  if (impl_->egress) impl_->egress->start();
  // The waiting timer holds the tick, and the tick only a weak reference to itself: a tick
  // that held itself would never be freed (LeakSanitizer found that cycle).
  auto tick = std::make_shared<std::function<void()>>();
  *tick = [this, weak = std::weak_ptr<std::function<void()>>(tick)] {
    if (impl_->stopping) return;
    impl_->writeStatus();
    impl_->statusTimer.expires_after(kStatusEvery);
    impl_->statusTimer.async_wait([next = weak.lock()](const boost::system::error_code& ec) {
      if (!ec && next) (*next)();
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
  impl_->pool->stop([this, done = std::move(done)] {
    if (impl_->egress) impl_->egress->stop();
    if (done) done();
  });
}

std::uint16_t Worker::port() const { return impl_->front->port(); }

const std::vector<std::string>& Worker::offered() const { return impl_->offeredLines; }

const std::vector<std::string>& Worker::refused() const { return impl_->refusedLines; }

const std::string& Worker::limitsOff() const { return impl_->limitsOff; }

std::vector<ServerStatus> Worker::status() const { return impl_->pool->status(); }

}  // namespace kaja::sandbox
