#include "core/runner/launch_plan.h"

namespace kaja::core {

const char* toString(RunnerKind kind) {
  switch (kind) {
    case RunnerKind::kBunx:
      return "bunx";
    case RunnerKind::kNpx:
      return "npx";
    case RunnerKind::kUvx:
      return "uvx";
    case RunnerKind::kPipx:
      return "pipx";
    case RunnerKind::kDocker:
      return "docker";
    case RunnerKind::kCommand:
      return "command";
    case RunnerKind::kRemote:
      return "remote";
    case RunnerKind::kSandbox:
      return "sandbox";
  }
  return "command";
}

}  // namespace kaja::core
