#pragma once

// A server may leave its process group (setsid, setpgid) but not its place in the process
// tree while its parent lives, so kaja follows parent links to find what a group kill
// misses. Each process found is pinned with a pidfd and checked to still have the parent it
// was listed under before it is signalled, so a pid that was reaped and reused in between
// is never hit.

#include <sys/types.h>

#include <vector>

namespace kaja::core {

/// Returns the pids of `pid`'s children, as the kernel lists them in
/// /proc/<pid>/task/*/children (or, without that file, by scanning /proc for the parent
/// pid). `pid` 0 means this process. Returns an empty list when `pid` is gone.
std::vector<pid_t> childrenOf(pid_t pid);

/// Returns the parent pid /proc/<pid>/stat gives, or -1 when `pid` is gone.
pid_t parentOf(pid_t pid);

/// Returns true when /proc/<pid>/stat says `pid` is a zombie (or it is gone).
bool isZombieOrGone(pid_t pid);

/// Sends `signal` to every descendant of `root` (not `root` itself). With SIGKILL the tree
/// is first frozen with SIGSTOP, walked again until no new process appears, and only then
/// killed, so nothing forks its way out of the kill. Returns how many processes were
/// signalled.
int signalDescendants(pid_t root, int signal);

}  // namespace kaja::core
