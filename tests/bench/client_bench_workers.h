#pragma once

// The two C++ sides client_bench measures, each run in a process of its own so that its
// peak RSS is the client's alone (the server is a separate child, started with
// posix_spawn, which copies no memory):
//  - kaja's async Client on one io_context over StdioTransport;
//  - the raw-pipe floor: one prebuilt JSON-RPC line written to the server's stdin and
//    one line read back, with no client logic at all.

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mcp/client.h"
#include "core/mcp/json_rpc.h"
#include "core/mcp/stdio_transport.h"
#include "core/process/child_process.h"
#include "tests/bench/bench_support.h"

namespace kaja::bench {

/// What one worker run does.
struct WorkerSpec {
  core::LaunchPlan server;
  std::string serverName;  ///< "everything" or "echo"
  int calls = 2000;
  int inflight = 1;
  int warmup = 200;
  std::string message;  ///< the echo tool's argument
};

namespace detail {

namespace mcp = core::mcp;

/// Runs `io` one handler at a time until `done` is true.
inline void runUntil(boost::asio::io_context& io, const bool& done) {
  while (!done && io.run_one() > 0) {
  }
}

/// Runs `count` echo calls with at most `inflight` outstanding and returns each call's
/// latency in microseconds; `wallSeconds` receives the run's length. Fails on the first
/// error or wrong answer, after the calls in flight have ended.
inline core::Result<std::vector<double>> timeCalls(boost::asio::io_context& io, mcp::Client& client,
                                                   const WorkerSpec& spec, int count,
                                                   double& wallSeconds) {
  std::vector<double> latencies(static_cast<std::size_t>(count));
  const std::string expected = "Echo: " + spec.message;
  int issued = 0;
  int finished = 0;
  bool done = count == 0;
  std::optional<core::Error> failure;
  std::function<void()> issue = [&] {
    const int index = issued++;
    const auto start = Clock::now();
    client.callTool(
        "echo", mcp::Json{{"message", spec.message}}, {},
        [&, index, start](core::Result<mcp::ToolResult> result) {
          latencies[static_cast<std::size_t>(index)] = microseconds(Clock::now() - start);
          ++finished;
          if (!result) {
            failure = result.error();
          } else if (const auto& content = result->content();
                     result->isError() || content.empty() ||
                     content[0].value("text", std::string()) != expected) {
            failure = core::Error{core::ErrorCode::kProtocol,
                                  "The echo tool answered " + result->raw.dump(), "", ""};
          }
          if (!failure && issued < count) issue();
          done = finished == issued && (failure || issued == count);
        });
  };
  const auto begin = Clock::now();
  for (int i = 0; i < std::min(spec.inflight, count); ++i) issue();
  runUntil(io, done);
  wallSeconds = std::chrono::duration<double>(Clock::now() - begin).count();
  if (failure) return std::unexpected(*failure);
  if (!done) return core::fail(core::ErrorCode::kConnect, "The io_context ran out of work.");
  return latencies;
}

}  // namespace detail

/// Connects kaja's Client to `spec.server`, lists tools, warms up, then times the calls.
/// Returns the stats for the timed calls; peakRssKb is this process's VmHWM after them.
inline core::Result<RunStats> runKajaWorker(const WorkerSpec& spec) {
  namespace mcp = core::mcp;
  RunStats stats;
  stats.client = "kaja";
  stats.server = spec.serverName;
  stats.inflight = spec.inflight;
  stats.startRssKb = peakRssKb();

  boost::asio::io_context io;
  auto transport = mcp::StdioTransport::spawn(io, spec.server, {.serverName = spec.serverName});
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

  bool listed = false;
  client->listTools([&](core::Result<std::vector<mcp::Tool>> tools) {
    if (!tools) failure = tools.error();
    listed = true;
  });
  detail::runUntil(io, listed);
  if (failure) return std::unexpected(*failure);

  double wallSeconds = 0;
  if (auto warm = detail::timeCalls(io, *client, spec, spec.warmup, wallSeconds); !warm) {
    return std::unexpected(warm.error());
  }
  const double clientCpu = ownCpuUs();
  const double serverCpu = processCpuUs((*transport)->pid());
  auto latencies = detail::timeCalls(io, *client, spec, spec.calls, wallSeconds);
  if (!latencies) return std::unexpected(latencies.error());
  stats.clientCpuUs = (ownCpuUs() - clientCpu) / spec.calls;
  stats.serverCpuUs = (processCpuUs((*transport)->pid()) - serverCpu) / spec.calls;
  summarize(std::move(*latencies), wallSeconds, stats);
  stats.peakRssKb = peakRssKb();

  bool closed = false;
  client->close([&] { closed = true; });
  detail::runUntil(io, closed);
  return stats;
}

namespace detail {

/// Writes all of `data` to `fd`; returns false on error.
inline bool writeAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

/// Reads from `fd` until one more line is complete; `buffer` keeps bytes across calls.
/// Returns false at EOF or error.
inline bool readLine(int fd, std::string& buffer, std::size_t& lineEnd) {
  for (;;) {
    lineEnd = buffer.find('\n');
    if (lineEnd != std::string::npos) return true;
    char chunk[16 * 1024];
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(got));
  }
}

/// Sends `lines[first..first+count)` with at most `inflight` outstanding and returns each
/// round trip in microseconds (by order of completion, which is order of sending).
inline core::Result<std::vector<double>> timeRawLines(int in, int out,
                                                      const std::vector<std::string>& lines,
                                                      std::size_t first, int count, int inflight,
                                                      double& wallSeconds) {
  std::vector<double> latencies;
  latencies.reserve(static_cast<std::size_t>(count));
  std::vector<Clock::time_point> sentAt(static_cast<std::size_t>(count));
  std::string buffer;
  int sent = 0;
  const auto begin = Clock::now();
  auto sendNext = [&] {
    sentAt[static_cast<std::size_t>(sent)] = Clock::now();
    return writeAll(in, lines[first + static_cast<std::size_t>(sent++)]);
  };
  for (int i = 0; i < std::min(inflight, count); ++i) {
    if (!sendNext()) return core::fail(core::ErrorCode::kIo, "write to the echo server failed");
  }
  while (static_cast<int>(latencies.size()) < count) {
    std::size_t lineEnd = 0;
    if (!readLine(out, buffer, lineEnd)) {
      return core::fail(core::ErrorCode::kIo, "the echo server closed its stdout");
    }
    latencies.push_back(microseconds(Clock::now() - sentAt[latencies.size()]));
    buffer.erase(0, lineEnd + 1);
    if (sent < count && !sendNext()) {
      return core::fail(core::ErrorCode::kIo, "write to the echo server failed");
    }
  }
  wallSeconds = std::chrono::duration<double>(Clock::now() - begin).count();
  return latencies;
}

}  // namespace detail

