// client_bench: kaja's MCP client against the official TypeScript SDK clients, same
// machine, same run, same server-everything `echo` tool over stdio; and kaja's client
// against a raw-pipe floor on a minimal C++ echo server (tests/bench/echo_server.cpp).
//
//   build/bin/client_bench [--calls N] [--inflight K] [--rounds R] [--warmup W]
//                          [--floor-calls M]
//
// Every measured client runs in a process of its own (this program re-executed with
// --worker, or node with tests/bench/sdk_client_bench.mjs), which starts its own server
// and prints one JSON line: p50/p99 latency, calls/s, and its own VmHWM, which therefore
// never includes a server. Each round runs every contender once per mode, in an order
// that rotates from round to round, so machine noise falls on all of them; a warm-up
// pass first runs each one briefly and is discarded, and each worker warms up its own
// connection before timing. The table shows medians over the rounds (peak RSS: the max).

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/bench/bench_support.h"
#include "tests/bench/client_bench_workers.h"
#include "tests/support/build_paths.h"

namespace kaja::bench {
namespace {

namespace fs = std::filesystem;

// 32 bytes, the size of a short tool argument.
constexpr const char* kMessage = "kaja client benchmark: echo me!!";

/// The command line, for the driver and its workers alike.
struct Options {
  int calls = 2000;
  int inflight = 8;
  int rounds = 3;
  int warmup = 200;
  int floorCalls = 0;  ///< calls per echo_server run; 0: ten times `calls`
  std::string worker;  ///< "kaja" or "raw" in a worker process
  std::string server;  ///< "everything" or "echo" in a worker process
};

/// Paths everything else is found from.
struct Paths {
  std::string self;        ///< this program
  std::string echo;        ///< echo_server beside it
  std::string node;        ///< node's absolute path
  std::string npm;         ///< tests/npm/node_modules/@modelcontextprotocol
  std::string everything;  ///< server-everything's entry script
  std::string driver;      ///< tests/bench/sdk_client_bench.mjs
};

Paths findPaths() {
  Paths paths;
  std::error_code ec;
  paths.self = fs::read_symlink("/proc/self/exe", ec).string();
  paths.echo = (fs::path(paths.self).parent_path() / "echo_server").string();
  paths.node = findNode();
  paths.npm =
      std::string(kaja::test::sourceDir()) + "/tests/npm/node_modules/@modelcontextprotocol";
  paths.everything = paths.npm + "/server-everything/dist/index.js";
  paths.driver = std::string(kaja::test::sourceDir()) + "/tests/bench/sdk_client_bench.mjs";
  return paths;
}

core::LaunchPlan minimalPlan(std::vector<std::string> argv) {
  core::LaunchPlan plan;
  plan.argv = std::move(argv);
  plan.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin", false}, {"HOME", "/tmp", false}};
  return plan;
}

/// Returns an npm package's version from its package.json ("" when it is not installed).
std::string packageVersion(const std::string& dir) {
  std::ifstream in(dir + "/package.json");
  if (!in) return "";
  const auto json = nlohmann::json::parse(in, nullptr, false);
  return json.is_object() ? json.value("version", "") : "";
}

int runWorker(const Options& options, const Paths& paths) {
  WorkerSpec spec;
  spec.serverName = options.server;
  spec.calls = options.calls;
  spec.inflight = options.inflight;
  spec.warmup = options.warmup;
  spec.message = kMessage;
  spec.server = options.server == "echo" ? minimalPlan({paths.echo})
                                         : minimalPlan({paths.node, paths.everything, "stdio"});
  auto stats = options.worker == "raw" ? runRawWorker(spec) : runKajaWorker(spec);
  if (!stats) {
    std::fprintf(stderr, "worker %s: %s\n", options.worker.c_str(),
                 stats.error().describe().c_str());
    return 1;
  }
  std::printf("%s\n", toJsonLine(*stats).c_str());
  return 0;
}

/// One client the driver measures, and how to start its worker.
struct Contender {
  std::string label;   ///< as shown in the table
  std::string server;  ///< "everything" or "echo"
  std::function<core::LaunchPlan(int calls, int inflight, int warmup)> plan;
};

std::vector<Contender> contenders(const Paths& paths, const std::string& sdkVersion,
                                  const std::string& clientVersion) {
  std::vector<Contender> list;
  auto kaja = [&paths](const std::string& worker, const std::string& server) {
    return [&paths, worker, server](int calls, int inflight, int warmup) {
      return minimalPlan({paths.self, "--worker", worker, "--server", server, "--calls",
                          std::to_string(calls), "--inflight", std::to_string(inflight), "--warmup",
                          std::to_string(warmup)});
    };
  };
  auto sdk = [&paths](const std::string& major) {
    return [&paths, major](int calls, int inflight, int warmup) {
      return minimalPlan({paths.node, paths.driver, "--sdk", major, "--npm", paths.npm, "--server",
                          paths.everything, "--calls", std::to_string(calls), "--inflight",
                          std::to_string(inflight), "--warmup", std::to_string(warmup), "--message",
                          kMessage});
    };
  };
  list.push_back({"kaja", "everything", kaja("kaja", "everything")});
  if (!sdkVersion.empty()) list.push_back({"sdk " + sdkVersion, "everything", sdk("1")});
  if (!clientVersion.empty()) list.push_back({"client " + clientVersion, "everything", sdk("2")});
  list.push_back({"kaja", "echo", kaja("kaja", "echo")});
  list.push_back({"raw pipe", "echo", kaja("raw", "echo")});
  return list;
}

/// Runs one contender's worker once; exits the program when it fails.
RunStats runOnce(const Contender& contender, int calls, int inflight, int warmup) {
  auto output = runToCompletion(contender.plan(calls, inflight, warmup));
  if (!output) {
    std::fprintf(stderr, "%s: %s\n", contender.label.c_str(), output.error().describe().c_str());
    std::exit(1);
  }
  auto stats = parseRunStats(output->out);
  if (!stats || output->status.signaled || output->status.code != 0) {
    std::fprintf(stderr, "%s on %s %s:\n%s%s\n", contender.label.c_str(), contender.server.c_str(),
                 output->status.describe().c_str(), output->out.c_str(), output->err.c_str());
    std::exit(1);
  }
  return *stats;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  if (values.empty()) return 0;
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

/// The runs of one contender in one mode, over all rounds.
struct Series {
  std::vector<RunStats> runs;
  [[nodiscard]] double p50() const { return medianOf(&RunStats::p50Us); }
  [[nodiscard]] double p99() const { return medianOf(&RunStats::p99Us); }
  [[nodiscard]] double rate() const { return medianOf(&RunStats::callsPerSecond); }
  [[nodiscard]] double clientCpu() const { return medianOf(&RunStats::clientCpuUs); }
  [[nodiscard]] double serverCpu() const { return medianOf(&RunStats::serverCpuUs); }
  [[nodiscard]] double peakMb() const {
    long peak = 0;
    for (const auto& run : runs) peak = std::max(peak, run.peakRssKb);
    return static_cast<double>(peak) / 1024.0;
  }
  [[nodiscard]] double medianOf(double RunStats::*member) const {
    std::vector<double> values;
    for (const auto& run : runs) values.push_back(run.*member);
    return median(values);
  }
};

std::string modeName(int inflight) {
  return inflight == 1 ? "sequential" : std::to_string(inflight) + " in flight";
}

void printRatio(const char* what, double value, const char* target = nullptr, bool met = true) {
  if (target == nullptr) {
    std::printf("  %-58s %6.2f\n", what, value);
    return;
  }
  std::printf("  %-58s %6.2f   target %-8s %s\n", what, value, target, met ? "met" : "MISSED");
}

int runDriver(const Options& options, const Paths& paths) {
  if (paths.node.empty()) {
    std::fprintf(stderr, "client_bench needs node on PATH.\n");
    return 1;
  }
  for (const auto& needed : {paths.everything, paths.driver, paths.echo}) {
    if (::access(needed.c_str(), R_OK) != 0) {
      std::fprintf(
          stderr, "client_bench cannot find %s; run `npm ci` in tests/npm and build echo_server.\n",
          needed.c_str());
      return 1;
    }
  }
  const std::string sdkVersion = packageVersion(paths.npm + "/sdk");
  const std::string clientVersion = packageVersion(paths.npm + "/client");
  const auto list = contenders(paths, sdkVersion, clientVersion);
  // An echo_server run of 2,000 calls lasts ~10 ms, so one preemption on a busy machine
  // would decide it; the floor runs are longer for that reason.
  const int floorCalls = options.floorCalls > 0 ? options.floorCalls : 10 * options.calls;
  const auto callsFor = [&](const Contender& contender) {
    return contender.server == "echo" ? floorCalls : options.calls;
  };
  std::vector<int> modes = {1};
  if (options.inflight > 1) modes.push_back(options.inflight);

  auto nodeVersion = runToCompletion(minimalPlan({paths.node, "--version"}));
  std::string nodeText = nodeVersion ? nodeVersion->out : "?";
  if (!nodeText.empty() && nodeText.back() == '\n') nodeText.pop_back();
  std::printf(
      "kaja client benchmark: echo tool over stdio, %d timed calls per run (%d on echo_server) "
      "after %d warm-up calls,\n%d rounds alternating the clients; node %s, server-everything "
      "%s, %ld cores\n\n",
      options.calls, floorCalls, options.warmup, options.rounds, nodeText.c_str(),
      packageVersion(paths.npm + "/server-everything").c_str(), ::sysconf(_SC_NPROCESSORS_ONLN));
  std::fflush(stdout);

  // A short pass that warms the page cache, node's compile cache and the CPUs' clocks.
  for (const auto& contender : list) {
    for (const int inflight : modes) {
      if (options.warmup > 0) runOnce(contender, options.warmup, inflight, options.warmup);
    }
  }

  std::map<std::pair<std::size_t, int>, Series> series;
  for (int round = 0; round < options.rounds; ++round) {
    for (const int inflight : modes) {
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::size_t index = (i + static_cast<std::size_t>(round)) % list.size();
        const RunStats stats =
            runOnce(list[index], callsFor(list[index]), inflight, options.warmup);
        series[{index, inflight}].runs.push_back(stats);
        std::fprintf(stderr,
                     "round %d  %-11s %-14s %-10s %8.0f calls/s  p50 %7.1f us  %6.1f MiB  "
                     "cpu/call client %6.1f us server %6.1f us\n",
                     round + 1, modeName(inflight).c_str(), list[index].label.c_str(),
                     list[index].server.c_str(), stats.callsPerSecond, stats.p50Us,
                     static_cast<double>(stats.peakRssKb) / 1024.0, stats.clientCpuUs,
                     stats.serverCpuUs);
      }
    }
  }

  std::printf("\n%-11s %-12s %-14s %9s %9s %10s %13s %14s %14s\n", "server", "mode", "client",
              "p50 us", "p99 us", "calls/s", "peak RSS MiB", "client cpu/call", "server cpu/call");
  for (const int inflight : modes) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Series& s = series[{i, inflight}];
      std::printf("%-11s %-12s %-14s %9.1f %9.1f %10.0f %13.1f %12.1f us %12.1f us\n",
                  list[i].server.c_str(), modeName(inflight).c_str(), list[i].label.c_str(),
                  s.p50(), s.p99(), s.rate(), s.peakMb(), s.clientCpu(), s.serverCpu());
    }
  }
  std::printf(
      "(medians over rounds; peak RSS is the client process's VmHWM, max over rounds; cpu/call "
      "is user+system time over the timed calls, server's from /proc in 10 ms ticks)\n");

