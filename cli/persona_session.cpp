#include "cli/persona_session.h"

#include <algorithm>

#include "cli/command.h"
#include "cli/output.h"
#include "personas/activation.h"

namespace kaja::cli {

core::Result<PersonaSession> PersonaSession::open(
    const std::optional<std::string>& personaName,
    const std::optional<std::vector<std::string>>& only) {
  auto context = Context::load();
  if (!context) return std::unexpected(context.error());
  std::string name = personaName.value_or(personas::activePersona(context->paths.configDir));
  auto persona = personas::resolvePersona(context->catalog, name, core::homeDir());
  if (!persona) return std::unexpected(persona.error());

  auto runners = context->runners();
  if (!runners) return std::unexpected(runners.error());
  PersonaSession session{
      std::move(*context), std::move(*persona), std::move(*runners), nullptr, {}, {}};
  personas::ResolvedPersona wanted = session.persona;
  if (only) {
    std::erase_if(wanted.abilities, [&](const personas::ActiveAbility& active) {
      return std::find(only->begin(), only->end(), active.ability.name) == only->end();
    });
  }
  personas::ActivationPlan plan =
      personas::planActivations(wanted, session.runners, session.context.secrets);
  session.skipped = std::move(plan.skipped);
  session.refused = std::move(plan.refused);
  core::HostOptions hostOptions;
  hostOptions.events.warning = [](const std::string& text) {
    if (options().verbose) printWarning(text);
  };
  session.host = std::make_unique<core::Host>(hostOptions);
  session.reports = session.host->activate(std::move(plan.activations));
  for (const auto& report : session.reports) {
    for (const auto& note : report.notes) printWarning(note);
  }
  return session;
}

const personas::ActiveAbility* PersonaSession::active(const std::string& ability) const {
  return persona.find(ability);
}

core::policy::PipelineOptions pipelineOptionsFor(const core::Paths& paths) {
  core::policy::PipelineOptions options;
  options.backupsDir = paths.backupsDir;
  options.kajaFolders = {paths.configDir, paths.dataDir};
  options.spillDir = paths.dataDir + "/outputs";
  return options;
}

std::vector<core::policy::CallScope> callScopes(const personas::ResolvedPersona& persona,
                                                const core::RunnerContext& runners,
                                                const core::Secrets& secrets) {
  std::vector<core::policy::CallScope> scopes;
  scopes.reserve(persona.abilities.size());
  for (const auto& active : persona.abilities) {
    scopes.push_back(
        {persona.name, active.ability, active.entry, core::homeDir(),
         core::runsInSandbox(active.ability, runners, secrets.key(active.ability.name))});
  }
  return scopes;
}

core::policy::PipelineOptions PersonaSession::pipelineOptions() const {
  return pipelineOptionsFor(context.paths);
}

core::gateway::ToolCatalog PersonaSession::catalog(core::gateway::NameStyle names) const {
  core::gateway::ToolCatalog tools({persona.name, core::homeDir(), pipelineOptions(), names},
                                   callScopes(persona, runners, context.secrets));
  for (const auto& connected : reports) {
    if (!connected.error) tools.setTools(connected.ability, connected.tools);
  }
  return tools;
}

const core::ConnectReport* PersonaSession::report(const std::string& ability) const {
  for (const auto& report : reports) {
    if (report.ability == ability) return &report;
  }
  return nullptr;
}

const core::ConnectReport* PersonaSession::connected(const std::string& ability,
                                                     int& exitCode) const {
  const core::ConnectReport* found = report(ability);
  if (found == nullptr) {
    printError(skipped.empty() ? ability + " is not available" : skipped.front());
    // Refused by a rule is a refusal (3), as a rule's refusal of a call is; off and left
    // out are what a connect failure is (4).
    exitCode = std::find(refused.begin(), refused.end(), ability) != refused.end() ? kExitRefused
                                                                                   : kExitConnect;
    return nullptr;
  }
  if (found->error) {
    printError(*found->error);
    exitCode = found->error->code == core::ErrorCode::kRefused ? kExitRefused : kExitConnect;
    return nullptr;
  }
  return found;
}

}  // namespace kaja::cli
