#include "core/process/subreaper.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>
#include <vector>

#include "core/process/process_tree.h"
#include "core/util/sys.h"

namespace kaja::core {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// How long a ChildProcess reaping its last child gives the orphans to die.
constexpr std::chrono::milliseconds kOrphanLimit{1000};
// How often waits for a death look again.
constexpr std::chrono::milliseconds kPollInterval{5};

bool hasExited(pid_t pid) {
  siginfo_t info{};
  const int rc =
      retryOnEintr([&] { return ::waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT); });
  return rc != 0 || info.si_pid != 0;
}

// Stops `pid` and its group (when it leads one) first, so nothing in the tree forks while
// the descendants are listed, then kills the lot.
void killTree(pid_t pid, bool leadsGroup) {
  if (leadsGroup) ::kill(-pid, SIGSTOP);
  ::kill(pid, SIGSTOP);
  signalDescendants(pid, SIGKILL);
  if (leadsGroup) ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
}

}  // namespace

Subreaper& Subreaper::instance() {
  // Leaked on purpose: a signal thread may still use it while static destructors run.
  static auto* subreaper = new Subreaper();
  return *subreaper;
}

Result<void> Subreaper::enable() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    return fail(ErrorCode::kIo, syscallMessage("prctl", "PR_SET_CHILD_SUBREAPER", errno));
  }
  std::lock_guard held(mutex_);
  enabled_ = true;
  return {};
}

bool Subreaper::enabled() const {
  std::lock_guard held(mutex_);
  return enabled_;
}

std::unique_lock<std::mutex> Subreaper::lock() { return std::unique_lock(mutex_); }

bool Subreaper::acceptsChildren(const std::unique_lock<std::mutex>&) const { return !closing_; }

void Subreaper::adopt(pid_t pid, const std::unique_lock<std::mutex>&) { owned_.insert(pid); }

std::optional<int> Subreaper::reapOwned(pid_t pid) {
  std::optional<int> status;
  bool last = false;
  {
    std::lock_guard held(mutex_);
    int raw = 0;
    if (retryOnEintr([&] { return ::waitpid(pid, &raw, 0); }) == pid) status = raw;
    last = owned_.erase(pid) == 1 && owned_.empty() && enabled_;
  }
  if (last) endOrphans(kOrphanLimit);
  return status;
}

int Subreaper::endOrphans(std::chrono::milliseconds limit) {
  if (!enabled()) return 0;
  const auto deadline = Clock::now() + limit;
  int ended = 0;
  while (Clock::now() < deadline) {
    std::vector<pid_t> orphans;
    {
      std::lock_guard held(mutex_);
      for (const pid_t child : childrenOf(0)) {
        if (!owned_.contains(child)) orphans.push_back(child);
      }
      // Orphans are ours and only this function reaps them, so their pids stay theirs.
      for (const pid_t orphan : orphans) killTree(orphan, false);
    }
    if (orphans.empty()) break;
    for (const pid_t orphan : orphans) {
      for (;;) {
        const pid_t rc = ::waitpid(orphan, nullptr, WNOHANG);
        if (rc == orphan || (rc < 0 && errno != EINTR)) {
          ++ended;
          break;
        }
        if (Clock::now() >= deadline) return ended;
        std::this_thread::sleep_for(kPollInterval);
      }
    }
  }
  return ended;
}

void Subreaper::signalOwned(int signal) {
  std::lock_guard held(mutex_);
  // Owned children are reaped only under this lock, so each pid (and group id) is still
  // the one ChildProcess started.
  for (const pid_t pid : owned_) {
    if (hasExited(pid)) {
      // The zombie leader keeps its group id ours; its children are orphans by now.
      if (signal == SIGKILL) ::kill(-pid, SIGKILL);
      continue;
    }
    if (signal == SIGKILL) {
      killTree(pid, true);
    } else {
      ::kill(-pid, signal);
      signalDescendants(pid, signal);
    }
  }
}

bool Subreaper::waitOwnedExited(Clock::time_point deadline) {
  for (;;) {
    bool all = true;
    {
      std::lock_guard held(mutex_);
      for (const pid_t pid : owned_) all = all && hasExited(pid);
    }
    if (all) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPollInterval);
  }
}

void Subreaper::endEverything(std::chrono::milliseconds grace) {
  {
    std::lock_guard held(mutex_);
    closing_ = true;
  }
  signalOwned(SIGTERM);
  if (!waitOwnedExited(Clock::now() + grace)) {
    signalOwned(SIGKILL);
    waitOwnedExited(Clock::now() + 1s);
  }
  // A server that exited by itself may have left its group and descendants behind.
  signalOwned(SIGKILL);
  endOrphans(1s);
}

}  // namespace kaja::core
