#include "personas/persona_resolver.h"

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "core/manifest/field_reader.h"
#include "core/paths.h"
#include "core/util/sys.h"

namespace kaja::personas {

const ActiveAbility* ResolvedPersona::find(const std::string& ability) const {
  for (const auto& active : abilities) {
    if (active.ability.name == ability) return &active;
  }
  return nullptr;
}

std::optional<std::string> resolveFolder(const std::string& path, const std::string& home) {
  std::string expanded = core::expandHome(path, home);
  char resolved[PATH_MAX];
  if (::realpath(expanded.c_str(), resolved) == nullptr) return std::nullopt;
  return std::string(resolved);
}

core::Result<ResolvedPersona> resolvePersona(const marketplace::Catalog& catalog,
                                             const std::string& name, const std::string& home) {
  const marketplace::PersonaRecord* record = nullptr;
  for (const auto& candidate : catalog.personas()) {
    if (candidate.name == name) record = &candidate;
  }
  if (record == nullptr) {
    std::vector<std::string_view> names;
    for (const auto& candidate : catalog.personas()) names.push_back(candidate.name);
    std::string near = core::didYouMean(name, std::span(names.data(), names.size()));
    return core::fail(core::ErrorCode::kNotFound,
                      "there is no persona named \"" + name + "\"" +
                          (near.empty() ? "; `kaja personas` lists them." : near));
  }
  if (!record->persona) return std::unexpected(record->error);

  ResolvedPersona out;
  out.name = name;
  for (const auto& entry : record->persona->abilities) {
    const marketplace::AbilityRecord* ability = catalog.findAbilityRecord(entry.ability);
    if (ability != nullptr && ability->layer == marketplace::LayerKind::kWorkspace) {
      // A persona's entry never names a workspace's server: the name may have been written
      // for another ability (since removed) or another project. Only `kaja enable` turns
      // one on, below, as it is and with no folders.
      if (!ability->enabled) {
        out.warnings.push_back("persona \"" + name + "\" lists \"" + entry.ability +
                               "\", which here is only a server of this workspace's .mcp.json; "
                               "it stays off until `kaja enable " +
                               entry.ability + "`.");
      }
      continue;
    }
    if (ability == nullptr || !ability->ability) {
      out.warnings.push_back("persona \"" + name + "\" lists \"" + entry.ability + "\", which " +
                             (ability == nullptr ? "does not exist" : "has a broken manifest") +
                             "; it is skipped.");
      continue;
    }
    ActiveAbility active;
    active.ability = *ability->ability;
    active.tools = entry.tools;
    active.entry.ability = entry.ability;
    active.entry.tools = entry.tools;
    for (const auto& root : entry.roots) {
      auto folder = resolveFolder(root.path, home);
      if (!folder) {
        out.warnings.push_back(entry.ability + ": folder " + root.path +
                               " does not exist; it is left out until you create it.");
        continue;
      }
      active.roots.push_back({*folder, root.path, root.readOnly, root.backup});
      active.entry.roots.push_back(root);
    }
    // Read-only and backed-up folders are kept by checking the path arguments a manifest
    // names; with none named (an ability replaced by one from another client's config, say)
    // kaja could not hold the server to them, so it stays off rather than run unguarded.
    // Every folder the persona names counts, existing or not: a server may make one.
    const bool guarded = std::any_of(entry.roots.begin(), entry.roots.end(),
                                     [](const auto& root) { return root.readOnly || root.backup; });
    if (guarded && active.ability.pathArgs.empty()) {
      active.off = true;
      active.offReason = "persona \"" + name +
                         "\" gives it read-only or backed-up folders, but its manifest (" +
                         active.ability.manifestPath +
                         ") names no pathArgs, so kaja could not keep it to them; add pathArgs "
                         "and roots = true to the manifest, or give those folders without "
                         "--read-only and --backup";
      out.abilities.push_back(std::move(active));
      continue;
    }
    if (active.ability.roots && active.roots.empty()) {
      active.off = true;
      active.offReason = entry.roots.empty()
                             ? "persona \"" + name + "\" gives it no folders"
                             : "none of the folders persona \"" + name + "\" gives it exist";
    }
    out.abilities.push_back(std::move(active));
  }
  // The workspace's servers turned on with `kaja enable` join whichever persona is active,
  // as they are and with no folders, while kaja runs in that workspace (V3).
  for (const auto& ability : catalog.abilities()) {
    if (ability.layer != marketplace::LayerKind::kWorkspace || !ability.enabled ||
        !ability.ability || out.find(ability.name) != nullptr) {
      continue;
    }
    ActiveAbility active;
    active.ability = *ability.ability;
    active.entry.ability = ability.name;
    out.abilities.push_back(std::move(active));
  }
  return out;
}

std::string activePersona(const std::string& configDir) {
  std::string saved = core::readTextFile(configDir + "/persona").value_or("");
  while (!saved.empty() && (saved.back() == '\n' || saved.back() == ' ')) saved.pop_back();
  return saved.empty() ? kDefaultPersona : saved;
}

core::Result<void> setActivePersona(const std::string& configDir, const std::string& name) {
  return core::writeFileAtomically(configDir + "/persona", name + "\n", 0644);
}

}  // namespace kaja::personas