/// Starts `spec.server` (the C++ echo server) and times raw line round trips of the very
/// lines kaja's client sends for the same calls (ids 3, 4, … after initialize and tools/list),
/// built before timing.
inline core::Result<RunStats> runRawWorker(const WorkerSpec& spec) {
  namespace mcp = core::mcp;
  RunStats stats;
  stats.client = "raw-pipe";
  stats.server = spec.serverName;
  stats.inflight = spec.inflight;
  stats.startRssKb = peakRssKb();

  std::vector<std::string> lines;
  const int total = spec.warmup + spec.calls;
  lines.reserve(static_cast<std::size_t>(total));
  for (int i = 0; i < total; ++i) {
    mcp::Json params = {{"name", "echo"}, {"arguments", {{"message", spec.message}}}};
    lines.push_back(mcp::serialize(mcp::Request{i + 3, "tools/call", std::move(params)}) + "\n");
  }

  auto child = core::ChildProcess::start(spec.server);
  if (!child) return std::unexpected(child.error());
  core::UniqueFd in = (*child)->takeStdin();
  core::UniqueFd out = (*child)->takeStdout();
  double wallSeconds = 0;
  if (auto warm = detail::timeRawLines(in.get(), out.get(), lines, 0, spec.warmup, spec.inflight,
                                       wallSeconds);
      !warm) {
    return std::unexpected(warm.error());
  }
  const double clientCpu = ownCpuUs();
  const double serverCpu = processCpuUs((*child)->pid());
  auto latencies =
      detail::timeRawLines(in.get(), out.get(), lines, static_cast<std::size_t>(spec.warmup),
                           spec.calls, spec.inflight, wallSeconds);
  if (!latencies) return std::unexpected(latencies.error());
  stats.clientCpuUs = (ownCpuUs() - clientCpu) / spec.calls;
  stats.serverCpuUs = (processCpuUs((*child)->pid()) - serverCpu) / spec.calls;
  summarize(std::move(*latencies), wallSeconds, stats);
  stats.peakRssKb = peakRssKb();
  in.reset();
  (*child)->terminate(std::chrono::milliseconds(1000));
  return stats;
}

}  // namespace kaja::bench
