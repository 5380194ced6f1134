#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kaja::core {

/// Which runner starts (or reaches) an ability on this machine (K5–K8).
enum class RunnerKind { kBunx, kNpx, kUvx, kPipx, kDocker, kCommand, kRemote };

/// Returns "bunx", "npx", "uvx", "pipx", "docker", "command" or "remote".
const char* toString(RunnerKind kind);

/// One environment variable for a child. `secret` values are never printed.
struct EnvVar {
  std::string name;
  std::string value;
  bool secret = false;
};

/// How to start a stdio server: everything the process launcher needs, nothing else.
/// The environment is complete (kaja's minimal set plus the ability's own), so the
/// launcher must not inherit the parent's environment.
struct LaunchPlan {
  RunnerKind runner = RunnerKind::kCommand;
  std::vector<std::string> argv;  ///< argv[0] is an absolute path
  std::vector<EnvVar> env;
  std::string workingDir;             ///< empty means inherit
  std::vector<std::string> shownEnv;  ///< names of the variables the ability itself adds
  /// How many steps below kaja's own CPU priority (nice) the child starts, 0 to 19. Its
  /// children inherit it. Only for short-lived servers: without privilege a process can
  /// never raise its priority again.
  int niceness = 0;

  /// Returns the command line for people: the names (never the values) of the variables
  /// the ability adds, as "NAME=…", then argv shell-quoted.
  /// With `shortProgram`, argv[0] is shown by its file name only.
  [[nodiscard]] std::string display(bool shortProgram = false) const;
};

/// How to reach a remote server. Header values may hold keys; never print them.
struct RemotePlan {
  std::string url;
  bool sse = false;  ///< legacy HTTP+SSE rather than Streamable HTTP
  std::vector<std::pair<std::string, std::string>> headers;
};

}  // namespace kaja::core
