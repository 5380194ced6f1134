#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/output.h"
#include "cli/persona_session.h"
#include "cli/tool_view.h"
#include "core/gateway/proxy_tool.h"
#include "core/manifest/field_reader.h"
#include "core/policy/backup_tools.h"
#include "core/util/quote.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
namespace gateway = core::gateway;
namespace policy = core::policy;

/// A persona that offers more tools than this gets a warning (S5).
constexpr size_t kManyTools = 40;
/// The width every view is laid out for.
constexpr size_t kWidth = 100;
/// The TOOL column of the listing: longer names wrap onto further lines.
constexpr size_t kNameColumns = 40;

// The first line of a description, on one line: third-party text never spans rows.
std::string firstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  std::replace_if(
      line.begin(), line.end(), [](char c) { return c == '\t' || c == '\r'; }, ' ');
  return line;
}

std::string fullName(const std::string& ability, const std::string& tool) {
  return "mcp__" + ability + "__" + tool;
}

// The tools the filter step left out, of `ability` only when it is given.
json droppedJson(const gateway::ToolCatalog& catalog, const std::string* ability = nullptr) {
  json dropped = json::array();
  for (const auto& drop : catalog.dropped()) {
    if (ability != nullptr && drop.ability != *ability) continue;
    dropped.push_back({{"ability", drop.ability},
                       {"tool", drop.tool.name},
                       {"rule", drop.tool.refusal.rule},
                       {"reason", drop.tool.refusal.message}});
  }
  return dropped;
}

void warnDropped(const json& dropped) {
  for (const auto& item : dropped) {
    printWarning(fullName(item["ability"].get<std::string>(), item["tool"].get<std::string>()) +
                 " left out (" + item["rule"].get<std::string>() +
                 "): " + item["reason"].get<std::string>());
  }
}

// `kaja tools`: every tool the persona offers, one row each.
int listAll(const PersonaSession& session, bool asJson) {
  gateway::ToolCatalog catalog = session.catalog(gateway::NameStyle::kCli);
  const auto& tools = catalog.list();
  json dropped = droppedJson(catalog);
  json failed = json::array();
  for (const auto& report : session.reports) {
    if (report.error) {
      failed.push_back({{"ability", report.ability}, {"error", report.error->describe()}});
    }
  }
  size_t totalChars = 0;
  for (const auto& tool : tools) totalChars += schemaChars(tool);
  // What `kaja serve --proxy` costs instead: its one tool, whatever the persona holds.
  const size_t proxyChars =
      gateway::proxyToolDefinition().dump(-1, ' ', false, json::error_handler_t::replace).size();
  std::vector<std::string> warnings;
  if (tools.size() > kManyTools) {
    warnings.push_back("persona \"" + session.persona.name + "\" offers " +
                       std::to_string(tools.size()) + " tools; over " + std::to_string(kManyTools) +
                       " models choose worse and every request costs more.");
  }

  if (asJson) {
    json listed = json::array();
    for (const auto& tool : tools) listed.push_back(toolJson(tool));
    json out = {{"persona", session.persona.name},
                {"tools", listed},
                {"schemaChars", totalChars},
                {"schemaTokens", totalChars / 4},
                {"proxySchemaTokens", proxyChars / 4},
                {"dropped", dropped},
                {"failed", failed},
                {"skipped", session.skipped},
                {"warnings", warnings}};
    std::printf("%s\n", jsonText(out).c_str());
    return kExitOk;
  }

  Table table({"TOOL", "READ", "SCHEMA", "DESCRIPTION"});
  table.wrapColumn(0, kNameColumns);
  for (const auto& tool : tools) {
    table.addRow({oneLine(tool.name), tool.readOnly ? "ro" : "write",
                  std::to_string(schemaChars(tool) / 4) + " tok",
                  fitWidth(oneLine(firstLine(tool.tool.description)), 60)});
  }
  std::fputs(table.render(kWidth, useColour(stdout)).c_str(), stdout);
  std::printf("\npersona %s: %zu tools, schemas ~%zu tokens (~%zu with kaja serve --proxy)\n",
              oneLine(session.persona.name).c_str(), tools.size(), totalChars / 4, proxyChars / 4);
  warnDropped(dropped);
  for (const auto& item : failed) printWarning(item["error"].get<std::string>());
  for (const auto& text : session.skipped) printWarning(text);
  for (const auto& text : session.persona.warnings) printWarning(text);
  for (const auto& text : warnings) printWarning(text);
  return kExitOk;
}

