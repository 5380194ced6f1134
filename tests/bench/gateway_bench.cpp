// gateway_bench: a tool call through `kaja serve` against the same call made directly to
// the server, side by side in one run. Both sides are stdio: this program is the client
// (kaja's own async Client) and the server is tests/bench/echo_server, started either
// directly or as the one ability of a persona that `kaja serve --names bare` offers.
//
//   build/bin/gateway_bench [--calls N] [--rounds R] [--inflight K] [--warmup W]
//
// Each round runs direct and gateway once per mode (sequential, then K in flight), in an
// order that alternates from round to round, so machine noise falls on both. The table
// shows medians over the rounds; the gateway's RSS is kaja serve's own (VmHWM), without
// the server it runs.

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

namespace kaja::bench {
namespace {

namespace fs = std::filesystem;
constexpr const char* kMessage = "kaja gateway benchmark: echo me!";

struct Options {
  int calls = 2000;
  int rounds = 3;
  int inflight = 8;
  int warmup = 200;
};

// Returns VmHWM of `pid` in kB (0 when unknown).
long peakRssOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("VmHWM:")) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

struct Home {
  std::string root;
  std::vector<core::EnvVar> env;
};

// A private home whose only persona offers echo_server as the ability "echo".
Home makeHome(const std::string& echo) {
  Home home;
  home.root = fs::temp_directory_path() / ("kaja-gateway-bench-" + std::to_string(getpid()));
  fs::create_directories(home.root + "/market/abilities/echo");
  fs::create_directories(home.root + "/market/personas");
  fs::create_directories(home.root + "/config");
  fs::create_directories(home.root + "/data");
  std::ofstream(home.root + "/market/abilities/echo/mcp.toml")
      << "description = \"echo\"\ntransport = \"stdio\"\ncommand = \"" << echo
      << "\"\napproval = \"never\"\n";
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
};

// Connects to `plan`, warms up, times the calls; for the gateway, reads kaja's peak RSS.
core::Result<Sample> measure(const core::LaunchPlan& plan, const Options& options, int inflight,
                             bool gateway) {
  namespace mcp = core::mcp;
  boost::asio::io_context io;
  auto transport = mcp::StdioTransport::spawn(io, plan, {.serverName = "bench"});
  if (!transport) return std::unexpected(transport.error());
  auto client = mcp::Client::create(io, *transport);
  bool ready = false;
  std::optional<core::Error> failure;
  client->connect([&](core::Result<mcp::ServerInfo> info) {
    if (!info) failure = info.error();
    ready = true;
  });
  detail::runUntil(io, ready);
  if (failure) return std::unexpected(*failure);
  WorkerSpec spec;
  spec.inflight = inflight;
  spec.message = kMessage;
  double wall = 0;
  if (auto warm = detail::timeCalls(io, *client, spec, options.warmup, wall); !warm) {
    return std::unexpected(warm.error());
  }
  auto latencies = detail::timeCalls(io, *client, spec, options.calls, wall);
  if (!latencies) return std::unexpected(latencies.error());
  RunStats stats;
  summarize(std::move(*latencies), wall, stats);
  Sample sample{stats.p50Us, stats.p99Us, stats.callsPerSecond, 0};
  if (gateway) sample.rssKb = peakRssOf((*transport)->pid());
  bool closed = false;
  client->close([&] { closed = true; });
  detail::runUntil(io, closed);
  return sample;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

int run(const Options& options) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const std::string echo = (self.parent_path() / "echo_server").string();
  const std::string kaja = (self.parent_path() / "kaja").string();
  Home home = makeHome(echo);
  core::LaunchPlan direct;
  direct.argv = {echo};
  direct.env = home.env;
  core::LaunchPlan gateway;
  gateway.argv = {std::getenv("KAJA_BENCH_WRAP") ? std::getenv("KAJA_BENCH_WRAP") : kaja, "serve",
                  "--names", "bare"};
  gateway.env = home.env;

  // [mode][side] -> samples
  std::map<std::string, std::vector<Sample>> samples;
  for (int round = 0; round < options.rounds; ++round) {
    for (int inflight : {1, options.inflight}) {
      const std::string mode =
          inflight == 1 ? "sequential" : std::to_string(inflight) + " in flight";
      for (int turn = 0; turn < 2; ++turn) {
        const bool throughGateway = (turn + round) % 2 == 0;
        auto sample = measure(throughGateway ? gateway : direct, options, inflight, throughGateway);
        if (!sample) {
          std::fprintf(stderr, "gateway_bench: %s\n", sample.error().describe().c_str());
          fs::remove_all(home.root, ec);
          return 1;
        }
        samples[mode + (throughGateway ? "|gateway" : "|direct")].push_back(*sample);
      }
    }
    std::fprintf(stderr, "round %d of %d done\n", round + 1, options.rounds);
  }
  fs::remove_all(home.root, ec);

  std::printf("%-14s %-8s %10s %10s %10s %12s\n", "mode", "side", "p50 us", "p99 us", "calls/s",
              "kaja RSS kB");
  for (const char* mode : {"sequential", "8 in flight"}) {
    std::string key = mode;
    if (key != "sequential") key = std::to_string(options.inflight) + " in flight";
    std::map<std::string, double> p50;
    std::map<std::string, double> rate;
    for (const char* side : {"direct", "gateway"}) {
      const auto& list = samples[key + "|" + side];
      std::vector<double> a, b, c;
      long rss = 0;
      for (const auto& s : list) {
        a.push_back(s.p50);
        b.push_back(s.p99);
        c.push_back(s.callsPerSecond);
        rss = std::max(rss, s.rssKb);
      }
      p50[side] = median(a);
      rate[side] = median(c);
      std::printf("%-14s %-8s %10.1f %10.1f %10.0f %12s\n", key.c_str(), side, median(a), median(b),
                  median(c), rss > 0 ? std::to_string(rss).c_str() : "-");
    }
    std::printf("%-14s added p50 %.1f us, calls/s %.2fx direct\n", key.c_str(),
                p50["gateway"] - p50["direct"],
                rate["direct"] > 0 ? rate["gateway"] / rate["direct"] : 0.0);
  }
  return 0;
}

}  // namespace
}  // namespace kaja::bench

int main(int argc, char** argv) {
  kaja::bench::Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
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
                   "usage: gateway_bench [--calls N] [--rounds R] [--inflight K] [--warmup W]\n");
      return 2;
    }
  }
  return kaja::bench::run(options);
}
