#pragma once

#include <string>
#include <vector>

namespace kaja::core {

/// One environment variable for a child. `secret` values are never printed.
struct EnvVar {
  std::string name;
  std::string value;
  bool secret = false;
};

/// Sets `name` to `value` in `env`: the existing entry's value, else a new entry at the end.
void setEnvVar(std::vector<EnvVar>& env, const std::string& name, const std::string& value);

/// How to start a stdio server: everything the process launcher needs, nothing else.
/// The environment is complete (kaja's minimal set plus the ability's own), so the
/// launcher must not inherit the parent's environment. Runner resolution (core/runner)
/// builds one; ChildProcess starts it.
struct LaunchPlan {
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

}  // namespace kaja::core
