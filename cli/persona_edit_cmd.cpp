// `kaja persona new|add|remove|folder …` and `kaja enable|disable ABILITY`: personas edited
// from the command line. A shipped persona is edited as the user's own copy, which takes
// its place.
#include <cstdio>
#include <filesystem>

#include "cli/ability_edit.h"
#include "cli/args.h"
#include "cli/command.h"
#include "cli/output.h"
#include "cli/workspace_layer.h"
#include "core/manifest/ability_loader.h"
#include "core/manifest/field_reader.h"
#include "core/manifest/manifest_writer.h"
#include "core/util/quote.h"
#include "personas/persona_editor.h"
#include "personas/persona_resolver.h"

namespace kaja::cli {
namespace {

namespace fs = std::filesystem;

// A persona loaded for a change, and where the changed one goes.
struct Editing {
  Context context;
  core::Persona persona;
  std::string file;   ///< always in the user's marketplace
  bool copy = false;  ///< the persona was shipped: this is the user's first own copy
};

std::string nearestPersona(const Context& context, const std::string& name) {
  std::vector<std::string_view> names;
  for (const auto& record : context.catalog.personas()) names.push_back(record.name);
  std::string near = core::nearestWord(name, std::span(names.data(), names.size()));
  return near.empty() ? "" : " Did you mean \"" + near + "\"?";
}

std::string userFile(const Context& context, const std::string& name) {
  return context.paths.userMarketplace + "/personas/" + name + ".toml";
}

core::Result<void> checkName(const std::string& name, const char* what) {
  if (core::isValidName(name)) return {};
  return core::fail(core::ErrorCode::kUsage, "\"" + name + "\" is not a valid " + what +
                                                 " name: use 1-64 of A-Z, a-z, 0-9, - and _.");
}

// Opens persona `name` of `context`'s catalog for editing.
core::Result<Editing> openPersona(const std::string& name, core::Result<Context> context) {
  if (auto ok = checkName(name, "persona"); !ok) return std::unexpected(ok.error());
  if (!context) return std::unexpected(context.error());
  const marketplace::PersonaRecord* record = nullptr;
  for (const auto& each : context->catalog.personas()) {
    if (each.name == name) record = &each;
  }
  if (record == nullptr) {
    return core::fail(core::ErrorCode::kNotFound, "there is no persona named \"" + name +
                                                      "\"; `kaja personas` lists them." +
                                                      nearestPersona(*context, name));
  }
  if (!record->persona) {
    return core::fail(core::ErrorCode::kInvalidConfig, "persona \"" + name + "\" is broken (" +
                                                           record->error.describe() +
                                                           "); fix its file first.");
  }
  Editing editing{std::move(*context), *record->persona, "", record->shipped};
  editing.file = userFile(editing.context, name);
  return editing;
}

core::Result<Editing> openPersona(const std::string& name) {
  if (auto ok = checkName(name, "persona"); !ok) return std::unexpected(ok.error());
  return openPersona(name, Context::load());
}

core::Result<void> checkAbility(const Context& context, const std::string& ability) {
  if (auto ok = checkName(ability, "ability"); !ok) return ok;
  const marketplace::AbilityRecord* record = context.catalog.findAbilityRecord(ability);
  if (record != nullptr && record->layer == marketplace::LayerKind::kWorkspace) {
    // A persona outlives the folder kaja runs in: a name written into it for this project's
    // server would match whatever server of that name the next project's file brings.
    return core::fail(core::ErrorCode::kUsage,
                      ability +
                          " is a server of this workspace's .mcp.json, which no persona "
                          "lists; `kaja enable " +
                          ability + "` turns it on in this workspace.");
  }
  if (record != nullptr) return {};
  return core::fail(core::ErrorCode::kNotFound, "there is no ability named \"" + ability +
                                                    "\"; `kaja abilities` lists them." +
                                                    nearestAbility(context, ability));
}

int save(Editing& editing, const std::string& done) {
  auto written = core::writePersonaFile(editing.file, core::formatPersona(editing.persona));
  if (!written) return reportError(written.error());
  printNote("persona " + editing.persona.name + ": " + done + " (" + editing.file + ")");
  if (editing.copy) {
    printNote("this is your own copy of the shipped persona; it takes its place");
  }
  return kExitOk;
}

std::optional<std::vector<std::string>> splitTools(const std::optional<std::string>& given) {
  if (!given) return std::nullopt;
  std::vector<std::string> tools;
  size_t start = 0;
  while (start <= given->size()) {
    size_t comma = given->find(',', start);
    if (comma == std::string::npos) comma = given->size();
    std::string tool = given->substr(start, comma - start);
    tool.erase(0, tool.find_first_not_of(" \t"));
    tool.erase(tool.find_last_not_of(" \t") + 1);
    if (!tool.empty()) tools.push_back(tool);
    start = comma + 1;
  }
  return tools;
}

int newPersona(const ParsedArgs& parsed) {
  const std::string& name = parsed.positional[1];
  if (auto ok = checkName(name, "persona"); !ok) return reportError(ok.error());
  auto context = Context::load();
  if (!context) return reportError(context.error());
  for (const auto& record : context->catalog.personas()) {
    if (record.name == name) {
      printError("a persona named \"" + name + "\" already exists (" + record.file +
                 "); change it with `kaja persona add` and `kaja persona remove`.");
      return kExitUsage;
    }
  }
  core::Persona persona;
  if (auto from = parsed.value("--from")) {
    auto source = openPersona(*from);
    if (!source) return reportError(source.error());
    persona = source->persona;
  }
  persona.name = name;
  if (auto description = parsed.value("--description")) persona.description = *description;
  std::string file = userFile(*context, name);
  Editing editing{std::move(*context), std::move(persona), std::move(file), false};
  return save(editing, "created");
}

int addToPersona(core::Result<Editing> editing, const std::string& personaName,
                 const std::string& ability, const std::optional<std::string>& toolsGiven) {
  if (!editing) return reportError(editing.error());
  if (auto ok = checkAbility(editing->context, ability); !ok) return reportError(ok.error());
  auto tools = splitTools(toolsGiven);
  if (tools && tools->empty()) {
    printError("--tools takes tool names separated by commas, like --tools read,search.");
    return kExitUsage;
  }
  if (!personas::addAbility(editing->persona, ability, tools)) {
    printNote("persona " + personaName + " already lists " + ability + "; nothing was changed");
    return kExitOk;
  }
  return save(*editing, "lists " + ability);
}

int removeFromPersona(core::Result<Editing> editing, const std::string& ability) {
  if (!editing) return reportError(editing.error());
  if (auto ok = personas::removeAbility(editing->persona, ability); !ok) {
    return reportError(ok.error());
  }
  return save(*editing, "no longer lists " + ability);
}

int folder(const ParsedArgs& parsed) {
  const auto& words = parsed.positional;
  if (words.size() != 4 || (words[1] != "add" && words[1] != "rm")) {
    printError("usage: kaja persona folder add|rm PERSONA PATH [--ability A].");
    return kExitUsage;
  }
  auto path = personas::folderPath(words[3]);
  if (!path) return reportError(path.error());
  auto editing = openPersona(words[2]);
  if (!editing) return reportError(editing.error());
  auto named = parsed.value("--ability");
  if (words[1] == "rm") {
    if (auto ok = personas::removeFolder(editing->persona, *path, named); !ok) {
      return reportError(ok.error());
    }
    return save(*editing, "no longer gives " + *path);
  }
  const marketplace::Catalog& catalog = editing->context.catalog;
  auto entry = personas::folderEntry(editing->persona, named, [&](const std::string& name) {
    const core::Ability* ability = catalog.findAbility(name);
    return ability != nullptr && ability->roots;
  });
  if (!entry) return reportError(entry.error());
  core::PersonaRoot root{*path, parsed.has("--read-only"), parsed.has("--backup")};
  if (!personas::addFolder(**entry, root)) {
    printNote("persona " + words[2] + " already gives " + *path + "; nothing was changed");
    return kExitOk;
  }
  std::error_code ec;
  if (!fs::is_directory(core::expandHome(*path, core::homeDir()), ec)) {
    printWarning("the folder " + *path + " does not exist yet; create it before using the persona");
  }
  return save(*editing, "gives " + (*entry)->ability + " " + *path +
                            (root.readOnly ? " (read-only)" : "") +
                            (root.backup ? " (backed up)" : ""));
}

// Turns a server of the workspace's .mcp.json on or off for this workspace: kept in kaja's
// data folder, never in the workspace's files or a persona.
int inWorkspace(const Context& context, const marketplace::AbilityRecord& record, bool enable,
                bool narrowed) {
  if (narrowed) {
    printError(
        "--tools narrows a persona's entry, and a workspace server joins every persona as "
        "it is; import it with `kaja import claude` to narrow its tools");
    return kExitUsage;
  }
  if (enable && !record.ability) {
    printError(record.error.describe());
    return kExitUsage;
  }
  if (record.enabled == enable) {
    printNote(record.name + " is already " + (enable ? "on" : "off") + " in " +
              context.workspaceDir + "; nothing was changed");
    return kExitOk;
  }
  if (auto saved = setEnabledInWorkspace(context.paths, context.workspaceDir, record.name,
                                         record.fingerprint, enable);
      !saved) {
    return reportError(saved.error());
  }
  if (enable) {
    printNote(
        "turned on " + record.name + " from " + context.workspaceDir +
        "/.mcp.json for this workspace; it runs " +
        core::quoteForMessage(record.ability->command.value_or(record.ability->url.value_or(""))) +
        " when a persona is used here");
  } else {
    printNote("turned off " + record.name + " for " + context.workspaceDir);
  }
  return kExitOk;
}

// Runs `edit` on the active persona.
int inActivePersona(std::span<const std::string> args, bool enable) {
  auto parsed = parseArgs(args, {},
                          enable ? std::initializer_list<std::string_view>{"--tools"}
                                 : std::initializer_list<std::string_view>{});
  if (!parsed) return reportError(parsed.error());
  if (parsed->positional.size() != 1) {
    printError(enable ? "usage: kaja enable ABILITY [--tools a,b]."
                      : "usage: kaja disable ABILITY.");
    return kExitUsage;
  }
  auto paths = core::Paths::fromEnvironment();
  if (!paths) return reportError(paths.error());
  std::string active = personas::activePersona(paths->configDir);
  const std::string& ability = parsed->positional[0];
  // One load serves both: a workspace server is switched here, anything else in the persona.
  auto context = Context::load();
  if (context) {
    const marketplace::AbilityRecord* record = context->catalog.findAbilityRecord(ability);
    if (record != nullptr && record->layer == marketplace::LayerKind::kWorkspace) {
      return inWorkspace(*context, *record, enable, parsed->value("--tools").has_value());
    }
  }
  auto editing = openPersona(active, std::move(context));
  return enable ? addToPersona(std::move(editing), active, ability, parsed->value("--tools"))
                : removeFromPersona(std::move(editing), ability);
}

}  // namespace

int runPersonaEdit(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--read-only", "--backup"},
                          {"--from", "--description", "--tools", "--ability"});
  if (!parsed) return reportError(parsed.error());
  const auto& words = parsed->positional;
  const std::string verb = words.empty() ? "" : words[0];
  if (verb == "new" && words.size() == 2) return newPersona(*parsed);
  if (verb == "add" && words.size() == 3) {
    return addToPersona(openPersona(words[1]), words[1], words[2], parsed->value("--tools"));
  }
  if (verb == "remove" && words.size() == 3) {
    return removeFromPersona(openPersona(words[1]), words[2]);
  }
  if (verb == "folder") return folder(*parsed);
  printError(
      "usage: kaja persona use NAME | new NAME [--from P] | add P ABILITY [--tools a,b] | "
      "remove P ABILITY | folder add|rm P PATH (see kaja persona --help).");
  return kExitUsage;
}

int runEnable(std::span<const std::string> args) { return inActivePersona(args, true); }

int runDisable(std::span<const std::string> args) { return inActivePersona(args, false); }

}  // namespace kaja::cli