  std::printf("\nratios (medians):\n");
  for (const int inflight : modes) {
    const Series& kaja = series[{0, inflight}];
    for (std::size_t i = 1; i < list.size() && list[i].server == "everything"; ++i) {
      const Series& sdk = series[{i, inflight}];
      const std::string mode = modeName(inflight);
      const std::string rate = "calls/s kaja / " + list[i].label + ", " + mode;
      printRatio(rate.c_str(), kaja.rate() / sdk.rate(), ">= 1.5", kaja.rate() >= 1.5 * sdk.rate());
      const std::string p50 = "p50 " + list[i].label + " / kaja, " + mode;
      printRatio(p50.c_str(), sdk.p50() / kaja.p50());
      const std::string rss = "peak RSS " + list[i].label + " / kaja, " + mode;
      printRatio(rss.c_str(), sdk.peakMb() / kaja.peakMb());
    }
    const std::string rss = "kaja peak RSS MiB, " + modeName(inflight);
    printRatio(rss.c_str(), kaja.peakMb(), "< 10", kaja.peakMb() < 10);
  }
  const std::size_t kajaEcho = list.size() - 2;
  const std::size_t raw = list.size() - 1;
  for (const int inflight : modes) {
    const Series& kaja = series[{kajaEcho, inflight}];
    const Series& floor = series[{raw, inflight}];
    const std::string mode = modeName(inflight);
    const std::string time = "time per call kaja / raw pipe (echo_server), " + mode;
    printRatio(time.c_str(), floor.rate() / kaja.rate(), "<= 1.5",
               floor.rate() <= 1.5 * kaja.rate());
    const std::string p50 = "p50 kaja / raw pipe (echo_server), " + mode;
    printRatio(p50.c_str(), kaja.p50() / floor.p50());
  }
  return 0;
}

