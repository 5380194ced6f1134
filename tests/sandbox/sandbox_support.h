#pragma once
// What the sandbox tests share: a private tree of two users' homes beside a key file, and
// ways to run a confined plan and to look for processes left behind.

#include <dirent.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/process/launch_plan.h"
#include "core/process/process_tree.h"
#include "core/util/sys.h"
#include "sandbox/confine.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::sandbox::testing {

/// A worker's state folder with alice's and bob's homes and tmp folders, and kaja's folder
/// holding a key file and a file that may be seen.
class SandboxTree {
 public:
  SandboxTree() {
    for (const char* user : {"alice", "bob"}) {
      std::filesystem::create_directories(state() + "/" + user + "/home");
      std::filesystem::create_directories(state() + "/" + user + "/tmp");
    }
    dir_.write("state/bob/home/secret.txt", "bob-secret-4711");
    dir_.write("kaja/key", "worker-key-0123456789abcdef0123456789");
    dir_.write("kaja/visible.txt", "visible-content");
  }
  [[nodiscard]] std::string root() const { return dir_.path(); }
  [[nodiscard]] std::string state() const { return dir_.path() + "/state"; }
  [[nodiscard]] std::string kajaFolder() const { return dir_.path() + "/kaja"; }

  /// Returns the confinement of `user`: its home and tmp, the whole tree read-only (so
  /// that the key file and the other user's home lie inside a read-only path), and the key
  /// file and the state folder hidden.
  [[nodiscard]] Confinement confinementOf(const std::string& user) const {
    Confinement where;
    where.kaja = std::string(kaja::test::binDir()) + "/kaja";
    where.home = state() + "/" + user + "/home";
    where.tmp = state() + "/" + user + "/tmp";
    where.readOnly = {root()};
    where.hidden = {kajaFolder() + "/key", state()};
    return where;
  }

 private:
  kaja::testing::TempDir dir_;
};

/// Returns a plan that runs `/bin/sh -c script` with a minimal environment.
inline core::LaunchPlan shell(const std::string& script) {
  core::LaunchPlan plan;
  plan.argv = {"/bin/sh", "-c", script};
  plan.env = {{"PATH", "/usr/bin:/bin"}, {"LANG", "C"}};
  return plan;
}

/// Returns the plan's environment as "NAME=value" strings.
inline std::vector<std::string> envStrings(const core::LaunchPlan& plan) {
  std::vector<std::string> env;
  for (const auto& var : plan.env) env.push_back(var.name + "=" + var.value);
  return env;
}

/// Runs `plan` to its end (at most `seconds`) and returns what it printed.
inline kaja::testing::CommandResult run(const core::LaunchPlan& plan, double seconds = 30) {
  kaja::testing::RunOptions options;
  options.timeoutSeconds = seconds;
  return kaja::testing::runCommandWith(plan.argv, envStrings(plan), options);
}

/// Returns the pids whose command line contains `marker`, other than this process.
inline std::vector<pid_t> processesWith(const std::string& marker) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  while (const dirent* entry = ::readdir(proc)) {
    const pid_t pid = std::atoi(entry->d_name);
    if (pid <= 0 || pid == ::getpid()) continue;
    auto cmdline = core::readTextFile("/proc/" + std::string(entry->d_name) + "/cmdline");
    if (cmdline && cmdline->find(marker) != std::string::npos) found.push_back(pid);
  }
  ::closedir(proc);
  return found;
}

/// Polls `done` every 10 ms for up to `limit`; returns whether it became true.
template <class Fn>
bool eventually(Fn done, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

/// Skips the test unless a trivial confined program runs here; call from the test body.
#define KAJA_REQUIRE_BWRAP(tree)                                                          \
  do {                                                                                    \
    auto probe = ::kaja::sandbox::confine(::kaja::sandbox::testing::shell("true"),        \
                                          (tree).confinementOf("alice"));                 \
    if (!probe) GTEST_SKIP() << probe.error().message;                                    \
    auto ran = ::kaja::sandbox::testing::run(*probe);                                     \
    if (ran.exitCode != 0) GTEST_SKIP() << "bubblewrap cannot confine here: " << ran.err; \
  } while (false)

/// Returns `pid` and every process below it, itself first.
inline std::vector<pid_t> treeOf(pid_t pid) {
  std::vector<pid_t> all{pid};
  for (std::size_t i = 0; i < all.size() && all.size() < 4096; ++i) {
    for (const pid_t child : core::childrenOf(all[i])) all.push_back(child);
  }
  return all;
}

}  // namespace kaja::sandbox::testing
