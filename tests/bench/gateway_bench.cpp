// gateway_bench: a tool call through `kaja serve` against the same call made directly to
// the server, side by side in one run. Both sides are stdio: this program is the client
// (kaja's own async Client) and the server is tests/bench/echo_server (or, with
// `--server everything`, server-everything's echo tool on Node), started either directly or
// as the one ability of a persona that `kaja serve --names bare` offers.
//
//   build/bin/gateway_bench [--server echo|everything] [--calls N] [--rounds R]
//                           [--inflight K] [--warmup W]
//   build/bin/gateway_bench --shipped
//
// A third side, pipe_relay, puts a process that only copies bytes between the client and the
// server: the floor for any gateway, whose extra process and two pipe hops it pays too. Each
// round runs the three sides once per mode (sequential, then K in flight), each round
// starting with another, so machine noise falls on all of them. The table
// shows medians over the rounds; the gateway's RSS is kaja serve's own (VmHWM), without
// the server it runs, and beside it the pages it wrote (private dirty).
//
// --shipped measures memory alone: kaja serve with a persona of every shipped ability, once
// to fill the metadata cache and then again with the lazy abilities answered from it, against
// `kaja --version`, which loads the same binary and libraries and does nothing. It needs no
// network: a stand-in bunx, first on PATH, runs each npm ability's package from tests/npm,
// whose lockfile pins the versions the manifests name (it refuses any other version), and the
// Google Maps ability gets a made-up key, which listing its tools never uses. The PyPI ability
// (time) and the remote one (context7) cannot start offline; the bench says which abilities
// the cache lacks.

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/bench/bench_support.h"
#include "tests/bench/client_bench_workers.h"
#include "tests/bench/run_kaja.h"
#include "tests/support/build_paths.h"

namespace kaja::bench {
namespace {

namespace fs = std::filesystem;
constexpr const char* kMessage = "kaja gateway benchmark: echo me!";

struct Options {
  std::string server = "echo";  ///< "echo" (tests/bench/echo_server) or "everything"
  bool shipped = false;         ///< measure memory with the shipped marketplace instead
  int calls = 2000;
  int rounds = 3;
  int inflight = 8;
  int warmup = 200;
};

// Returns VmHWM of `pid` in kB (0 when unknown).
long peakRssOf(pid_t pid) {
  return procFieldKb("/proc/" + std::to_string(pid) + "/status", "VmHWM");
}

/// Pages of `pid` that it wrote and no other process shares (heap, stacks, relocated
/// library data): what it costs beyond the binary and libraries every kaja maps from disk.
long privateKb(pid_t pid) {
  return procFieldKb("/proc/" + std::to_string(pid) + "/smaps_rollup", "Private_Dirty");
}

// Nanoseconds `pid` has spent on a CPU, all its threads together (/proc/PID/task/*/schedstat:
// the scheduler's own count, user and kernel time, far finer than the 10 ms ticks of stat).
int64_t cpuNsOf(pid_t pid) {
  int64_t total = 0;
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "schedstat");
    int64_t ns = 0;
    if (in >> ns) total += ns;
  }
  return total;
}

struct Home {
  std::string root;
  std::vector<core::EnvVar> env;
};

// A private home whose only persona offers `server` (a command line) as the ability "echo".
Home makeHome(const std::vector<std::string>& server) {
  Home home;
  home.root = fs::temp_directory_path() / ("kaja-gateway-bench-" + std::to_string(getpid()));
  fs::create_directories(home.root + "/market/abilities/echo");
  fs::create_directories(home.root + "/market/personas");
  fs::create_directories(home.root + "/config");
  fs::create_directories(home.root + "/data");
  std::string args;
  for (std::size_t i = 1; i < server.size(); ++i) {
    args += (i > 1 ? ", \"" : "\"") + server[i] + "\"";
  }
  std::ofstream(home.root + "/market/abilities/echo/mcp.toml")
      << "description = \"echo\"\ntransport = \"stdio\"\ncommand = \"" << server[0]
      << "\"\nargs = [" << args << "]\napproval = \"never\"\n";
  std::ofstream(home.root + "/market/personas/default.toml") << "abilities = [\"echo\"]\n";
  home.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin", false},
              {"HOME", home.root, false},
              {"XDG_CONFIG_HOME", home.root + "/config", false},
              {"XDG_DATA_HOME", home.root + "/data", false},
              {"KAJA_SHIPPED_MARKETPLACE", home.root + "/market", false}};
  return home;
}