int parseInt(const char* text, const char* flag) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 0 || value > 10'000'000) {
    std::fprintf(stderr, "client_bench: %s wants a number, not \"%s\".\n", flag, text);
    std::exit(2);
  }
  return static_cast<int>(value);
}

}  // namespace
}  // namespace kaja::bench

int main(int argc, char** argv) {
  using namespace kaja::bench;
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::printf(
          "usage: client_bench [--calls N] [--inflight K] [--rounds R] [--warmup W]\n"
          "                    [--floor-calls M]\n"
          "Times kaja's MCP client against the TypeScript SDK clients on server-everything's\n"
          "echo tool, and against a raw pipe on tests/bench/echo_server (defaults: 2000 calls,\n"
          "8 in flight, 3 rounds, 200 warm-up calls, 10 x N calls per echo_server run).\n");
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "client_bench: %s needs a value (see --help).\n", flag.c_str());
      return 2;
    }
    const char* value = argv[++i];
    if (flag == "--calls") {
      options.calls = std::max(1, parseInt(value, "--calls"));
    } else if (flag == "--inflight") {
      options.inflight = std::max(1, parseInt(value, "--inflight"));
    } else if (flag == "--rounds") {
      options.rounds = std::max(1, parseInt(value, "--rounds"));
    } else if (flag == "--floor-calls") {
      options.floorCalls = parseInt(value, "--floor-calls");
    } else if (flag == "--warmup") {
      options.warmup = parseInt(value, "--warmup");
    } else if (flag == "--worker") {
      options.worker = value;
    } else if (flag == "--server") {
      options.server = value;
    } else {
      std::fprintf(stderr, "client_bench: unknown option %s (see --help).\n", flag.c_str());
      return 2;
    }
  }
  const Paths paths = findPaths();
  return options.worker.empty() ? runDriver(options, paths) : runWorker(options, paths);
}
