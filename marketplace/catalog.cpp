#include "marketplace/catalog.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/manifest/ability_loader.h"
#include "core/manifest/persona_loader.h"

namespace kaja::marketplace {
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> sortedEntries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Takes back what only the user's own layer may grant (V5), with a note for each.
void dropRelaxations(AbilityRecord& record) {
  core::Ability& ability = *record.ability;
  if (ability.approval == core::ApprovalMode::kNever) {
    ability.approval = core::ApprovalMode::kWrites;
    record.notes.push_back(record.name +
                           " asks for approval = \"never\", which counts only in "
                           "your own abilities, so kaja asks before its writes; `kaja add` or "
                           "your own manifest can grant it");
  }
  if (ability.trustedSandbox) {
    ability.trustedSandbox = false;
    record.notes.push_back(record.name +
                           " says trustedSandbox = true, which counts only in your "
                           "own abilities, so it does not run on a shared sandbox worker");
  }
}

void loadAbilities(const fs::path& dir, const Layer& layer,
                   std::map<std::string, AbilityRecord>& out) {
  const bool shipped = layer.kind == LayerKind::kShipped;
  for (const auto& path : sortedEntries(dir)) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) continue;
    AbilityRecord record;
    record.name = path.filename().string();
    if (record.name.starts_with(".")) continue;
    record.dir = path.string();
    record.shipped = shipped;
    record.layer = layer.kind;
    record.marketplace = layer.name;
    if (auto ability = core::loadAbility(record.dir)) {
      ability->shipped = shipped;
      record.ability = std::move(*ability);
      if (layer.kind == LayerKind::kMarketplace) dropRelaxations(record);
    } else {
      record.error = ability.error();
    }
    out.insert_or_assign(record.name, std::move(record));
  }
}

PersonaRecord loadPersonaFile(const fs::path& path, const Layer& layer) {
  const bool shipped = layer.kind == LayerKind::kShipped;
  PersonaRecord record;
  record.name = path.stem().string();
  record.file = path.string();
  record.shipped = shipped;
  record.layer = layer.kind;
  record.marketplace = layer.name;
  if (auto persona = core::loadPersona(record.file)) {
    persona->shipped = shipped;
    record.persona = std::move(*persona);
  } else {
    record.error = persona.error();
  }
  return record;
}

void loadPersonas(const fs::path& dir, const Layer& layer,
                  std::map<std::string, PersonaRecord>& out) {
  for (const auto& path : sortedEntries(dir)) {
    if (path.extension() != ".toml") continue;
    PersonaRecord record = loadPersonaFile(path, layer);
    // A persona decides which folders a server may write, so one that takes the place of
    // another says so wherever it is listed.
    if (auto held = out.find(record.name); held != out.end()) {
      record.replaces = describeLayer(held->second.layer, held->second.marketplace);
    }
    out.insert_or_assign(record.name, std::move(record));
  }
}

}  // namespace

std::string describeLayer(LayerKind kind, const std::string& name) {
  switch (kind) {
    case LayerKind::kShipped:
      return "shipped";
    case LayerKind::kMarketplace:
      return "marketplace " + name;
    case LayerKind::kWorkspace:
      return "workspace";
    case LayerKind::kUser:
      break;
  }
  return "user";
}

std::string sourceName(LayerKind kind) {
  return kind == LayerKind::kMarketplace ? "marketplace" : describeLayer(kind, "");
}

std::string manifestFile(const AbilityRecord& record) {
  return record.dir + (record.layer == LayerKind::kWorkspace ? "/.mcp.json" : "/mcp.toml");
}

std::string maskExpandedSecrets(const AbilityRecord& record, std::string text) {
  for (const auto& [value, reference] : record.expandedSecrets) {
    if (value.empty()) continue;
    for (size_t at = text.find(value); at != std::string::npos;
         at = text.find(value, at + reference.size())) {
      text.replace(at, value.size(), reference);
    }
  }
  return text;
}

