#include "cli/workspace_layer.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/ability_edit.h"
#include "cli/output.h"
#include "core/manifest/ability_loader.h"
#include "core/manifest/manifest_writer.h"
#include "core/util/quote.h"
#include "core/util/sys.h"
#include "marketplace/sync/verify.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::size_t kMaxWorkspaceFileBytes = std::size_t{4} << 20;
constexpr const char* kFileName = ".mcp.json";

bool isVariableName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front())) != 0) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

std::string stateFile(const core::Paths& paths) { return paths.dataDir + "/workspaces.json"; }

json readState(const core::Paths& paths) {
  auto text = core::readRegularFile(stateFile(paths), kMaxWorkspaceFileBytes, stateFile(paths));
  if (!text) return json::object();
  json state = json::parse(*text, nullptr, false);
  return state.is_object() ? state : json::object();
}

// Expands every field Claude Code expands: command, args, env, url and headers (and cwd).
core::Result<void> expandDraft(core::AbilityDraft& draft, const EnvLookup& env) {
  auto expand = [&](std::string& text) -> core::Result<void> {
    auto done = expandVariables(text, env);
    if (!done) return std::unexpected(done.error());
    text = std::move(*done);
    return {};
  };
  std::vector<std::string*> fields;
  if (draft.command) fields.push_back(&*draft.command);
  if (draft.url) fields.push_back(&*draft.url);
  if (draft.cwd) fields.push_back(&*draft.cwd);
  for (auto& arg : draft.args) fields.push_back(&arg);
  for (auto& [name, value] : draft.env) fields.push_back(&value);
  for (auto& [name, value] : draft.headers) fields.push_back(&value);
  for (std::string* field : fields) {
    if (auto ok = expand(*field); !ok) return ok;
  }
  return {};
}

marketplace::AbilityRecord brokenRecord(const std::string& name, const std::string& dir,
                                        core::Error error) {
  marketplace::AbilityRecord record;
  record.name = name;
  record.dir = dir;
  record.layer = marketplace::LayerKind::kWorkspace;
  error.code = core::ErrorCode::kInvalidConfig;
  record.error = std::move(error);
  return record;
}

}  // namespace

core::Result<std::string> expandVariables(const std::string& text, const EnvLookup& env) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t open = text.find("${", at);
    if (open == std::string::npos) break;
    size_t close = text.find('}', open + 2);
    if (close == std::string::npos) break;
    std::string inside = text.substr(open + 2, close - open - 2);
    size_t dash = inside.find(":-");
    std::string name = inside.substr(0, dash);
    out += text.substr(at, open - at);
    at = close + 1;
    if (!isVariableName(name)) {
      out += text.substr(open, close + 1 - open);  // not a reference: kept as written
      continue;
    }
    std::optional<std::string> value = env(name);
    if (value) {
      out += *value;
    } else if (dash != std::string::npos) {
      out += inside.substr(dash + 2);
    } else {
      return core::fail(core::ErrorCode::kUsage, "it uses ${" + name + "}, which is not set; set " +
                                                     name + " or give a default as ${" + name +
                                                     ":-value}");
    }
  }
  out += text.substr(at);
  return out;
}

std::optional<std::string> findWorkspace(const std::string& cwd, const std::string& home,
                                         const EnvLookup& env) {
  if (auto chosen = env("KAJA_WORKSPACE")) {
    if (chosen->empty() || *chosen == "none") return std::nullopt;
    std::error_code ec;
    fs::path dir = fs::weakly_canonical(fs::absolute(*chosen, ec), ec);
    return dir.string();
  }
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(cwd, ec);
  fs::path stop = home.empty() ? fs::path() : fs::weakly_canonical(home, ec);
  for (; !dir.empty(); dir = dir.parent_path()) {
    if (!stop.empty() && dir == stop) return std::nullopt;
    // Anything there by that name counts, so a FIFO or a folder is a warning, not silence.
    if (fs::exists(fs::status(dir / kFileName, ec))) return dir.string();
    if (dir == dir.root_path()) break;
  }
  return std::nullopt;
}

