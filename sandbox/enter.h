#pragma once

#include <span>
#include <string>

namespace kaja::sandbox {

/// `kaja sandbox enter [--cgroup DIR] -- PROGRAM ARGS…`: the first step of a confined
/// server's command line. It moves itself into the cgroup DIR (so that every process the
/// server makes is counted there from its first instruction), then replaces itself with
/// PROGRAM. Returns an exit code only when it could not: 2 for bad usage, 126 when the
/// cgroup or the exec failed (with one sentence on stderr).
int runEnter(std::span<const std::string> args);

}  // namespace kaja::sandbox
