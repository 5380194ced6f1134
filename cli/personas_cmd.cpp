#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "core/manifest/ability_loader.h"
#include "personas/persona_resolver.h"

namespace kaja::cli {
namespace {

using nlohmann::json;

std::string describeRoot(const core::PersonaRoot& root) {
  std::string out = root.path;
  if (root.readOnly) out += " (read-only)";
  if (root.backup) out += " (backed up)";
  return out;
}

json entryJson(const core::PersonaEntry& entry) {
  json roots = json::array();
  for (const auto& root : entry.roots) {
    roots.push_back({{"path", root.path}, {"readOnly", root.readOnly}, {"backup", root.backup}});
  }
  return {{"name", entry.ability},
          {"tools", entry.tools ? json(*entry.tools) : json()},
          {"roots", roots}};
}

int listPersonas(const Context& context, bool asJson) {
  std::string active = personas::activePersona(context.paths.configDir);
  if (asJson) {
    json out = json::array();
    for (const auto& record : context.catalog.personas()) {
      json item = {{"name", record.name},
                   {"active", record.name == active},
                   {"source", marketplace::sourceName(record.layer)},
                   {"marketplace", record.marketplace.empty() ? json() : json(record.marketplace)},
                   {"replaces", record.replaces.empty() ? json() : json(record.replaces)},
                   {"file", record.file},
                   {"warnings", record.warnings}};
      if (record.persona) {
        item["description"] = record.persona->description;
        json abilities = json::array();
        for (const auto& entry : record.persona->abilities) abilities.push_back(entryJson(entry));
        item["abilities"] = abilities;
        item["error"] = nullptr;
      } else {
        item["error"] = record.error.describe();
      }
      out.push_back(std::move(item));
    }
    std::printf("%s\n", jsonText(out).c_str());
    return kExitOk;
  }
  bool colourful = useColour(stdout);
  for (const auto& record : context.catalog.personas()) {
    std::string marker = record.name == active ? "* " : "  ";
    std::printf("%s%s", marker.c_str(), colour(oneLine(record.name), "1", colourful).c_str());
    std::vector<std::string> origin;
    if (record.layer == marketplace::LayerKind::kMarketplace) {
      origin.push_back("marketplace " + record.marketplace);
    }
    if (!record.replaces.empty()) origin.push_back("in place of the " + record.replaces + " one");
    if (!origin.empty()) {
      std::string text = origin[0] + (origin.size() > 1 ? ", " + origin[1] : "");
      std::printf(" (%s)", oneLine(text).c_str());
    }
    if (!record.persona) {
      std::printf("  %s\n",
                  colour("broken: " + oneLine(record.error.describe()), "31", colourful).c_str());
      continue;
    }
    if (!record.persona->description.empty()) {
      std::printf("  %s", fitWidth(oneLine(record.persona->description), 80).c_str());
    }
    std::printf("\n");
    for (const auto& entry : record.persona->abilities) {
      std::string line = "    " + entry.ability;
      if (entry.tools) line += " [" + std::to_string(entry.tools->size()) + " tools]";
      for (size_t i = 0; i < entry.roots.size(); ++i) {
        line += (i == 0 ? ": " : ", ") + describeRoot(entry.roots[i]);
      }
      std::printf("%s\n", fitWidth(oneLine(line), 100).c_str());
    }
    for (const auto& warning : record.warnings) printWarning(warning);
  }
  if (context.catalog.findPersona(active) == nullptr) {
    printWarning("the active persona \"" + active +
                 "\" does not exist or is broken; choose one with `kaja persona use NAME`");
  }
  return kExitOk;
}

int usePersona(const Context& context, const std::string& name) {
  auto resolved = personas::resolvePersona(context.catalog, name, core::homeDir());
  if (!resolved) return reportError(resolved.error());
  if (auto saved = personas::setActivePersona(context.paths.configDir, name); !saved) {
    printError(saved.error());
    return kExitFailed;
  }
  for (const auto& warning : resolved->warnings) printWarning(warning);
  for (const auto& active : resolved->abilities) {
    if (active.off) printWarning(active.ability.name + " is off: " + active.offReason);
  }
  printNote(name + " is now the active persona");
  return kExitOk;
}

}  // namespace

int runPersonas(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--json"});
  if (!parsed) return reportError(parsed.error());
  if (!parsed->positional.empty()) {
    printError("personas takes no arguments; to switch, run `kaja persona use NAME`");
    return kExitUsage;
  }
  auto context = Context::load();
  if (!context) return reportError(context.error());
  return listPersonas(*context, parsed->has("--json"));
}

int runPersona(std::span<const std::string> args) {
  if (!args.empty() && args[0] != "use" && !args[0].starts_with("-")) return runPersonaEdit(args);
  auto parsed = parseArgs(args, {});
  if (!parsed) return reportError(parsed.error());
  const auto& words = parsed->positional;
  if (words.size() != 2 || words[0] != "use") {
    printError(
        "usage: kaja persona use NAME (kaja persona --help shows new, add, remove and folder).");
    return kExitUsage;
  }
  if (!core::isValidName(words[1])) {
    printError("\"" + words[1] + "\" is not a persona name (letters, digits, - and _)");
    return kExitUsage;
  }
  auto context = Context::load();
  if (!context) return reportError(context.error());
  return usePersona(*context, words[1]);
}

}  // namespace kaja::cli
