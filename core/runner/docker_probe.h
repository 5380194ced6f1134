#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/runner/launch_plan.h"

namespace kaja::core {

/// Returns true when the Docker client at `dockerPath` reaches an engine, by running
/// `docker version --format {{.Server.Version}}` with `env` and a timeout. The answer is
/// cached per client path for the life of the process, so each command asks once.
bool dockerEngineAnswers(const std::string& dockerPath, const std::vector<EnvVar>& env,
                         std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace kaja::core
