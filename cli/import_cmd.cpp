// `kaja import claude|claude-desktop|cursor|vscode|PATH`: every server a client's file lists,
// written as the user's own abilities. Every server is converted and checked in memory
// first; only then is anything written, each through the manifest writer as `kaja add` does.
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/ability_edit.h"
#include "cli/args.h"
#include "cli/command.h"
#include "cli/import_sources.h"
#include "cli/output.h"
#include "core/manifest/ability_loader.h"
#include "core/manifest/toml_value.h"
#include "core/paths.h"

namespace kaja::cli {
namespace {

using nlohmann::json;

// What becomes of one server.
// NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json members fool the check.
struct Outcome {
  FoundServer found;
  std::string ability;  ///< the ability's name; empty when the server's name gives none
  std::string reason;   ///< why it is skipped; empty when it is imported
  std::string text;     ///< the manifest
  std::optional<std::string> key;
  std::optional<std::string> keyName;  ///< the variable or header that carries the key
  bool keyIsReference = false;         ///< the key is a ${VAR} reference, not a value
  std::string runs;                    ///< what it runs here, or why it cannot
  std::vector<std::string> notes;

  [[nodiscard]] bool imported() const { return reason.empty(); }
};

struct ImportOptions {
  bool force = false;
  bool dryRun = false;
  bool json = false;
  bool enable = false;
};

// A server's name made an ability name: each run of other characters than A-Z, a-z, 0-9,
// - and _ becomes one "-", with none at either end, cut to 64.
std::string abilityNameFor(std::string_view server) {
  if (core::isValidName(server)) return std::string(server);
  std::string out;
  for (char c : server) {
    const bool kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_';
    if (kept) {
      out += c;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
    if (out.size() > 64) break;
  }
  if (out.size() > 64) out.resize(64);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// A server's name for a message: one safe line, cut short.
std::string shown(std::string_view server) { return "\"" + fitWidth(oneLine(server), 60) + "\""; }

void replaceAll(std::string& text, std::string_view from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

// VS Code and Cursor fill in their own variables before they start a server; kaja starts it
// from a manifest that must already hold the folder, so the import fills them in.
core::Result<void> fillClientVariables(json& value, const FoundServer& found) {
  if (value.is_array() || value.is_object()) {
    for (auto& item : value) {
      if (auto ok = fillClientVariables(item, found); !ok) return ok;
    }
    return {};
  }
  if (!value.is_string()) return {};
  std::string text = value.get<std::string>();
  if (text.find("${") == std::string::npos) return {};
  if (!found.projectDir.empty()) {
    replaceAll(text, "${workspaceFolder}", found.projectDir);
    replaceAll(text, "${workspaceFolderBasename}",
               std::filesystem::path(found.projectDir).filename().string());
  }
  replaceAll(text, "${userHome}", core::homeDir());
  replaceAll(text, "${pathSeparator}", "/");
  replaceAll(text, "${/}", "/");
  if (text.find("${workspaceFolder") != std::string::npos) {
    return core::fail(core::ErrorCode::kUsage,
                      "it uses ${workspaceFolder}, which only a project's own file "
                      "(./.vscode/mcp.json, ./.cursor/mcp.json) pins down; import that file "
                      "from its project's folder.");
  }
  value = text;
  return {};
}

// VS Code asks for an ${input:…} each time it starts the server. As the key it is a
// reference like any ${VAR} (kaja key set stores it); anywhere else kaja has nothing to
// put there.
core::Result<void> checkInputs(const core::AbilityDraft& draft) {
  std::vector<std::pair<std::string, std::string>> fields;
  if (draft.command) fields.emplace_back("command", *draft.command);
  for (const auto& arg : draft.args) fields.emplace_back("args", arg);
  if (draft.url) fields.emplace_back("url", *draft.url);
  if (draft.cwd) fields.emplace_back("cwd", *draft.cwd);
  for (const auto& [name, value] : draft.env) {
    if (!core::looksSecret(name)) fields.emplace_back("env." + name, value);
  }
  for (const auto& [field, value] : fields) {
    if (value.find("${input:") == std::string::npos) continue;
    return core::fail(core::ErrorCode::kUsage,
                      "\"" + oneLine(field) +
                          "\" holds an ${input:…} that VS Code asks for each time, and kaja "
                          "has no such prompt; write the value into the file (only a key may "
                          "stay an input, stored with kaja key set).");
  }
  return {};
}

// Values kaja passes on exactly as written, which a client would have expanded.
bool holdsReference(const core::AbilityDraft& draft) {
  auto has = [](const std::string& text) { return text.find("${") != std::string::npos; };
  if ((draft.command && has(*draft.command)) || (draft.url && has(*draft.url))) return true;
  for (const auto& arg : draft.args) {
    if (has(arg)) return true;
  }
  for (const auto& [name, value] : draft.env) {
    if (!core::looksSecret(name) && has(value)) return true;
  }
  return false;
}

std::string manifestText(const Outcome& out, const core::Ability& ability) {
  std::string text = core::formatAbility(ability);
  std::string head =
      "# " + ability.name + ": imported by `kaja import` from " + oneLine(out.found.file);
  if (out.found.name != ability.name) head += " (server " + oneLine(out.found.name) + ")";
  if (ability.auth) {
    head += "; its key is in kaja's secrets file (`kaja key set " + ability.name + "`)";
  }
  return head + ".\n" + text.substr(text.find('\n') + 1);
}

// Converts a server whose name is settled, or says why it cannot be imported.
core::Result<void> convert(Outcome& out, const Context& context,
                           const std::optional<core::RunnerContext>& runners) {
  json entry = out.found.entry;
  if (auto ok = fillClientVariables(entry, out.found); !ok) return ok;
  auto draft = draftFromEntry(out.ability, entry, out.found.projectDir);
  if (!draft) return std::unexpected(draft.error());
  if (auto ok = checkInputs(*draft); !ok) return ok;
  auto plan = core::planAbility(*draft);
  if (!plan) return std::unexpected(plan.error());
  out.text = manifestText(out, plan->ability);
  // The loader's own check, in memory: a manifest it refuses is a skipped server, not a
  // half-finished import.
  const std::string file =
      context.paths.userMarketplace + "/abilities/" + out.ability + "/mcp.toml";
  auto root = core::parseTomlText(out.text, file);
  if (!root) return std::unexpected(root.error());
  auto ability = core::abilityFromToml(*root, out.ability, file);
  if (!ability) return std::unexpected(ability.error());
  out.key = plan->key;
  out.keyIsReference = plan->keyReference.has_value();
  if (ability->auth) out.keyName = ability->auth->name;
  if (holdsReference(*draft)) {
    out.notes.push_back(
        "its ${VAR} references are kept as written; kaja passes them on "
        "without expanding them");
  }
  if (out.keyIsReference) {
    out.notes.push_back("its key is the reference " + *plan->keyReference +
                        "; store the key itself with `kaja key set " + out.ability + "`");
  }
  if (runners) {
    core::Resolution resolution = core::resolveAbility(
        *ability, *runners, out.key ? std::optional<std::string>("set") : std::nullopt);
    out.runs = resolution.state == core::AbilityState::kOn
                   ? "runs " + resolution.runs()
                   : std::string(core::toString(resolution.state)) + ": " + resolution.reason;
    if (ability->cwd) out.runs += " (in " + *ability->cwd + ")";
    for (const auto& warning : resolution.warnings) out.notes.push_back(warning);
  }
  return {};
}

// Settles each server's ability name (the first of a name wins: the narrowest scope), then
// converts it.
std::vector<Outcome> planAll(std::vector<FoundServer> servers, const Context& context, bool force) {
  auto runnerContext = context.runners();
  std::optional<core::RunnerContext> runners;
  if (runnerContext) runners = std::move(*runnerContext);
  std::vector<Outcome> outcomes;
  std::map<std::string, size_t> taken;
  for (auto& found : servers) {
    Outcome& out = outcomes.emplace_back();
    out.found = std::move(found);
    out.ability = abilityNameFor(out.found.name);
    if (out.ability.empty()) {
      out.reason = "its name has no letter, digit, - or _ to make an ability name of.";
      continue;
    }
    if (auto it = taken.find(out.ability); it != taken.end()) {
      const FoundServer& first = outcomes[it->second].found;
      out.reason = first.name == out.found.name
                       ? "an entry of the same name in " + first.from + " (" + first.scope +
                             ") comes first, as the client itself would use it."
                       : "its ability name \"" + out.ability + "\" is also that of server " +
                             shown(first.name) + " in " + first.from +
                             ", which comes first; rename one of them.";
      continue;
    }
    taken.emplace(out.ability, outcomes.size() - 1);
    // A server of the workspace's own .mcp.json is no ability to keep: importing it is the
    // way to make it one.
    const marketplace::AbilityRecord* existing = context.catalog.findAbilityRecord(out.ability);
    if (existing != nullptr && existing->layer != marketplace::LayerKind::kWorkspace && !force) {
      out.reason =
          "an ability named \"" + out.ability + "\" already exists; use --force to replace it.";
      continue;
    }
    if (auto ok = convert(out, context, runners); !ok) out.reason = ok.error().message;
  }
  return outcomes;
}

// Writes each imported server's manifest, its key first; a write that fails makes that
// server skipped and leaves the others. Returns false when one failed.
bool writeAll(std::vector<Outcome>& outcomes, Context& context, bool force) {
  bool allWritten = true;
  core::Secrets& secrets = context.secrets;
  const std::string& secretsFile = context.paths.secretsFile;
  for (auto& out : outcomes) {
    if (!out.imported()) continue;
    const std::optional<std::string> before = secrets.key(out.ability);
    auto saveKey = [&]() -> core::Result<void> {
      if (!out.key) return {};
      secrets.set(out.ability, *out.key);
      return secrets.save(secretsFile);
    };
    auto written = core::writeAbilityManifest(context.paths.userMarketplace + "/abilities",
                                              out.ability, out.text, force, saveKey);
    if (written) continue;
    if (out.key && before) secrets.set(out.ability, *before);
    if (out.key && !before) secrets.remove(out.ability);
    out.reason = "it could not be written: " + written.error().describe();
    allWritten = false;
  }
  return allWritten;
}

json jsonReport(const std::vector<Outcome>& outcomes, const ImportOptions& options) {
  json imported = json::array();
  json skipped = json::array();
  for (const auto& out : outcomes) {
    json row = {{"server", out.found.name},
                {"name", out.ability.empty() ? json() : json(out.ability)},
                {"from", out.found.from},
                {"scope", out.found.scope}};
    if (!out.imported()) {
      row["reason"] = out.reason;
      skipped.push_back(std::move(row));
      continue;
    }
    row["runs"] = out.runs;
    row["key"] = !out.keyName ? json() : json(out.keyIsReference ? "reference" : "stored");
    row["keyName"] = out.keyName ? json(*out.keyName) : json();
    row["notes"] = out.notes;
    imported.push_back(std::move(row));
  }
  return {{"dryRun", options.dryRun}, {"imported", imported}, {"skipped", skipped}};
}

void printReport(const std::vector<Outcome>& outcomes, const ImportOptions& options,
                 const Context& context) {
  for (const auto& out : outcomes) {
    std::string line = out.imported() ? (options.dryRun ? "would import " : "imported ")
                                      : (options.dryRun ? "would skip " : "skipped ");
    line += shown(out.found.name);
    if (out.imported() && out.ability != out.found.name) line += " as " + out.ability;
    line += " from " + oneLine(out.found.from) + " (" + out.found.scope + "): ";
    line += out.imported() ? oneLine(out.runs) : oneLine(out.reason);
    std::printf("%s\n", line.c_str());
    if (!out.imported()) continue;
    if (out.keyName && !out.keyIsReference) {
      std::printf("  its key (%s) %s to %s, not into the manifest\n", oneLine(*out.keyName).c_str(),
                  options.dryRun ? "would go" : "went", oneLine(context.paths.secretsFile).c_str());
    }
    for (const auto& note : out.notes) std::printf("  %s\n", oneLine(note).c_str());
  }
}

void printSummary(const std::vector<Outcome>& outcomes, const ImportOptions& options,
                  const Context& context) {
  size_t imported = 0;
  std::string first;
  for (const auto& out : outcomes) {
    if (!out.imported()) continue;
    if (imported++ == 0) first = out.ability;
  }
  const size_t skipped = outcomes.size() - imported;
  std::string counts = std::to_string(imported) + " of " + std::to_string(outcomes.size()) +
                       " server" + (outcomes.size() == 1 ? "" : "s");
  if (outcomes.empty()) {
    printNote("the files list no servers; nothing to import");
  } else if (options.dryRun) {
    printNote("would import " + counts + "; nothing was written (--dry-run)");
  } else if (imported == 0) {
    printNote("imported none of " + std::to_string(skipped) + " servers; nothing was written");
  } else {
    printNote("imported " + counts + " into " + context.paths.userMarketplace + "/abilities" +
              (options.enable ? "" : "; turn one on with `kaja enable " + first + "`"));
  }
}

}  // namespace

int runImport(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--force", "--dry-run", "--json", "--enable"});
  if (!parsed) return reportError(parsed.error());
  if (parsed->positional.size() != 1) {
    printError(
        "usage: kaja import claude|claude-desktop|cursor|vscode|PATH [--dry-run] [--force] "
        "(see kaja import --help).");
    return kExitUsage;
  }
  ImportOptions options{parsed->has("--force"), parsed->has("--dry-run"), parsed->has("--json"),
                        parsed->has("--enable")};
  auto servers = findServers(parsed->positional[0]);
  if (!servers) return reportError(servers.error());
  auto context = Context::load();
  if (!context) return reportError(context.error());
  std::vector<Outcome> outcomes = planAll(std::move(*servers), *context, options.force);
  bool written = options.dryRun || writeAll(outcomes, *context, options.force);
  if (options.enable && !options.dryRun) {
    for (const auto& out : outcomes) {
      if (!out.imported()) continue;
      const std::vector<std::string> name = {out.ability};
      if (runEnable(name) != kExitOk) written = false;
    }
  }
  if (options.json) {
    std::printf("%s\n", jsonText(jsonReport(outcomes, options)).c_str());
  } else {
    printReport(outcomes, options, *context);
  }
  printSummary(outcomes, options, *context);
  return written ? kExitOk : kExitFailed;
}

}  // namespace kaja::cli