struct Sample {
  double p50 = 0;
  double p99 = 0;
  double callsPerSecond = 0;
  long rssKb = 0;
  long privateKb = 0;
  double cpuUsPerCall = 0;  ///< of the process the client talks to, over the timed calls
};

// Runs `client`'s connect (initialize) on `io` until it has an answer.
core::Result<void> connectNow(boost::asio::io_context& io, core::mcp::Client& client) {
  bool ready = false;
  std::optional<core::Error> failure;
  client.connect([&](core::Result<core::mcp::ServerInfo> info) {
    if (!info) failure = info.error();
    ready = true;
  });
  detail::runUntil(io, ready);
  if (failure) return std::unexpected(*failure);
  return {};
}

// Connects to `plan`, warms up, times the calls; for the gateway, reads kaja's peak RSS.
core::Result<Sample> measure(const core::LaunchPlan& plan, const Options& options, int inflight,
                             bool gateway) {
  namespace mcp = core::mcp;
  boost::asio::io_context io;
  auto transport = mcp::StdioTransport::spawn(io, plan, {.serverName = "bench"});
  if (!transport) return std::unexpected(transport.error());
  auto client = mcp::Client::create(io, *transport);
  if (auto connected = connectNow(io, *client); !connected) {
    return std::unexpected(connected.error());
  }
  WorkerSpec spec;
  spec.inflight = inflight;
  spec.message = kMessage;
  double wall = 0;
  if (auto warm = detail::timeCalls(io, *client, spec, options.warmup, wall); !warm) {
    return std::unexpected(warm.error());
  }
  const int64_t cpuBefore = cpuNsOf((*transport)->pid());
  auto latencies = detail::timeCalls(io, *client, spec, options.calls, wall);
  if (!latencies) return std::unexpected(latencies.error());
  const int64_t cpuAfter = cpuNsOf((*transport)->pid());
  RunStats stats;
  summarize(std::move(*latencies), wall, stats);
  Sample sample{stats.p50Us, stats.p99Us, stats.callsPerSecond, 0};
  sample.cpuUsPerCall = static_cast<double>(cpuAfter - cpuBefore) / 1000.0 / options.calls;
  if (gateway) {
    sample.rssKb = peakRssOf((*transport)->pid());
    sample.privateKb = privateKb((*transport)->pid());
  }
  bool closed = false;
  client->close([&] { closed = true; });
  detail::runUntil(io, closed);
  return sample;
}

// Connects to kaja serve as `plan` and lists its tools; when `peakKb` is given, fills in
// its peak RSS and private dirty kB (`ownKb`) while it still runs. Returns the tools' names.
core::Result<std::vector<std::string>> listThroughServe(const core::LaunchPlan& plan, long* peakKb,
                                                        long* ownKb) {
  namespace mcp = core::mcp;
  boost::asio::io_context io;
  auto transport = mcp::StdioTransport::spawn(io, plan, {.serverName = "kaja serve"});
  if (!transport) return std::unexpected(transport.error());
  auto client = mcp::Client::create(io, *transport);
  std::optional<core::Error> failure;
  if (auto connected = connectNow(io, *client); !connected) failure = connected.error();
  std::vector<std::string> tools;
  if (!failure) {
    bool listed = false;
    client->listTools([&](const core::Result<std::vector<mcp::Tool>>& list) {
      if (!list) failure = list.error();
      if (list) {
        for (const auto& tool : *list) tools.push_back(tool.name);
      }
      listed = true;
    });
    detail::runUntil(io, listed);
  }
  if (!failure && peakKb != nullptr) {
    *peakKb = peakRssOf((*transport)->pid());
    *ownKb = privateKb((*transport)->pid());
  }
  bool closed = false;
  client->close([&] { closed = true; });
  detail::runUntil(io, closed);
  if (failure) return std::unexpected(*failure);
  return tools;
}

