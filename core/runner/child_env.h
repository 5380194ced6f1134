#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/runner/launch_plan.h"

namespace kaja::core {

/// The variables of kaja's own environment that a child may see (U5): PATH, HOME, LANG,
/// TMPDIR and the certificate variables, when set.
struct HostEnv {
  std::vector<EnvVar> vars;

  /// Reads the allowed variables from this process's environment.
  static HostEnv fromProcess();
  /// Returns the value of `name`, or "" when absent.
  [[nodiscard]] std::string get(std::string_view name) const;
  /// Sets or replaces `name`.
  void set(const std::string& name, const std::string& value);
};

/// Returns true for variables that change how a program is loaded or found (PATH, HOME,
/// NODE_OPTIONS, NODE_PATH, LD_PRELOAD, LD_LIBRARY_PATH, DYLD_*, BASH_ENV, PYTHONPATH,
/// NPM_CONFIG_*); an ability's `env` may never set these.
bool isLoaderVariable(std::string_view name);

/// Returns true when an ability may set `name` in its server's environment: a name that is
/// not empty, holds no '=', space or control character (execve would read "A=B" plus a
/// value as the variable A, so `"NODE_OPTIONS=--require=x" = ""` would set NODE_OPTIONS),
/// and is not a loader variable.
bool abilityMaySet(std::string_view name);

/// A child's complete environment and the warnings about what was dropped from it.
struct ChildEnv {
  std::vector<EnvVar> vars;
  std::vector<std::string> warnings;
};

/// Returns `host` plus the ability's own `env` plus `extra` (e.g. the API key, marked
/// secret, under the name the manifest gives it). A name of either that abilityMaySet()
/// refuses is dropped with a warning that names it; `host` is kaja's own and kept whole.
ChildEnv buildChildEnv(const HostEnv& host, const std::map<std::string, std::string>& abilityEnv,
                       const std::string& abilityName, const std::vector<EnvVar>& extra);

}  // namespace kaja::core