// Returns the exit code when `ability` cannot be shown (not in the persona, or not
// connected), after saying why; nullopt when its tools are in `catalog`.
std::optional<int> checkAbility(const PersonaSession& session, const gateway::ToolCatalog& catalog,
                                const std::string& ability) {
  bool builtIn = ability == policy::kKajaAbility;
  if (builtIn ? !catalog.offersBackupTools() : session.active(ability) == nullptr) {
    std::vector<std::string_view> names;
    names.reserve(session.persona.abilities.size() + 1);
    for (const auto& active : session.persona.abilities) names.push_back(active.ability.name);
    if (catalog.offersBackupTools()) names.push_back(policy::kKajaAbility);
    std::string hint = core::didYouMean(ability, names);
    const marketplace::AbilityRecord* record = session.context.catalog.findAbilityRecord(ability);
    if (record != nullptr && !record->ability) {
      // Listed or not, a manifest that did not load is the thing to fix first.
      printError("ability " + core::quoteForMessage(ability) +
                 " is broken: " + record->error.describe());
      return kExitUsage;
    }
    if (hint.empty() && record != nullptr) {
      hint = record->layer == marketplace::LayerKind::kWorkspace
                 ? "; it is a server of this workspace's .mcp.json: `kaja enable " + ability +
                       "` turns it on here."
                 : "; `kaja persona add " + session.persona.name + " " + ability + "` adds it.";
    }
    printError("persona " + core::quoteForMessage(session.persona.name) + " has no ability " +
               core::quoteForMessage(ability) +
               (hint.empty() ? "; `kaja personas` shows what each persona has." : hint));
    return kExitUsage;
  }
  if (builtIn) return std::nullopt;
  int exitCode = kExitOk;
  if (session.connected(ability, exitCode) == nullptr) return exitCode;
  return std::nullopt;
}

// Returns the exit code for a `tool` that `ability` does not offer, after saying why: left
// out by a rule (and which), or unknown (with the nearest name).
int reportMissingTool(const PersonaSession& session, const gateway::ToolCatalog& catalog,
                      const std::vector<const gateway::CatalogTool*>& offered,
                      const std::string& ability, const std::string& tool) {
  std::vector<std::string_view> names;
  names.reserve(offered.size());
  for (const auto* entry : offered) names.push_back(entry->tool.name);
  const std::vector<gateway::DroppedEntry> dropped = catalog.dropped();
  for (const auto& drop : dropped) {
    if (drop.ability != ability) continue;
    if (drop.tool.name == tool || fullName(ability, drop.tool.name) == tool) {
      const std::string& rule = drop.tool.refusal.rule;
      printError("tool " + core::quoteForMessage(drop.tool.name) + " of " +
                 core::quoteForMessage(ability) + " is left out of persona " +
                 core::quoteForMessage(session.persona.name) + " by rule " + rule + ": " +
                 asSentence(drop.tool.refusal.message) + " `kaja help rules " +
                 rule.substr(0, rule.find(' ')) + "` says more.");
      return kExitRefused;
    }
    names.push_back(drop.tool.name);
  }
  std::string hint = core::didYouMean(tool, names);
  printError("ability " + core::quoteForMessage(ability) + " has no tool " +
             core::quoteForMessage(tool) +
             (hint.empty() ? "; `kaja tools " + ability + "` lists what it offers." : hint));
  return kExitUsage;
}

// `kaja tools ABILITY [TOOL]`: the tools of one ability, each with its whole schema.
int inspect(const std::optional<std::string>& persona, const std::string& ability,
            const std::optional<std::string>& tool, bool asJson) {
  bool builtIn = ability == policy::kKajaAbility;
  // kaja's own tools need no server: connect nothing for them.
  auto session = PersonaSession::open(persona, std::vector<std::string>{builtIn ? "" : ability});
  if (!session) return reportError(session.error());
  gateway::ToolCatalog catalog = session->catalog(gateway::NameStyle::kCli);
  if (auto exit = checkAbility(*session, catalog, ability)) return *exit;

  std::vector<const gateway::CatalogTool*> offered;
  for (const auto& entry : catalog.list()) {
    if (entry.ability == ability) offered.push_back(&entry);
  }
  std::vector<const gateway::CatalogTool*> shown = offered;
  if (tool) {
    std::erase_if(shown, [&](const gateway::CatalogTool* entry) {
      return entry->tool.name != *tool && entry->name != *tool;
    });
    if (shown.empty()) return reportMissingTool(*session, catalog, offered, ability, *tool);
    shown.resize(1);
  }
  json dropped = droppedJson(catalog, &ability);
  if (asJson) {
    json tools = json::array();
    for (const auto* entry : shown) tools.push_back(toolJson(*entry));
    json out = {{"persona", session->persona.name},
                {"ability", ability},
                {"tools", tools},
                {"dropped", dropped}};
    std::printf("%s\n", jsonText(out).c_str());
    return kExitOk;
  }
  for (size_t i = 0; i < shown.size(); ++i) {
    std::printf("%s%s", i > 0 ? "\n" : "", renderToolDetail(*shown[i], kWidth).c_str());
  }
  if (shown.empty()) {
    std::printf("%s offers no tools to persona %s.\n", oneLine(ability).c_str(),
                oneLine(session->persona.name).c_str());
  }
  if (!tool) warnDropped(dropped);
  for (const auto& text : session->persona.warnings) printWarning(text);
  return kExitOk;
}

}  // namespace

int runTools(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--json"}, {"--persona"});
  if (!parsed) return reportError(parsed.error());
  const auto& words = parsed->positional;
  if (words.size() > 2) {
    printError("tools takes at most ABILITY and TOOL (see kaja tools --help).");
    return kExitUsage;
  }
  if (!words.empty()) {
    std::optional<std::string> tool;
    if (words.size() == 2) tool = words[1];
    return inspect(parsed->value("--persona"), words[0], tool, parsed->has("--json"));
  }
  auto session = PersonaSession::open(parsed->value("--persona"));
  if (!session) return reportError(session.error());
  return listAll(*session, parsed->has("--json"));
}

}  // namespace kaja::cli
