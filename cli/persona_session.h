#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/context.h"
#include "core/gateway/tool_catalog.h"
#include "core/host/host.h"
#include "personas/persona_resolver.h"

namespace kaja::cli {

/// Returns the settings every call runs under, from where kaja keeps its files.
core::policy::PipelineOptions pipelineOptionsFor(const core::Paths& paths);

/// Returns one call scope per ability `persona` gives, with the user's home, each marked
/// sandboxed when `runners` sends it to a sandbox worker (given the user's `secrets`).
std::vector<core::policy::CallScope> callScopes(const personas::ResolvedPersona& persona,
                                                const core::RunnerContext& runners,
                                                const core::Secrets& secrets);

/// A persona made active for one command: its abilities connected on a host.
struct PersonaSession {
  Context context;
  personas::ResolvedPersona persona;
  core::RunnerContext runners;  ///< where its abilities run (here or in a sandbox worker)
  std::unique_ptr<core::Host> host;
  std::vector<core::ConnectReport> reports;  ///< one per ability the host tried
  std::vector<std::string> skipped;          ///< abilities off or left out, with why
  std::vector<std::string> refused;          ///< of those, the ones a rule refused

  /// Loads the config, resolves `personaName` (or the active persona) and connects its
  /// abilities; with `only` set, just those (and none when `only` names none of them).
  /// Failures to connect are reports, not errors.
  static core::Result<PersonaSession> open(
      const std::optional<std::string>& personaName,
      const std::optional<std::vector<std::string>>& only = std::nullopt);

  /// Returns the persona's entry for `ability`, or nullptr.
  [[nodiscard]] const personas::ActiveAbility* active(const std::string& ability) const;
  /// Returns the persona's tool catalog, with the tools of every ability that connected.
  [[nodiscard]] core::gateway::ToolCatalog catalog(core::gateway::NameStyle names) const;
  /// Returns the settings every call of this persona runs under.
  [[nodiscard]] core::policy::PipelineOptions pipelineOptions() const;
  /// Returns the connect report for `ability`, or nullptr when it was not tried.
  [[nodiscard]] const core::ConnectReport* report(const std::string& ability) const;
  /// Returns the report of `ability` when it connected. Otherwise says why on stderr and
  /// returns nullptr with `exitCode` set: 3 when kaja refused the connection by a rule of
  /// its own (an address, a redirect), 4 when it was left out or could not connect.
  const core::ConnectReport* connected(const std::string& ability, int& exitCode) const;
};

}  // namespace kaja::cli
