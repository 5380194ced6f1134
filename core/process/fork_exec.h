#pragma once

// Why not posix_spawn: a server must die with kaja, even when kaja is killed with SIGKILL
// and has no chance to end it. Only the child can ask for that (prctl PR_SET_PDEATHSIG),
// between fork and exec, and posix_spawn runs nothing of ours there. So kaja starts the
// child itself the way posix_spawn does (clone with CLONE_VM | CLONE_VFORK on a stack of
// its own: no copy of kaja's page tables; a plain fork measured about three times slower),
// and the child makes only raw system calls (no allocation, no lock, nothing that throws)
// before execve: it joins a process group of its own, asks for SIGKILL when its parent
// dies, lowers its priority, restores every signal to its default and an empty mask, moves
// the pipes onto 0/1/2, marks every other descriptor close-on-exec (even ones another
// thread opened without O_CLOEXEC), changes folder and execs. A failure in any of those
// steps comes back to the parent over a close-on-exec pipe as the step and errno.
//
// The parent-death signal is tied to the parent *thread*: it fires when the thread that
// started the child ends, even while the rest of kaja runs. So every child is started from
// one thread that lives as long as the process, never from the caller's (an event loop's,
// or a short-lived one's).

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/error.h"

namespace kaja::core {

/// What forkExec starts: an absolute program, its argv and environment ("NAME=value"),
/// the descriptors that become its stdin, stdout and stderr, and where it runs.
struct ExecSpec {
  std::vector<std::string> argv;  ///< argv[0] is the absolute path executed
  std::vector<std::string> env;   ///< exactly this environment; nothing is inherited
  std::string workingDir;         ///< empty: kaja's own
  int stdinFd = -1;
  int stdoutFd = -1;
  int stderrFd = -1;
  int niceness = 0;  ///< added to kaja's niceness (capped at 19) in the child only
  /// For a guardian (guardian.h): lands on fd 3, and the pipe that reports a failed start
  /// on fd 4, both kept across execve, so the guardian can report its server's.
  int guardFd = -1;
  std::string name;  ///< what errors call the program: argv[0] when empty
};

/// What a guardian writes on fd 4 when its server's execve fails, followed by errno.
inline constexpr int kReportedExecveFailure = 6;

/// Starts `spec` as a child of this process in a process group of its own, set to receive
/// SIGKILL when kaja dies, and registers it with Subreaper before any other thread can see
/// it. Returns its pid, or kSpawn naming the failed step and errno ("execve(/x/y): No such
/// file or directory"; the failed child is reaped). Refuses once Subreaper::endEverything
/// has begun.
Result<pid_t> forkExec(const ExecSpec& spec);

/// In a child about to exec: puts every signal back to its default action and empties the
/// signal mask, so a server starts as if from a shell. Async-signal-safe; allocates nothing.
void restoreDefaultSignals();

}  // namespace kaja::core
