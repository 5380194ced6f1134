#pragma once

// HTTP test servers as children: the fault HTTP server and server-everything over
// Streamable HTTP or SSE, all bound to 127.0.0.1 on a port they print as "PORT <n>".
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/process/child_process.h"
#include "tests/core/mcp/test_servers.h"
#include "tests/support/build_paths.h"

namespace kaja::testing {

/// A server child whose stdout is read on a thread of its own (so it never blocks on a
/// full pipe); its lines are kept for assertions. The destructor ends the server.
class ServerProcess {
 public:
  /// Starts `plan` and waits up to 15 s for its "PORT <n>" line; nullptr on failure.
  static std::unique_ptr<ServerProcess> start(const core::LaunchPlan& plan) {
    auto child = core::ChildProcess::start(plan);
    if (!child) return nullptr;
    std::unique_ptr<ServerProcess> server(new ServerProcess(std::move(*child)));
    return server->waitForLine("PORT ", std::chrono::seconds(15)) ? std::move(server) : nullptr;
  }
  ~ServerProcess() {
    child_->killGroup(SIGTERM);
    child_.reset();  // ends the group, so the reader sees EOF
    if (reader_.joinable()) reader_.join();
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  /// Returns "http://127.0.0.1:<port><path>".
  [[nodiscard]] std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  [[nodiscard]] int port() const { return port_; }

  /// Returns every line printed so far.
  [[nodiscard]] std::vector<std::string> lines() {
    std::lock_guard lock(mutex_);
    return lines_;
  }

  /// Returns how many lines printed so far start with `prefix`.
  [[nodiscard]] int count(const std::string& prefix) {
    std::lock_guard lock(mutex_);
    return static_cast<int>(std::count_if(
        lines_.begin(), lines_.end(), [&](const auto& line) { return line.starts_with(prefix); }));
  }

  /// Waits until a line starting with `prefix` was printed; returns whether it was.
  bool waitForLine(const std::string& prefix, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] {
      for (const auto& line : lines_) {
        if (line.starts_with(prefix)) return true;
      }
      return false;
    });
  }

 private:
  explicit ServerProcess(std::unique_ptr<core::ChildProcess> child)
      : child_(std::move(child)), stdout_(child_->takeStdout()) {
    reader_ = std::thread([this] { readLines(); });
  }

  void readLines() {
    std::string partial;
    char buffer[4096];
    ssize_t n = 0;
    while ((n = ::read(stdout_.get(), buffer, sizeof buffer)) > 0) {
      partial.append(buffer, static_cast<std::size_t>(n));
      std::size_t newline = 0;
      while ((newline = partial.find('\n')) != std::string::npos) {
        std::lock_guard lock(mutex_);
        lines_.push_back(partial.substr(0, newline));
        if (lines_.back().starts_with("PORT ") && port_ == 0) {
          port_ = std::atoi(lines_.back().c_str() + 5);
        }
        partial.erase(0, newline + 1);
        changed_.notify_all();
      }
    }
  }

  std::unique_ptr<core::ChildProcess> child_;
  core::UniqueFd stdout_;
  std::thread reader_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> lines_;
  int port_ = 0;
};

/// tests/tools/kaja_fault_http_server in `mode` (see that file).
inline core::LaunchPlan faultHttpPlan(const std::string& mode) {
  return minimalPlan({std::string(kaja::test::binDir()) + "/kaja_fault_http_server", mode});
}

/// server-everything over "streamableHttp" or "sse", forced onto 127.0.0.1.
inline core::LaunchPlan everythingHttpPlan(const std::string& transport) {
  auto plan =
      minimalPlan({nodePath(), "--require",
                   std::string(kaja::test::sourceDir()) + "/tests/tools/listen_loopback.cjs",
                   npmServerScript("server-everything"), transport});
  plan.env.push_back({"PORT", "0", false});
  return plan;
}

}  // namespace kaja::testing
