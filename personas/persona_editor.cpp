#include "personas/persona_editor.h"

#include <algorithm>
#include <filesystem>
#include <string_view>

#include "core/manifest/field_reader.h"

namespace kaja::personas {
namespace {

std::vector<std::string_view> listedNames(const core::Persona& persona) {
  std::vector<std::string_view> names;
  names.reserve(persona.abilities.size());
  for (const auto& entry : persona.abilities) names.push_back(entry.ability);
  return names;
}

std::string didYouMean(std::string_view word, const std::vector<std::string_view>& names) {
  return core::didYouMean(word, std::span(names.data(), names.size()));
}

std::string orFullStop(const std::string& text) { return text.empty() ? "." : text; }

}  // namespace

bool addAbility(core::Persona& persona, const std::string& ability,
                const std::optional<std::vector<std::string>>& tools) {
  for (auto& entry : persona.abilities) {
    if (entry.ability != ability) continue;
    if (!tools || entry.tools == tools) return false;
    entry.tools = tools;
    return true;
  }
  persona.abilities.push_back({ability, tools, {}});
  return true;
}

core::Result<void> removeAbility(core::Persona& persona, const std::string& ability) {
  auto it = std::find_if(persona.abilities.begin(), persona.abilities.end(),
                         [&](const core::PersonaEntry& entry) { return entry.ability == ability; });
  if (it == persona.abilities.end()) {
    std::string message = "persona \"" + persona.name + "\" does not list \"" + ability + "\"";
    std::string near = didYouMean(ability, listedNames(persona));
    return core::fail(core::ErrorCode::kNotFound,
                      message + (near.empty() ? "; nothing was changed." : near));
  }
  persona.abilities.erase(it);
  return {};
}

core::Result<std::string> folderPath(const std::string& given) {
  std::error_code ec;
  if (given.empty() || (given.front() != '/' && given.front() != '~')) {
    return core::fail(core::ErrorCode::kUsage,
                      "the folder \"" + given +
                          "\" is relative; give an absolute path or one under ~/, such as " +
                          std::filesystem::absolute(given.empty() ? "." : given, ec).string() +
                          ".");
  }
  if (given.front() == '~' && given != "~" && !given.starts_with("~/")) {
    return core::fail(core::ErrorCode::kUsage, "the folder \"" + given +
                                                   "\" names another user's home; use ~/… or an "
                                                   "absolute path.");
  }
  std::string path = given;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

core::Result<core::PersonaEntry*> folderEntry(core::Persona& persona,
                                              const std::optional<std::string>& named,
                                              const TakesFolders& takesFolders) {
  if (named) {
    for (auto& entry : persona.abilities) {
      if (entry.ability != *named) continue;
      if (!takesFolders(entry.ability)) {
        return core::fail(core::ErrorCode::kUsage,
                          "\"" + *named +
                              "\" takes no folders (its manifest does not have roots = true); "
                              "name an ability that does with --ability.");
      }
      return &entry;
    }
    return core::fail(core::ErrorCode::kNotFound,
                      "persona \"" + persona.name + "\" does not list \"" + *named +
                          "\"; add it first with `kaja persona add " + persona.name + " " + *named +
                          "`" + orFullStop(didYouMean(*named, listedNames(persona))));
  }
  std::vector<core::PersonaEntry*> takers;
  for (auto& entry : persona.abilities) {
    if (takesFolders(entry.ability)) takers.push_back(&entry);
  }
  if (takers.size() == 1) return takers.front();
  if (takers.empty()) {
    return core::fail(core::ErrorCode::kUsage,
                      "persona \"" + persona.name +
                          "\" lists no ability that takes folders; add one first, such as "
                          "`kaja persona add " +
                          persona.name + " filesystem`.");
  }
  std::string names;
  for (const auto* entry : takers) names += (names.empty() ? "" : ", ") + entry->ability;
  return core::fail(core::ErrorCode::kUsage, "persona \"" + persona.name +
                                                 "\" has several abilities that take folders (" +
                                                 names + "); name one with --ability.");
}

bool addFolder(core::PersonaEntry& entry, const core::PersonaRoot& root) {
  for (auto& existing : entry.roots) {
    if (existing.path != root.path) continue;
    if (existing.readOnly == root.readOnly && existing.backup == root.backup) return false;
    existing = root;
    return true;
  }
  entry.roots.push_back(root);
  return true;
}

core::Result<void> removeFolder(core::Persona& persona, const std::string& path,
                                const std::optional<std::string>& named) {
  std::string listed;
  for (auto& entry : persona.abilities) {
    if (named && entry.ability != *named) continue;
    auto it = std::find_if(entry.roots.begin(), entry.roots.end(),
                           [&](const core::PersonaRoot& root) { return root.path == path; });
    if (it != entry.roots.end()) {
      entry.roots.erase(it);
      return {};
    }
    for (const auto& root : entry.roots) listed += (listed.empty() ? "" : ", ") + root.path;
  }
  return core::fail(core::ErrorCode::kNotFound,
                    "persona \"" + persona.name + "\" gives no folder \"" + path + "\"" +
                        (named ? " to " + *named : "") +
                        (listed.empty() ? "; it gives none." : "; it gives " + listed + "."));
}

}  // namespace kaja::personas