// Returns the peak RSS in kB of `argv` run to its end (0 when it could not run).
long peakOfCommand(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return 0;
  int status = 0;
  rusage usage{};
  if (::wait4(pid, &status, 0, &usage) != pid) return 0;
  return usage.ru_maxrss;
}

// Writes DIR/bunx, which runs `bunx [--bun] NAME@VERSION ARGS...` from NPM/node_modules with
// node, offline, and fails with one line when NPM holds another version of NAME.
void writeBunxStandIn(const std::string& dir, const std::string& npm) {
  fs::create_directories(dir);
  const std::string file = dir + "/bunx";
  std::ofstream(file) << R"(#!/bin/sh
[ "$1" = --bun ] && shift
spec=$1
shift
case $spec in
  ?*@*) name=${spec%@*} version=${spec##*@} ;;
  *) name=$spec version= ;;
esac
dir=')" << npm << R"(/node_modules/'$name
bin=$(node -p 'const p = require(process.argv[1] + "/package.json");
  process.argv[2] && p.version !== process.argv[2] ? "" :
    typeof p.bin === "string" ? p.bin : Object.values(p.bin)[0]' "$dir" "$version" 2>/dev/null)
if [ -z "$bin" ]; then
  echo "bunx stand-in: tests/npm has no $spec; run npm ci in tests/npm" >&2
  exit 1
fi
exec node "$dir/$bin" "$@"
)";
  fs::permissions(file, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
}

// How the persona names `ability`: server-filesystem starts only with a folder to serve, as the
// shipped default persona gives it.
std::string personaEntry(const std::string& ability) {
  return ability == "filesystem" ? R"({ name = "filesystem", roots = ["~/Documents"] })"
                                 : "\"" + ability + "\"";
}

