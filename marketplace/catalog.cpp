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

void loadAbilities(const fs::path& dir, bool shipped, std::map<std::string, AbilityRecord>& out) {
  for (const auto& path : sortedEntries(dir)) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) continue;
    AbilityRecord record;
    record.name = path.filename().string();
    if (record.name.starts_with(".")) continue;
    record.dir = path.string();
    record.shipped = shipped;
    if (auto ability = core::loadAbility(record.dir)) {
      ability->shipped = shipped;
      record.ability = std::move(*ability);
    } else {
      record.error = ability.error();
    }
    out.insert_or_assign(record.name, std::move(record));
  }
}

void loadPersonas(const fs::path& dir, bool shipped, std::map<std::string, PersonaRecord>& out) {
  for (const auto& path : sortedEntries(dir)) {
    if (path.extension() != ".toml") continue;
    PersonaRecord record;
    record.name = path.stem().string();
    record.file = path.string();
    record.shipped = shipped;
    if (auto persona = core::loadPersona(record.file)) {
      persona->shipped = shipped;
      record.persona = std::move(*persona);
    } else {
      record.error = persona.error();
    }
    out.insert_or_assign(record.name, std::move(record));
  }
}

}  // namespace

Catalog Catalog::load(const std::vector<std::string>& layers, bool firstLayerShipped) {
  std::map<std::string, AbilityRecord> abilities;
  std::map<std::string, PersonaRecord> personas;
  for (size_t i = 0; i < layers.size(); ++i) {
    bool shipped = firstLayerShipped && i == 0;
    loadAbilities(fs::path(layers[i]) / "abilities", shipped, abilities);
    loadPersonas(fs::path(layers[i]) / "personas", shipped, personas);
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

const AbilityRecord* Catalog::findAbilityRecord(const std::string& name) const {
  auto it = std::find_if(abilities_.begin(), abilities_.end(),
                         [&](const AbilityRecord& record) { return record.name == name; });
  return it == abilities_.end() ? nullptr : &*it;
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
