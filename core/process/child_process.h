#pragma once

// How a child is started (fork, then only raw system calls until execve, on one thread
// that lives as long as kaja) is explained in fork_exec.h; how kaja finds what a child
// leaves behind, in process_tree.h and subreaper.h.

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "core/process/launch_plan.h"
#include "core/util/unique_fd.h"

namespace kaja::core {

/// How a child ended.
struct ExitStatus {
  bool signaled = false;  ///< true: killed by signal `code`; false: exited with `code`
  int code = 0;

  /// Returns "exited with status 3" or "was killed by signal 9 (Killed)".
  [[nodiscard]] std::string describe() const;
};

/// A running child started from a LaunchPlan, in its own process group, with pipes for
/// stdin, stdout and stderr, set to receive SIGKILL when kaja dies. Once useGuardian() was
/// called the child is a guardian (guardian.h) that runs the plan's program and exits as it
/// does; pid() and the group are the guardian's, and the program is in that group. Owns the pid,
/// the pipes' parent ends and a pidfd, and registers the pid with Subreaper until it is reaped. The
/// destructor ends the whole group and every descendant still attached to the child, and reaps it,
/// so no child outlives its owner and no zombie remains; what escaped earlier (a double fork) is
/// Subreaper's to end.
class ChildProcess {
 public:
  /// Starts `plan.argv` with exactly `plan.env` (nothing inherited) in `plan.workingDir`.
  /// Returns kSpawn naming the call and errno ("execve(/x/y): No such file or directory",
  /// "chdir(/w): ...") when it cannot start, or kIo when a pipe cannot be made.
  static Result<std::unique_ptr<ChildProcess>> start(const LaunchPlan& plan);

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  /// Calls terminate() with the grace period set by setGracePeriod (default 1 s).
  ~ChildProcess();

  /// Returns the child's pid, which is also its process group id.
  [[nodiscard]] pid_t pid() const { return pid_; }

  /// Hands over the parent's end of the child's stdin (write), stdout or stderr (read).
  /// Each returns an empty UniqueFd after the first call. All are O_CLOEXEC.
  UniqueFd takeStdin() { return std::move(stdin_); }
  UniqueFd takeStdout() { return std::move(stdout_); }
  UniqueFd takeStderr() { return std::move(stderr_); }

  /// Returns a pidfd that becomes readable when the child exits, owned by this object, or
  /// -1 when the kernel has no pidfd_open (callers then poll with exitStatus()).
  [[nodiscard]] int pidfd() const { return pidfd_.get(); }

  /// Returns the exit status if the child has ended, without reaping it: while it stays
  /// a zombie its pid (and so its group id) cannot be reused, so killGroup stays safe.
  std::optional<ExitStatus> exitStatus();

  /// Sends `signal` to every process in the child's group and to every descendant of the
  /// child outside it (a setsid grandchild); with SIGKILL the group and the tree are frozen
  /// first, so nothing forks its way out. Does nothing once reaped.
  void killGroup(int signal);

  /// Waits up to `timeout` for the child to end; returns its status if it did.
  std::optional<ExitStatus> waitFor(std::chrono::milliseconds timeout);

  /// Ends the child and its group and reaps it: closes stdin (if still held), waits
  /// `grace`, sends SIGTERM to the group, waits `grace` again, then SIGKILL. Survivors in
  /// the group are killed even when the leader exited by itself. Blocks at most about
  /// 2 × `grace`. Returns how the child ended; later calls return the same status.
  ExitStatus terminate(std::chrono::milliseconds grace);

  /// Sets the grace period the destructor gives the child per step.
  void setGracePeriod(std::chrono::milliseconds grace) { grace_ = grace; }

 private:
  ChildProcess() = default;
  ExitStatus reap();

  pid_t pid_ = -1;
  bool reaped_ = false;
  ExitStatus status_;
  std::chrono::milliseconds grace_{1000};
  UniqueFd stdin_;
  UniqueFd stdout_;
  UniqueFd stderr_;
  UniqueFd pidfd_;
};

/// Makes writes to a closed pipe fail with EPIPE instead of killing kaja with SIGPIPE.
/// Process-wide and idempotent; ChildProcess::start calls it. Children still start with
/// the default SIGPIPE disposition.
void ignoreSigpipe();

}  // namespace kaja::core
