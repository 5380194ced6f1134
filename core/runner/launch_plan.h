#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/process/launch_plan.h"

// The plans runner resolution makes: a LaunchPlan (declared in core/process, which starts
// it) for a stdio server, a RemotePlan for a remote one, and which runner was chosen.

namespace kaja::core {

/// Which runner starts (or reaches) an ability on this machine (K5–K8).
enum class RunnerKind { kBunx, kNpx, kUvx, kPipx, kDocker, kCommand, kRemote };

/// Returns "bunx", "npx", "uvx", "pipx", "docker", "command" or "remote".
const char* toString(RunnerKind kind);

/// How to reach a remote server. Header values may hold keys; never print them.
struct RemotePlan {
  std::string url;
  bool sse = false;  ///< legacy HTTP+SSE rather than Streamable HTTP
  std::vector<std::pair<std::string, std::string>> headers;
};

}  // namespace kaja::core
