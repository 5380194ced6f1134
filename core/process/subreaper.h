#pragma once

// A server that forks twice, or whose children outlive it, leaves orphans. Once kaja is a
// child subreaper (prctl PR_SET_CHILD_SUBREAPER) those orphans become kaja's children
// instead of init's, so kaja can find every one of them in /proc/self/task/*/children.
// Each child kaja starts itself is owned by a ChildProcess, which reaps it with waitpid on
// its own pid; every other child kaja has is an orphan of some server. The registry below
// tells the two apart, so ending orphans never steals an exit status a ChildProcess waits
// for, and a registered pid is never reaped (so never reused) while the registry lock is
// held.

#include <sys/types.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <set>

#include "core/error.h"

namespace kaja::core {

/// kaja's authority over its descendants: which children ChildProcess owns, and the ending
/// of everything else. One per process; never destroyed, so a signal thread may use it
/// while `exit` runs.
class Subreaper {
 public:
  /// Returns the process's one Subreaper.
  static Subreaper& instance();

  /// Makes this process a child subreaper, so orphaned descendants become its children,
  /// and lets endOrphans end them. Until this is called endOrphans does nothing (a program
  /// such as a test runner may have children of its own). Returns kIo naming prctl and
  /// errno when the kernel refuses.
  Result<void> enable();

  /// Returns true once enable() succeeded.
  [[nodiscard]] bool enabled() const;

  /// Locks the registry. ChildProcess holds it from fork until adopt(), so no other thread
  /// can take the new child for an orphan in between.
  [[nodiscard]] std::unique_lock<std::mutex> lock();

  /// Returns false once endEverything() has begun: no new child may start then.
  [[nodiscard]] bool acceptsChildren(const std::unique_lock<std::mutex>& held) const;

  /// Registers `pid` as owned by a ChildProcess; `held` is lock()'s lock.
  void adopt(pid_t pid, const std::unique_lock<std::mutex>& held);

  /// Reaps the owned child `pid`, which must already have exited (waitid shows it as a
  /// zombie), and unregisters it in one step under the lock. Returns waitpid's raw status,
  /// or nullopt when waitpid failed. Ends the orphans when it was the last owned child.
  std::optional<int> reapOwned(pid_t pid);

  /// Kills every child of this process that no ChildProcess owns, with all its
  /// descendants, and reaps it; repeats while the kills turn up new orphans, for at most
  /// `limit`. Returns how many orphans were ended. Does nothing unless enable() succeeded.
  int endOrphans(std::chrono::milliseconds limit);

  /// For an exit on a signal: refuses new children, sends SIGTERM to every owned child's
  /// group and descendants, waits up to `grace` for them to exit, sends SIGKILL to what is
  /// left, waits for those to die (owned children stay zombies for their owners) and ends
  /// the orphans. Blocks for about `grace` plus one second at most.
  void endEverything(std::chrono::milliseconds grace);

 private:
  Subreaper() = default;
  // Returns true once every owned child has exited, or `deadline` passed.
  bool waitOwnedExited(std::chrono::steady_clock::time_point deadline);
  void signalOwned(int signal);

  mutable std::mutex mutex_;
  std::set<pid_t> owned_;
  bool enabled_ = false;
  bool closing_ = false;
};

}  // namespace kaja::core
