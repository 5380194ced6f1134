#pragma once

#include <span>
#include <string>

namespace kaja::sandbox {

/// `kaja sandbox enter [--cgroup DIR]… [--user UID:GID] -- PROGRAM ARGS…`: the first step
/// of a confined server's command line. It moves itself into the cgroup DIR (so that every
/// process the server makes is counted there from its first instruction); with --user it
/// then becomes that unprivileged user for good (setgroups, setgid, setuid, and a check
/// that setuid(0) fails; run_as.h), so that bwrap and the server never hold root; then it
/// replaces itself with PROGRAM. Returns an exit code only when it could not: 2 for bad
/// usage, 126 when the cgroup, the switch or the exec failed (with one sentence on stderr).
int runEnter(std::span<const std::string> args);

}  // namespace kaja::sandbox
