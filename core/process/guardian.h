#pragma once

// When kaja is killed with SIGKILL it can end nothing, and the parent-death signal reaches
// only the process it started: whatever a server put outside its group (a setsid
// grandchild, a double-forked daemon) would be reparented past kaja and live on. So in
// kaja each server runs under a guardian: kaja's own program, started with
// kGuardianFlag, which forks the server, is its subreaper (so nothing the server starts
// can leave the guardian's tree) and watches a pipe whose write end only kaja holds. When
// the server exits, or that pipe reports kaja gone, the guardian kills every process under
// it and exits as its server did (the same exit code, or the same signal). The guardian
// leads the process group the server is in and ignores SIGTERM, SIGINT and SIGHUP, so
// ChildProcess's group signals reach the server as before; SIGKILL ends both.

#include <string>

namespace kaja::core {

/// The argv[1] that makes kaja run as a guardian: kaja GUARDIAN_FLAG PROGRAM ARGS...
inline constexpr const char* kGuardianFlag = "--kaja-guardian";

/// Makes ChildProcess start every child under `program` run as a guardian (kaja passes
/// its own executable). Until this is called children start directly. Call before any
/// child starts.
void useGuardian(std::string program);

/// Returns the guardian program set by useGuardian, or "" for none.
const std::string& guardianProgram();

/// Returns the read end of the pipe that tells guardians kaja is gone (its write end is
/// never written and never passed on, so it reaches end of file only when kaja has
/// exited), creating the pipe on first use; -1 when it cannot be made.
int kajaGonePipe();

/// Runs the guardian for argv = {kaja, kGuardianFlag, PROGRAM, ARGS...}, with the server's
/// stdin, stdout and stderr on 0/1/2, kajaGonePipe() on 3 and the start-failure report pipe
/// on 4. Never returns.
[[noreturn]] void runGuardian(int argc, char** argv);

}  // namespace kaja::core
