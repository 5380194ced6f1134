#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"

namespace kaja::cli {
namespace {

using nlohmann::json;

// NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json members fool the check.
struct Row {
  std::string name;
  std::string transport;
  std::string state;
  std::string reason;
  std::string runner;
  std::string runs;
  std::string shortRuns;  ///< for the table: the program by its file name
  std::string description;
  std::string source;       ///< "shipped", "marketplace" or "user"
  std::string marketplace;  ///< the synced marketplace it came from, for "marketplace"
  std::string manifest;
  std::vector<std::string> warnings;
  json sandbox;  ///< with [sandbox] configured: whether it runs there, and if not why
  json tools;    ///< the allow-list with each tool's line from toolDescriptions (K18)
  json policy;   ///< approval, localOnly, key needs: what a reader wants before running it
};

Row describe(const marketplace::AbilityRecord& record, const core::RunnerContext& runners,
             const core::Secrets& secrets) {
  Row row;
  row.name = record.name;
  row.source = marketplace::sourceName(record.layer);
  row.marketplace = record.marketplace;
  row.manifest = marketplace::manifestFile(record);
  row.warnings = record.notes;
  if (!record.ability) {
    row.state = "broken";
    row.reason = record.error.describe();
    return row;
  }
  const core::Ability& ability = *record.ability;
  row.transport = core::toString(ability.transport);
  row.description = ability.description;
  core::Resolution resolution = core::resolveAbility(ability, runners, secrets.key(ability.name));
  row.state = core::toString(resolution.state);
  row.reason = resolution.reason;
  if (auto off = marketplace::offUntilEnabled(record);
      off && resolution.state == core::AbilityState::kOn) {
    row.state = "off";
    row.reason = *off;
  }
  if (resolution.runner) row.runner = core::toString(*resolution.runner);
  row.runs = marketplace::maskExpandedSecrets(record, resolution.runs());
  row.shortRuns = marketplace::maskExpandedSecrets(record, resolution.runs(true));
  row.warnings.insert(row.warnings.end(), resolution.warnings.begin(), resolution.warnings.end());
  if (runners.sandbox) {
    const bool there = resolution.runner == core::RunnerKind::kSandbox;
    row.sandbox = {{"runsThere", there},
                   {"reason", there ? json() : json(resolution.notInSandbox)}};
    // A stdio ability the worker may not run says why it stays here (K19, K23).
    if (!there && !ability.isRemote() && resolution.state == core::AbilityState::kOn) {
      row.shortRuns = "local: " + resolution.notInSandbox;
    }
  }
  // The manifest's own words about each tool, usable before the server has ever run.
  if (ability.tools) {
    row.tools = json::array();
    for (const auto& tool : *ability.tools) {
      auto line = ability.toolDescriptions.find(tool);
      row.tools.push_back(
          {{"name", tool},
           {"description", line == ability.toolDescriptions.end() ? json() : json(line->second)}});
    }
  }
  row.policy = {{"approval", core::toString(ability.approval)},
                {"localOnly", ability.isLocalOnly()},
                {"roots", ability.roots},
                {"needsKey", ability.needsKey()},
                {"keyless", ability.auth.has_value() && ability.auth->keyless}};
  return row;
}

}  // namespace

int runAbilities(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--json"});
  if (!parsed) return reportError(parsed.error());
  if (!parsed->positional.empty()) {
    printError("abilities takes no arguments (see kaja abilities --help)");
    return kExitUsage;
  }
  auto context = Context::load();
  if (!context) return reportError(context.error());
  auto found = context->runners();
  if (!found) return reportError(found.error());
  const core::RunnerContext& runners = *found;
  std::vector<Row> rows;
  for (const auto& record : context->catalog.abilities()) {
    rows.push_back(describe(record, runners, context->secrets));
  }

  if (parsed->has("--json")) {
    json out = json::array();
    for (const auto& row : rows) {
      auto orNull = [](const std::string& text) { return text.empty() ? json() : json(text); };
      out.push_back({{"name", row.name},
                     {"transport", orNull(row.transport)},
                     {"state", row.state},
                     {"reason", orNull(row.reason)},
                     {"runner", orNull(row.runner)},
                     {"runs", orNull(row.runs)},
                     {"description", row.description},
                     {"source", row.source},
                     {"marketplace", orNull(row.marketplace)},
                     {"manifest", row.manifest},
                     {"sandbox", row.sandbox},
                     {"tools", row.tools},
                     {"policy", row.policy},
                     {"warnings", row.warnings}});
    }
    std::printf("%s\n", jsonText(out).c_str());
    return kExitOk;
  }

  bool colourful = useColour(stdout);
  // Where each ability comes from matters once a synced marketplace is in the mix.
  const bool synced = std::any_of(rows.begin(), rows.end(), [](const Row& row) {
    return !row.marketplace.empty() || row.source == "workspace";
  });
  std::vector<std::string> headings = {"NAME", "STATE", "RUNNER", "RUNS / WHY NOT"};
  if (synced) headings.insert(headings.begin() + 1, "FROM");
  Table table(headings);
  for (const auto& row : rows) {
    std::string state = row.state == "on"       ? colour(row.state, "32", colourful)
                        : row.state == "broken" ? colour(row.state, "31", colourful)
                                                : colour(row.state, "33", colourful);
    std::vector<std::string> cells = {oneLine(row.name), state,
                                      row.runner.empty() ? "-" : oneLine(row.runner),
                                      oneLine(row.reason.empty() ? row.shortRuns : row.reason)};
    if (synced)
      cells.insert(cells.begin() + 1, row.marketplace.empty() ? row.source : row.marketplace);
    table.addRow(cells);
  }
  std::fputs(table.render(terminalWidth(), colourful).c_str(), stdout);
  for (const auto& row : rows) {
    for (const auto& warning : row.warnings) printWarning(warning);
  }
  return kExitOk;
}

}  // namespace kaja::cli
