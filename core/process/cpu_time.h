#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>

namespace kaja::core {

/// Returns the CPU time (user and system, all threads) used so far by every live process
/// in process group `group`, plus what their reaped children used; nullopt when no process
/// of the group is found. Reads /proc, so it sees only processes in this PID namespace.
std::optional<std::chrono::milliseconds> processGroupCpuTime(pid_t group);

}  // namespace kaja::core