std::optional<std::string> offUntilEnabled(const AbilityRecord& record) {
  if (record.layer != LayerKind::kWorkspace || record.enabled) return std::nullopt;
  // A project's file may name any command: nothing of it runs before the user says so.
  return "a server of this workspace's .mcp.json, off until you run `kaja enable " + record.name +
         "`";
}

Catalog Catalog::load(const std::vector<std::string>& layers, bool firstLayerShipped) {
  std::vector<Layer> kinds;
  for (size_t i = 0; i < layers.size(); ++i) {
    kinds.push_back(
        Layer{layers[i], firstLayerShipped && i == 0 ? LayerKind::kShipped : LayerKind::kUser, ""});
  }
  return loadLayers(kinds);
}

Catalog Catalog::loadLayers(const std::vector<Layer>& layers) {
  std::map<std::string, AbilityRecord> abilities;
  std::map<std::string, PersonaRecord> personas;
  for (const Layer& layer : layers) {
    loadAbilities(fs::path(layer.dir) / "abilities", layer, abilities);
    loadPersonas(fs::path(layer.dir) / "personas", layer, personas);
  }
  Catalog catalog;
  for (auto& [name, record] : abilities) catalog.abilities_.push_back(std::move(record));
  for (auto& [name, record] : personas) {
    if (record.persona) {
      for (const auto& entry : record.persona->abilities) {
        const AbilityRecord* ability = catalog.findAbilityRecord(entry.ability);
        if (ability == nullptr) {
          record.warnings.push_back("persona \"" + name + "\" lists \"" + entry.ability +
                                    "\", but no such ability exists.");
        } else if (!ability->ability) {
          record.warnings.push_back("persona \"" + name + "\" lists \"" + entry.ability +
                                    "\", whose manifest is broken.");
        }
      }
    }
    catalog.personas_.push_back(std::move(record));
  }
  return catalog;
}

std::optional<PersonaRecord> Catalog::loadOnePersona(const std::vector<Layer>& layers,
                                                     const std::string& name) {
  std::optional<PersonaRecord> found;
  if (name.empty() || name.starts_with('.') || name.find('/') != std::string::npos) return found;
  for (const Layer& layer : layers) {
    fs::path file = fs::path(layer.dir) / "personas" / (name + ".toml");
    std::error_code ec;
    if (!fs::exists(file, ec)) continue;
    std::string replaces = found ? describeLayer(found->layer, found->marketplace) : "";
    found = loadPersonaFile(file, layer);
    found->replaces = std::move(replaces);
  }
  return found;
}

std::vector<std::string> Catalog::addWorkspace(std::vector<AbilityRecord> records) {
  std::vector<std::string> shadowed;
  for (auto& record : records) {
    if (findAbilityRecord(record.name) != nullptr) {
      shadowed.push_back(record.name);
      continue;
    }
    record.layer = LayerKind::kWorkspace;
    auto at = std::lower_bound(
        abilities_.begin(), abilities_.end(), record.name,
        [](const AbilityRecord& held, const std::string& key) { return held.name < key; });
    abilities_.insert(at, std::move(record));
  }
  return shadowed;
}

const AbilityRecord* Catalog::findAbilityRecord(const std::string& name) const {
  // Sorted by name when loaded, so a persona of many abilities stays cheap to check.
  auto it = std::lower_bound(
      abilities_.begin(), abilities_.end(), name,
      [](const AbilityRecord& record, const std::string& key) { return record.name < key; });
  return it != abilities_.end() && it->name == name ? &*it : nullptr;
}

const core::Ability* Catalog::findAbility(const std::string& name) const {
  const AbilityRecord* record = findAbilityRecord(name);
  return record != nullptr && record->ability ? &*record->ability : nullptr;
}

const core::Persona* Catalog::findPersona(const std::string& name) const {
  for (const auto& record : personas_) {
    if (record.name == name && record.persona) return &*record.persona;
  }
  return nullptr;
}

}  // namespace kaja::marketplace
