#pragma once

// Launch plans for the real servers the MCP tests run, and process-hygiene probes.
#include <dirent.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/runner/launch_plan.h"
#include "tests/support/build_paths.h"

namespace kaja::testing {

/// A fresh folder under /tmp, removed with its contents on destruction.
class ScopedTempDir {
 public:
  ScopedTempDir() {
    std::string pattern = "/tmp/kaja-mcp-test-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScopedTempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Returns node's absolute path ("" when node is missing).
inline std::string nodePath() {
  if (::access("/usr/bin/node", X_OK) == 0) return "/usr/bin/node";
  if (::access("/usr/local/bin/node", X_OK) == 0) return "/usr/local/bin/node";
  return "";
}

/// Returns a plan with a minimal environment (PATH, HOME) for `argv`.
inline core::LaunchPlan minimalPlan(std::vector<std::string> argv) {
  core::LaunchPlan plan;
  plan.argv = std::move(argv);
  plan.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin", false}, {"HOME", "/tmp", false}};
  return plan;
}

/// Returns the path of an npm test server's entry script.
inline std::string npmServerScript(const std::string& package) {
  return std::string(kaja::test::sourceDir()) + "/tests/npm/node_modules/@modelcontextprotocol/" +
         package + "/dist/index.js";
}

/// server-everything over stdio.
inline core::LaunchPlan everythingPlan() {
  return minimalPlan({nodePath(), npmServerScript("server-everything"), "stdio"});
}

/// server-filesystem allowed `dir`.
inline core::LaunchPlan filesystemPlan(const std::string& dir) {
  return minimalPlan({nodePath(), npmServerScript("server-filesystem"), dir});
}

/// tests/servers/stateless_server.mjs (protocol 2026-07-28) in `mode`: "stdio" or "http".
inline core::LaunchPlan statelessPlan(const std::string& mode) {
  return minimalPlan({nodePath(),
                      std::string(kaja::test::sourceDir()) + "/tests/servers/stateless_server.mjs",
                      mode});
}

/// tests/tools/kaja_fault_server in `mode` (see that file), with an optional number.
inline core::LaunchPlan faultPlan(const std::string& mode = "normal", int number = 0) {
  return minimalPlan(
      {std::string(kaja::test::binDir()) + "/kaja_fault_server", mode, std::to_string(number)});
}

/// Returns how many descriptors this process has open.
inline int openFdCount() {
  int count = 0;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    while (const dirent* entry = ::readdir(dir)) {
      if (entry->d_name[0] != '.') ++count;
    }
    ::closedir(dir);
    --count;  // the descriptor opendir itself holds
  }
  return count;
}

/// Returns the state letter of `pid` from /proc ('\0' when it is gone) and its parent.
inline char processState(pid_t pid, pid_t* parent = nullptr) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return '\0';
  std::istringstream rest(text.substr(close + 2));
  char state = '\0';
  pid_t ppid = 0;
  rest >> state >> ppid;
  if (parent) *parent = ppid;
  return state;
}

/// Returns true while `pid` exists and is not a zombie.
inline bool isRunning(pid_t pid) {
  const char state = processState(pid);
  return state != '\0' && state != 'Z' && state != 'X';
}

/// Returns the pids of this process's children that are zombies.
inline std::vector<pid_t> zombieChildren() {
  std::vector<pid_t> zombies;
  if (DIR* dir = ::opendir("/proc")) {
    while (const dirent* entry = ::readdir(dir)) {
      const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
      if (pid <= 0) continue;
      pid_t parent = 0;
      if (processState(pid, &parent) == 'Z' && parent == ::getpid()) zombies.push_back(pid);
    }
    ::closedir(dir);
  }
  return zombies;
}

/// Polls `condition` every 20 ms for up to `timeout`; returns its last value.
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

/// Runs `io` until `done` is true or `timeout` passes; returns `done`.
inline bool runUntil(boost::asio::io_context& io, const std::function<bool()>& done,
                     std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_for(std::chrono::milliseconds(20));
  }
  return done();
}

}  // namespace kaja::testing
