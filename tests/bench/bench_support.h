#pragma once

// What client_bench's workers measure and report, and how the driver runs them: latency
// statistics, the process's peak RSS, one JSON line per run, and running a worker as a
// child while collecting its output.

#include <poll.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/process/child_process.h"
#include "core/runner/launch_plan.h"

namespace kaja::bench {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

/// One timed run of one client against one server, as a worker reports it.
struct RunStats {
  std::string client;  ///< "kaja", "sdk-1.32.2", "client-2.4.0", "raw-pipe"
  std::string server;  ///< "everything" or "echo"
  int calls = 0;
  int inflight = 1;
  double p50Us = 0;
  double p99Us = 0;
  double callsPerSecond = 0;
  long peakRssKb = 0;      ///< VmHWM of the client process at the end of the run
  long startRssKb = 0;     ///< VmHWM before the client started the server
  double clientCpuUs = 0;  ///< the client process's user+system CPU per timed call
  double serverCpuUs = 0;  ///< the server process's user+system CPU per timed call
};

/// Returns the absolute path of the first `node` on $PATH (then /usr/local/bin, /usr/bin,
/// /bin), or "" when there is none.
inline std::string findNode() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  dirs += ":/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string candidate = dirs.substr(start, end - start) + "/node";
    if (end > start && candidate.front() == '/' && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return "";
}

/// Returns this process's user+system CPU time in microseconds.
inline double ownCpuUs() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

/// Returns the user+system CPU time of process `pid` in microseconds, from /proc (clock
/// ticks, so 10 ms steps), or 0 when it cannot be read.
inline double processCpuUs(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  double ticks = 0;
  // Fields 3.. follow the command; utime and stime are fields 14 and 15.
  for (int index = 3; index <= 15 && rest >> field; ++index) {
    if (index >= 14) ticks += std::stod(field);
  }
  return ticks * 1e6 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

/// Returns the `q` quantile (0..1) of sorted `values` by nearest rank.
inline double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

/// Fills p50, p99 and calls/s of `stats` from per-call latencies in microseconds and the
/// wall time of the whole run.
inline void summarize(std::vector<double> latenciesUs, double wallSeconds, RunStats& stats) {
  std::sort(latenciesUs.begin(), latenciesUs.end());
  stats.calls = static_cast<int>(latenciesUs.size());
  stats.p50Us = quantile(latenciesUs, 0.50);
  stats.p99Us = quantile(latenciesUs, 0.99);
  stats.callsPerSecond = wallSeconds > 0 ? static_cast<double>(stats.calls) / wallSeconds : 0;
}

/// Returns the number after "`field`:" in the /proc file `path` (kB in status and
/// smaps_rollup), or `missing` when the file or the field is not there.
inline long procFieldKb(const std::string& path, const std::string& field, long missing = 0) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(field + ":")) {
      return std::strtol(line.c_str() + field.size() + 1, nullptr, 10);
    }
  }
  return missing;
}

/// Returns this process's peak resident set (VmHWM) in KiB, or -1 when /proc lacks it.
inline long peakRssKb() { return procFieldKb("/proc/self/status", "VmHWM", -1); }

/// Returns microseconds between two instants.
inline double microseconds(Clock::duration duration) {
  return std::chrono::duration<double, std::micro>(duration).count();
}

/// Returns `stats` as the one-line JSON object a worker prints (the Node driver prints
/// the same members).
inline std::string toJsonLine(const RunStats& stats) {
  return Json{{"client", stats.client},
              {"server", stats.server},
              {"calls", stats.calls},
              {"inflight", stats.inflight},
              {"p50_us", stats.p50Us},
              {"p99_us", stats.p99Us},
              {"calls_per_s", stats.callsPerSecond},
              {"peak_rss_kb", stats.peakRssKb},
              {"start_rss_kb", stats.startRssKb},
              {"client_cpu_us", stats.clientCpuUs},
              {"server_cpu_us", stats.serverCpuUs}}
      .dump();
}

/// Parses the last line of a worker's output that is a JSON object with the members of
/// toJsonLine(). Returns kProtocol when there is none.
inline core::Result<RunStats> parseRunStats(std::string_view output) {
  std::size_t end = output.size();
  while (end > 0) {
    const std::size_t begin = output.rfind('\n', end - 1);
    const std::size_t from = begin == std::string_view::npos ? 0 : begin + 1;
    const std::string_view line = output.substr(from, end - from);
    end = from == 0 ? 0 : from - 1;
    if (line.empty() || line.front() != '{') continue;
    const Json json = Json::parse(line, nullptr, false);
    if (json.is_discarded() || !json.contains("calls_per_s")) continue;
    RunStats stats;
    stats.client = json.value("client", "");
    stats.server = json.value("server", "");
    stats.calls = json.value("calls", 0);
    stats.inflight = json.value("inflight", 1);
    stats.p50Us = json.value("p50_us", 0.0);
    stats.p99Us = json.value("p99_us", 0.0);
    stats.callsPerSecond = json.value("calls_per_s", 0.0);
    stats.peakRssKb = json.value("peak_rss_kb", 0L);
    stats.startRssKb = json.value("start_rss_kb", 0L);
    stats.clientCpuUs = json.value("client_cpu_us", 0.0);
    stats.serverCpuUs = json.value("server_cpu_us", 0.0);
    return stats;
  }
  return core::fail(core::ErrorCode::kProtocol, "The worker printed no result line.");
}

/// What a finished child wrote and how it ended.
struct ChildOutput {
  std::string out;
  std::string err;
  core::ExitStatus status;
};

/// Runs `plan` to completion, collecting its stdout and stderr (both drained together,
/// so neither pipe can fill and stall the child).
inline core::Result<ChildOutput> runToCompletion(const core::LaunchPlan& plan) {
  auto child = core::ChildProcess::start(plan);
  if (!child) return std::unexpected(child.error());
  core::UniqueFd stdinFd = (*child)->takeStdin();
  stdinFd.reset();
  core::UniqueFd fds[2] = {(*child)->takeStdout(), (*child)->takeStderr()};
  ChildOutput output;
  std::string* sinks[2] = {&output.out, &output.err};
  char buffer[16 * 1024];
  for (int open = 2; open > 0;) {
    pollfd polls[2];
    for (int i = 0; i < 2; ++i) polls[i] = pollfd{fds[i].get(), POLLIN, 0};
    if (::poll(polls, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (polls[i].fd < 0 || (polls[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t got = ::read(fds[i].get(), buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        fds[i].reset();
        --open;
        continue;
      }
      sinks[i]->append(buffer, static_cast<std::size_t>(got));
    }
  }
  output.status = (*child)->terminate(std::chrono::milliseconds(2000));
  return output;
}

}  // namespace kaja::bench
