#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/manifest/ability.h"
#include "core/manifest/stdio_allow_list.h"
#include "core/runner/child_env.h"
#include "core/runner/executable_finder.h"
#include "core/runner/launch_plan.h"

namespace kaja::core {

/// What an ability is on this machine.
enum class AbilityState {
  kOn,       ///< can start (or be reached) now
  kOff,      ///< needs something from the user first, e.g. an API key
  kLeftOut,  ///< nothing here can start it; `reason` says what to install
  kRefused,  ///< the stdio allow-list does not allow it; `reason` says how to allow it
};

/// Returns "on", "off", "left-out" or "refused".
const char* toString(AbilityState state);

/// A sandbox worker that runs the stdio abilities the cloud may run (K20), from the
/// `[sandbox]` table of config.toml with its token at hand.
struct SandboxTarget {
  std::string url;      ///< the worker's base URL, without a trailing '/'
  std::string user;     ///< the user id in the worker's paths
  std::string token;    ///< sent as `Authorization: Bearer <token>`; never printed
  bool shared = false;  ///< a shared worker: trustedSandbox abilities stay local (K23)
  /// Where the settings came from, named when the worker refuses the token.
  std::string configFile;
  /// When set (kaja holds the worker's key), makes a new token for each request, so a
  /// long-running `kaja serve` never sends an expired one; `token` is its first.
  std::function<std::string()> freshToken;
};

/// How long a turn waits for a sandboxed server to connect before giving up on it (K24).
inline constexpr std::chrono::milliseconds kSandboxConnectLimit{5000};

/// The machine facts runner resolution depends on. Tests build one around a temporary
/// PATH of stub executables.
struct RunnerContext {
  ExecutableFinder finder;        ///< PATH plus kaja's tools folders (where its bun may live)
  HostEnv host;                   ///< what every child inherits
  std::vector<EnvVar> dockerEnv;  ///< DOCKER_HOST and friends, for the docker client only
  /// Asks whether a Docker engine answers the client at the given path; by default the
  /// cached dockerEngineAnswers().
  std::function<bool(const std::string& dockerPath)> dockerAnswers;
  /// When set, each stdio ability that cloudRefusal() allows runs in this worker instead of
  /// here.
  std::optional<SandboxTarget> sandbox;
  /// For an ability run with `docker run`: the `-v` values of the folders personas give it,
  /// each mounted at its own path (K25), keyed by the ability's name.
  std::map<std::string, std::vector<std::string>> dockerVolumes;
  /// When set, the only stdio command lines that may start here (U5): any other stdio
  /// ability is kRefused. It is matched against the argv kaja would execute, not against
  /// the manifest (see resolveAbility).
  std::optional<StdioAllowList> stdioAllow;
  /// When set, called with the plan of each remote ability (not one sent to a sandbox): puts
  /// the ability's sign-in tokens on it (core/auth), for every request it makes.
  std::function<void(const Ability&, RemotePlan&)> remoteAuth;

  /// Returns the context for this process: its PATH, the tools folders given, its env.
  static RunnerContext fromProcess(const std::vector<std::string>& toolDirs);
};

/// How an ability runs here: a launch plan or remote plan, or why it cannot.
struct Resolution {
  AbilityState state = AbilityState::kLeftOut;
  std::string reason;  ///< why it is off or left out: one sentence with what to do
  std::optional<RunnerKind> runner;
  std::optional<LaunchPlan> launch;  ///< for stdio abilities that can start
  std::optional<RemotePlan> remote;  ///< for http and sse abilities, and sandboxed ones
  std::vector<std::string> warnings;
  /// With a sandbox configured, why this ability does not run there (one sentence from
  /// cloudRefusal()); empty when it does, or when no sandbox is configured.
  std::string notInSandbox;
  /// A connect limit shorter than the host's (kSandboxConnectLimit for a sandboxed
  /// ability); unset means the host's connectTimeout.
  std::optional<std::chrono::milliseconds> connectLimit;

  /// Returns the command line (env var names only, never values) or the URL; with
  /// `shortProgram` the program is shown by its file name only.
  [[nodiscard]] std::string runs(bool shortProgram = false) const;
};

/// Picks the runner for `ability` (K5–K8): npm through bunx (bun on PATH or in kaja's tools
/// folder), else npx; pypi through uvx, else pipx; docker only when nothing earlier can
/// start it and an engine answers; a `command` as given. `key` is the user's API key.
/// With `context.sandbox` set, a stdio ability the cloud may run (cloudRefusal()) for which
/// the user has no key is a RemotePlan to `<url>/users/<user>/abilities/<name>/mcp`
/// instead (RunnerKind::kSandbox); any other says why in `notInSandbox`.
/// With `context.stdioAllow` set, a stdio ability whose final argv (runner chosen, args
/// and docker flags added, program an absolute path) is not on it is kRefused, with the
/// sentence that says how to allow it in `reason`; one sent to the sandbox runs nothing
/// here, so only the worker's own list applies to it.
Resolution resolveAbility(const Ability& ability, const RunnerContext& context,
                          const std::optional<std::string>& key);

/// Returns true when resolveAbility() sends `ability` to `context`'s sandbox worker: a
/// sandbox is configured, it is a stdio ability cloudRefusal() allows, the user has no key
/// for it (`key`), and its name is one the worker serves.
bool runsInSandbox(const Ability& ability, const RunnerContext& context,
                   const std::optional<std::string>& key);

}  // namespace kaja::core