Workspace readWorkspace(const std::string& dir, const EnvLookup& env,
                        const std::map<std::string, std::string>& enabled) {
  Workspace workspace;
  workspace.dir = dir;
  workspace.file = (fs::path(dir) / kFileName).string();
  const std::string shown = oneLine(workspace.file);
  auto text = core::readRegularFile(workspace.file, kMaxWorkspaceFileBytes, shown);
  if (!text) {
    if (text.error().code != core::ErrorCode::kNotFound) {
      workspace.warnings.push_back(text.error().message + "; its servers are not used");
    }
    return workspace;
  }
  auto root = parseClientJson(std::move(*text), "the JSON in " + shown);
  if (!root) {
    std::string why = root.error().message;
    if (auto cut = why.rfind("; nothing was written"); cut != std::string::npos) why.resize(cut);
    workspace.warnings.push_back(why + "; its servers are not used until it is fixed");
    return workspace;
  }
  const json* servers =
      root->is_object() && root->contains("mcpServers") ? &(*root)["mcpServers"] : nullptr;
  if (servers == nullptr || !servers->is_object()) {
    workspace.warnings.push_back(shown +
                                 " holds no \"mcpServers\" object; its servers are not used");
    return workspace;
  }
  std::size_t taken = 0;
  for (const auto& [name, entry] : servers->items()) {
    if (!core::isValidName(name)) {
      workspace.warnings.push_back(shown + ": server " + core::quoteForMessage(name) +
                                   " is not used: kaja names abilities with 1 to 64 letters, "
                                   "digits, '-' or '_'");
      continue;
    }
    if (++taken > kMaxWorkspaceServers) {
      workspace.warnings.push_back(shown + " lists more than " +
                                   std::to_string(kMaxWorkspaceServers) +
                                   " servers; the rest, from " + name + " on, are not used");
      break;
    }
    const std::string where = shown + ": server \"" + name + "\"";
    auto draft = draftFromEntry(name, entry, dir);
    if (!draft) {
      workspace.records.push_back(brokenRecord(
          name, dir, {core::ErrorCode::kInvalidConfig, draft.error().message, where, {}, 0}));
      continue;
    }
    // The values of secret-looking variables this entry uses, longest first so that one
    // holding another is put back whole.
    std::vector<std::pair<std::string, std::string>> secrets;
    EnvLookup watched = [&](const std::string& variable) {
      std::optional<std::string> value = env(variable);
      if (value && !value->empty() && core::looksSecret(variable)) {
        secrets.emplace_back(*value, "${" + variable + "}");
      }
      return value;
    };
    if (auto ok = expandDraft(*draft, watched); !ok) {
      workspace.records.push_back(brokenRecord(
          name, dir, {core::ErrorCode::kInvalidConfig, ok.error().message, where, {}, 0}));
      continue;
    }
    auto plan = core::planAbility(*draft);
    core::Result<void> valid = plan ? core::validate(plan->ability) : core::Result<void>();
    if (!plan || !valid) {
      std::string why = plan ? valid.error().message : plan.error().message;
      workspace.records.push_back(
          brokenRecord(name, dir, {core::ErrorCode::kInvalidConfig, why, where, {}, 0}));
      continue;
    }
    marketplace::AbilityRecord record;
    record.name = name;
    record.dir = dir;
    record.layer = marketplace::LayerKind::kWorkspace;
    std::sort(secrets.begin(), secrets.end(),
              [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
    record.expandedSecrets = std::move(secrets);
    // The entry as written, so a changed variable's value does not turn it off, but a
    // changed command, argument or url does.
    record.fingerprint = marketplace::sync::sha256Hex(entry.dump());
    if (auto on = enabled.find(name); on != enabled.end()) {
      record.enabled = on->second == record.fingerprint;
      if (!record.enabled) {
        record.notes.push_back(name + " changed in " + shown +
                               " since you turned it on, so it is off again; look at it, then "
                               "`kaja enable " +
                               name + "` turns it on as it is now");
      }
    }
    plan->ability.manifestPath = workspace.file;
    plan->ability.maxTools = kMaxWorkspaceTools;
    if (plan->key) workspace.keys[name] = *plan->key;
    record.ability = std::move(plan->ability);
    workspace.records.push_back(std::move(record));
  }
  return workspace;
}

std::map<std::string, std::string> enabledInWorkspace(const core::Paths& paths,
                                                      const std::string& dir) {
  json state = readState(paths);
  std::map<std::string, std::string> out;
  if (!state.contains(dir) || !state[dir].is_object()) return out;
  const json& on = state[dir].value("enabled", json::object());
  if (!on.is_object()) return out;
  for (const auto& [name, fingerprint] : on.items()) {
    if (fingerprint.is_string()) out[name] = fingerprint.get<std::string>();
  }
  return out;
}

core::Result<void> setEnabledInWorkspace(const core::Paths& paths, const std::string& dir,
                                         const std::string& name, const std::string& fingerprint,
                                         bool on) {
  json state = readState(paths);
  std::map<std::string, std::string> names = enabledInWorkspace(paths, dir);
  if (on) {
    names[name] = fingerprint;
  } else {
    names.erase(name);
  }
  if (names.empty()) {
    state.erase(dir);
  } else {
    state[dir] = {{"enabled", names}};
  }
  return core::writeFileAtomically(stateFile(paths), state.dump(2) + "\n", 0600);
}

}  // namespace kaja::cli