int runShipped() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const std::string kaja = (self.parent_path() / "kaja").string();
  const std::string shipped = std::string(kaja::test::sourceDir()) + "/marketplace";
  Home home;
  home.root = fs::temp_directory_path() / ("kaja-gateway-bench-" + std::to_string(getpid()));
  std::vector<std::string> shippedNames;
  std::string abilities;
  for (const auto& entry : fs::directory_iterator(shipped + "/abilities", ec)) {
    if (!fs::exists(entry.path() / "mcp.toml")) continue;
    shippedNames.push_back(entry.path().filename().string());
    abilities += (abilities.empty() ? "" : ", ") + personaEntry(shippedNames.back());
  }
  std::sort(shippedNames.begin(), shippedNames.end());
  fs::create_directories(home.root + "/config/kaja/marketplace/personas");
  fs::create_directories(home.root + "/data");
  fs::create_directories(home.root + "/Documents");
  fs::create_directories(home.root + "/Downloads");
  std::ofstream(home.root + "/config/kaja/marketplace/personas/shipped.toml")
      << "abilities = [" << abilities << "]\n";
  const std::string node = findNode();
  const std::string standIns = home.root + "/bin";
  writeBunxStandIn(standIns, std::string(kaja::test::sourceDir()) + "/tests/npm");
  home.env = {{"PATH",
               standIns + ":" +
                   (node.empty() ? std::string() : fs::path(node).parent_path().string() + ":") +
                   "/usr/local/bin:/usr/bin:/bin",
               false},
              {"HOME", home.root, false},
              {"XDG_CONFIG_HOME", home.root + "/config", false},
              {"XDG_DATA_HOME", home.root + "/data", false},
              {"KAJA_SHIPPED_MARKETPLACE", shipped, false}};
  std::vector<std::string> envText;
  for (const auto& var : home.env) envText.push_back(var.name + "=" + var.value);
  if (runKaja({"key", "set", "geo-service"}, envText, "bench-key-listing-tools-never-uses\n")
          .exitCode != 0) {
    std::fprintf(stderr, "gateway_bench: kaja key set geo-service failed\n");
  }
  core::LaunchPlan serve;
  serve.argv = {kaja, "serve", "--persona", "shipped"};
  serve.env = home.env;
  // The first run starts every server that can start here, to learn its tools.
  auto filled = listThroughServe(serve, nullptr, nullptr);
  if (!filled) {
    std::fprintf(stderr, "gateway_bench: %s\n", filled.error().describe().c_str());
    fs::remove_all(home.root, ec);
    return 1;
  }
  // The second lists only the abilities whose tools are cached now: one that could not start
  // here would be started again, which is not what this measures.
  std::map<std::string, std::size_t> cached;
  for (const auto& name : *filled) ++cached[name.substr(0, name.find("__"))];
  std::string names;
  std::string missing;
  for (const auto& ability : shippedNames) {
    const bool kept = cached.contains(ability);
    std::string& list = kept ? names : missing;
    list += (list.empty() ? "" : ", ") + (kept ? personaEntry(ability) : "\"" + ability + "\"");
  }
  std::ofstream(home.root + "/config/kaja/marketplace/personas/shipped.toml")
      << "abilities = [" << names << "]\n";
  long peak = 0;
  long own = 0;
  auto tools = listThroughServe(serve, &peak, &own);
  fs::remove_all(home.root, ec);
  if (!tools) {
    std::fprintf(stderr, "gateway_bench: %s\n", tools.error().describe().c_str());
    return 1;
  }
  const long idle = peakOfCommand({kaja, "--version"});
  std::printf("shipped persona: %zu of %zu abilities, %zu tools, listed from the metadata cache\n",
              cached.size(), shippedNames.size(), tools->size());
  for (const auto& [ability, count] : cached)
    std::printf("  %-20s %zu tools\n", ability.c_str(), count);
  if (!missing.empty()) std::printf("  could not start here, so left out: %s\n", missing.c_str());
  std::printf("kaja serve peak RSS %ld kB, private dirty %ld kB; kaja --version peak RSS %ld kB\n",
              peak, own, idle);
  return 0;
}

