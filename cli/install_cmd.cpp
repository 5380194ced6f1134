// `kaja install NAME`: turns on a server kaja knows (shipped, or from a synced marketplace)
// after showing what it runs and connecting it once, never one from a search (T1).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "core/host/host.h"
#include "core/runner/runner_resolver.h"
#include "core/util/quote.h"
#include "personas/activation.h"
#include "personas/persona_resolver.h"

namespace kaja::cli {
namespace {

using nlohmann::json;

// Where the server comes from, as the card says it.
std::string origin(const marketplace::AbilityRecord& record) {
  if (record.layer == marketplace::LayerKind::kShipped) return "shipped with kaja";
  return "marketplace " + record.marketplace + " (" + record.dir + "/mcp.toml)";
}

}  // namespace

int runInstall(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--json"}, {});
  if (!parsed) return reportError(parsed.error());
  if (parsed->positional.size() != 1) {
    printError("kaja install takes the NAME of one server kaja knows; `kaja abilities` lists them");
    return kExitUsage;
  }
  const std::string& name = parsed->positional[0];
  auto context = Context::load();
  if (!context) return reportError(context.error());
  const marketplace::AbilityRecord* record = context->catalog.findAbilityRecord(name);
  if (record == nullptr) {
    printError(
        "kaja installs only servers it knows (shipped, or from a marketplace you sync), "
        "and knows none named " +
        core::quoteForMessage(name) + "; `kaja find " + name +
        "` searches the registry, `kaja add` adds your own");
    return kExitUsage;
  }
  if (record->layer == marketplace::LayerKind::kUser ||
      record->layer == marketplace::LayerKind::kWorkspace) {
    printError(name + " is " +
               (record->layer == marketplace::LayerKind::kUser ? "your own ability"
                                                               : "a server of this workspace") +
               ", not one kaja vouches for; `kaja enable " + name + "` turns it on");
    return kExitUsage;
  }
  if (!record->ability) {
    printError(record->error.describe());
    return kExitUsage;
  }
  const core::Ability& ability = *record->ability;
  const std::string persona = personas::activePersona(context->paths.configDir);
  auto resolved = personas::resolvePersona(context->catalog, persona, core::homeDir());
  if (resolved && resolved->find(name) != nullptr) {
    printNote(name + " is in persona " + persona + " already; nothing to install");
    return kExitOk;
  }
  auto runners = context->runners();
  if (!runners) return reportError(runners.error());
  core::Resolution resolution = core::resolveAbility(ability, *runners, context->secrets.key(name));
  if (resolution.state != core::AbilityState::kOn) {
    // Unmet setup: the sentence is this server's own (a key to add, a runner to install).
    printError(name + " cannot be installed yet: " + resolution.reason);
    return kExitUsage;
  }
  if (ability.roots) {
    printError(name + " works in folders, which a persona gives it: `kaja persona add " + persona +
               " " + name + "` and then `kaja persona folder add " + persona +
               " PATH` install it with the folders it may use");
    return kExitUsage;
  }
  // The card: exactly what will run, and who vouches for it.
  printNote("installing " + name + ": runs " + core::quoteForMessage(resolution.runs()) + ", " +
            origin(*record));

  personas::ResolvedPersona alone;
  alone.name = persona;
  personas::ActiveAbility active;
  active.ability = ability;
  active.entry.ability = name;
  alone.abilities.push_back(std::move(active));
  personas::ActivationPlan plan = personas::planActivations(alone, *runners, context->secrets);
  if (plan.activations.empty()) {
    printError(
        name + " was not started: " +
        (plan.skipped.empty() ? std::string("kaja found nothing to start") : plan.skipped.front()));
    return kExitConnect;
  }
  core::Host host;
  std::vector<core::ConnectReport> reports = host.activate(std::move(plan.activations));
  if (reports.empty() || reports.front().error) {
    core::Error error = reports.empty()
                            ? core::Error{core::ErrorCode::kConnect, "it did not answer", {}, {}, 0}
                            : *reports.front().error;
    printError(name + " did not connect, so it was not installed: " + error.describe());
    return exitCodeFor(error) == kExitRefused ? kExitRefused : kExitConnect;
  }
  const size_t tools = reports.front().tools.size();
  if (tools == 0) {
    printError(name + " connected but offers no tools, so it was not installed");
    return kExitFailed;
  }
  // Turning it on goes through the same path as `kaja enable`, which reports a failed save.
  std::vector<std::string> enableArgs = {name};
  if (int saved = runEnable(enableArgs); saved != kExitOk) {
    printError(name + " connected with " + counted(tools, "tool") + ", but persona " + persona +
               " could not be saved, so it is not installed");
    return saved;
  }
  if (parsed->has("--json")) {
    std::printf("%s\n", jsonText({{"name", name},
                                  {"runs", resolution.runs()},
                                  {"from", origin(*record)},
                                  {"tools", tools},
                                  {"persona", persona}})
                            .c_str());
  }
  printNote("installed " + name + " with " + counted(tools, "tool") + "; it is in persona " +
            persona + " now");
  return kExitOk;
}

}  // namespace kaja::cli
