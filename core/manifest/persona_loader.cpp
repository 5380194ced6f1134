#include "core/manifest/persona_loader.h"

#include <filesystem>
#include <utility>

#include "core/manifest/ability_loader.h"
#include "core/manifest/field_reader.h"

namespace kaja::core {
namespace {

template <class T>
std::unexpected<Error> forward(const Result<T>& result) {
  return std::unexpected(result.error());
}

Result<PersonaRoot> readRoot(const FieldReader& entry, const TomlValue& item) {
  PersonaRoot root;
  if (item.type == TomlValue::Type::kString) {
    root.path = item.text;
  } else if (item.type == TomlValue::Type::kTable) {
    FieldReader table(item, entry.file(), entry.dotted("roots"));
    if (auto ok = table.onlyKeys({"path", "readOnly", "backup"}); !ok) return forward(ok);
    auto path = table.string("path");
    auto readOnly = table.boolean("readOnly");
    auto backup = table.boolean("backup");
    if (!path) return forward(path);
    if (!readOnly) return forward(readOnly);
    if (!backup) return forward(backup);
    root.path = path->value_or("");
    root.readOnly = readOnly->value_or(false);
    root.backup = backup->value_or(false);
  } else {
    return std::unexpected(entry.errorAt(
        item, "roots",
        std::string("entries must be a path or { path = \"…\", readOnly = true, backup = true "
                    "}, not ") +
            describeType(item.type) + "."));
  }
  if (root.path.empty()) {
    return std::unexpected(entry.errorAt(item, "roots", "entry needs a non-empty path."));
  }
  if (root.path.front() != '/' && !root.path.starts_with("~")) {
    return std::unexpected(entry.errorAt(
        item, "roots", "path \"" + root.path + "\" must be absolute or start with ~/."));
  }
  if (root.path.starts_with("~") && root.path != "~" && !root.path.starts_with("~/")) {
    return std::unexpected(entry.errorAt(item, "roots",
                                         "path \"" + root.path +
                                             "\" names another user's home; use ~/… or an "
                                             "absolute path."));
  }
  return root;
}

Result<PersonaEntry> readEntry(const FieldReader& top, const TomlValue& item) {
  PersonaEntry entry;
  if (item.type == TomlValue::Type::kString) {
    entry.ability = item.text;
  } else if (item.type == TomlValue::Type::kTable) {
    FieldReader table(item, top.file(), "abilities");
    if (auto ok = table.onlyKeys({"name", "tools", "roots"}); !ok) return forward(ok);
    auto name = table.string("name");
    if (!name) return forward(name);
    entry.ability = name->value_or("");
    auto tools = table.strings("tools");
    if (!tools) return forward(tools);
    entry.tools = std::move(*tools);
    if (const TomlValue* roots = table.get("roots")) {
      if (roots->type != TomlValue::Type::kArray) {
        return std::unexpected(table.errorAt(
            *roots, "roots",
            std::string("must be an array of folders, not ") + describeType(roots->type) + "."));
      }
      for (const auto& rootItem : roots->items) {
        auto root = readRoot(table, rootItem);
        if (!root) return forward(root);
        entry.roots.push_back(std::move(*root));
      }
    }
  } else {
    return std::unexpected(top.errorAt(
        item, "abilities",
        std::string("entries must be an ability name or { name = \"…\", tools = […], roots = "
                    "[…] }, not ") +
            describeType(item.type) + "."));
  }
  if (!isValidName(entry.ability)) {
    return std::unexpected(
        top.errorAt(item, "abilities",
                    "entry names \"" + entry.ability + "\", which is not a valid ability name."));
  }
  return entry;
}

}  // namespace

Result<Persona> personaFromToml(const TomlValue& root, const std::string& name,
                                const std::string& file) {
  FieldReader top(root, file, "");
  if (auto ok = top.onlyKeys({"description", "abilities"}); !ok) return forward(ok);
  if (!isValidName(name)) {
    return fail(ErrorCode::kInvalidConfig,
                "the file name \"" + name +
                    "\" is not a valid persona name: use 1-64 of A-Z, a-z, 0-9, - and _.",
                file + ":1");
  }
  Persona persona;
  persona.name = name;
  persona.path = file;
  auto description = top.string("description");
  if (!description) return forward(description);
  persona.description = description->value_or("");
  const TomlValue* abilities = top.get("abilities");
  if (abilities == nullptr) {
    return fail(ErrorCode::kInvalidConfig,
                "a persona needs an \"abilities\" list, like abilities = [\"filesystem\"].",
                file + ":1");
  }
  if (abilities->type != TomlValue::Type::kArray) {
    return std::unexpected(
        top.errorAt(*abilities, "abilities",
                    std::string("must be an array, not ") + describeType(abilities->type) + "."));
  }
  for (const auto& item : abilities->items) {
    auto entry = readEntry(top, item);
    if (!entry) return forward(entry);
    for (const auto& existing : persona.abilities) {
      if (existing.ability == entry->ability) {
        return std::unexpected(top.errorAt(
            item, "abilities", "lists \"" + entry->ability + "\" twice; merge the entries."));
      }
    }
    persona.abilities.push_back(std::move(*entry));
  }
  return persona;
}

Result<Persona> loadPersona(const std::string& file) {
  auto root = parseTomlFile(file);
  if (!root) return std::unexpected(root.error());
  return personaFromToml(*root, std::filesystem::path(file).stem().string(), file);
}

}  // namespace kaja::core