int run(const Options& options) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const std::string kaja = (self.parent_path() / "kaja").string();
  std::vector<std::string> server = {(self.parent_path() / "echo_server").string()};
  if (options.server == "everything") {
    const std::string node = findNode();
    if (node.empty()) {
      std::fprintf(stderr, "gateway_bench: --server everything needs node on PATH\n");
      return 1;
    }
    server = {node,
              std::string(kaja::test::sourceDir()) +
                  "/tests/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
              "stdio"};
  }
  Home home = makeHome(server);
  core::LaunchPlan direct;
  direct.argv = server;
  direct.env = home.env;
  core::LaunchPlan gateway;
  gateway.argv = {std::getenv("KAJA_BENCH_WRAP") ? std::getenv("KAJA_BENCH_WRAP") : kaja, "serve",
                  "--names", "bare"};
  gateway.env = home.env;

  // The floor of any process in the middle: pipe_relay copies bytes and parses nothing.
  core::LaunchPlan relay;
  relay.argv = server;
  relay.argv.insert(relay.argv.begin(), (self.parent_path() / "pipe_relay").string());
  relay.env = home.env;

  const std::vector<std::string> sides = {"direct", "relay", "gateway"};
  const auto planOf = [&](const std::string& side) -> const core::LaunchPlan& {
    return side == "direct" ? direct : side == "relay" ? relay : gateway;
  };
  // [mode|side] -> samples
  std::map<std::string, std::vector<Sample>> samples;
  for (int round = 0; round < options.rounds; ++round) {
    for (int inflight : {1, options.inflight}) {
      const std::string mode =
          inflight == 1 ? "sequential" : std::to_string(inflight) + " in flight";
      // Each round starts with another side, so machine noise falls on all three.
      for (std::size_t turn = 0; turn < sides.size(); ++turn) {
        const std::string& side = sides[(turn + static_cast<std::size_t>(round)) % sides.size()];
        auto sample = measure(planOf(side), options, inflight, side == "gateway");
        if (!sample) {
          std::fprintf(stderr, "gateway_bench: %s: %s\n", side.c_str(),
                       sample.error().describe().c_str());
          fs::remove_all(home.root, ec);
          return 1;
        }
        samples[mode + "|" + side].push_back(*sample);
      }
    }
    std::fprintf(stderr, "round %d of %d done\n", round + 1, options.rounds);
  }
  fs::remove_all(home.root, ec);

  std::printf("server: %s\n", options.server.c_str());
  // "CPU us/call" is that of the process the client talks to: the server itself (direct), the
  // relay alone, or kaja serve alone (not the server it runs).
  std::printf("%-14s %-8s %10s %10s %10s %12s %12s %12s\n", "mode", "side", "p50 us", "p99 us",
              "calls/s", "CPU us/call", "kaja RSS kB", "dirty kB");
  for (const char* mode : {"sequential", "8 in flight"}) {
    std::string key = mode;
    if (key != "sequential") key = std::to_string(options.inflight) + " in flight";
    std::map<std::string, double> p50;
    std::map<std::string, double> rate;
    for (const auto& side : sides) {
      const auto& list = samples[key + "|" + side];
      std::vector<double> a, b, c, cpu;
      long rss = 0;
      long own = 0;
      for (const auto& s : list) {
        a.push_back(s.p50);
        b.push_back(s.p99);
        c.push_back(s.callsPerSecond);
        cpu.push_back(s.cpuUsPerCall);
        rss = std::max(rss, s.rssKb);
        own = std::max(own, s.privateKb);
      }
      p50[side] = median(a);
      rate[side] = median(c);
      std::printf("%-14s %-8s %10.1f %10.1f %10.0f %12.1f %12s %12s\n", key.c_str(), side.c_str(),
                  median(a), median(b), median(c), median(cpu),
                  rss > 0 ? std::to_string(rss).c_str() : "-",
                  own > 0 ? std::to_string(own).c_str() : "-");
    }
    const auto ratio = [&](const char* over, const char* under) {
      return rate[under] > 0 ? rate[over] / rate[under] : 0.0;
    };
    std::printf(
        "%-14s added p50 %.1f us (relay %.1f us); calls/s %.2fx direct, relay %.2fx direct, "
        "kaja %.2fx relay\n",
        key.c_str(), p50["gateway"] - p50["direct"], p50["relay"] - p50["direct"],
        ratio("gateway", "direct"), ratio("relay", "direct"), ratio("gateway", "relay"));
  }
  return 0;
}

}  // namespace
}  // namespace kaja::bench

int main(int argc, char** argv) {
  kaja::bench::Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--shipped") {
      options.shipped = true;
      continue;
    }
    if (flag == "--server" && i + 1 < argc) {
      options.server = argv[++i];
      if (options.server != "echo" && options.server != "everything") {
        std::fprintf(stderr, "gateway_bench: --server is echo or everything, not '%s'\n",
                     options.server.c_str());
        return 2;
      }
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "gateway_bench: %s needs a value\n", flag.c_str());
      return 2;
    }
    ++i;
    const int value = std::atoi(argv[i]);
    if (value <= 0) {
      std::fprintf(stderr, "gateway_bench: %s needs a positive number\n", flag.c_str());
      return 2;
    }
    if (flag == "--calls") {
      options.calls = value;
    } else if (flag == "--rounds") {
      options.rounds = value;
    } else if (flag == "--inflight") {
      options.inflight = value;
    } else if (flag == "--warmup") {
      options.warmup = value;
    } else {
      std::fprintf(stderr,
                   "usage: gateway_bench [--server echo|everything] [--calls N] [--rounds R] "
                   "[--inflight K] [--warmup W]\n       gateway_bench --shipped\n");
      return 2;
    }
  }
  return options.shipped ? kaja::bench::runShipped() : kaja::bench::run(options);
}
