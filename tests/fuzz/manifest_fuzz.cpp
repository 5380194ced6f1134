// The TOML reader and the ability and persona loaders: no exception escapes, every error
// names the file and a line, TOML that kaja writes reads back to the same tree, an ability
// the loader returns passes validate() again and a persona names valid, distinct abilities.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "core/manifest/ability_loader.h"
#include "core/manifest/persona_loader.h"
#include "core/manifest/toml_value.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using kaja::core::TomlValue;

const std::string kFile = "/abilities/fuzzed/mcp.toml";

// Whether formatToml can write `value` (dates and floats have no exact text form in it).
bool writable(const TomlValue& value) {
  if (value.type == TomlValue::Type::kDateTime || value.type == TomlValue::Type::kFloat) {
    return false;
  }
  for (const auto& item : value.items) {
    if (!writable(item)) return false;
  }
  for (const auto& field : value.fields) {
    if (!writable(field.value)) return false;
  }
  return true;
}

// Levels of nesting below `value`.
std::size_t depth(const TomlValue& value) {
  std::size_t deepest = 0;
  for (const auto& item : value.items) deepest = std::max(deepest, depth(item));
  for (const auto& field : value.fields) deepest = std::max(deepest, depth(field.value));
  return deepest + 1;
}

// Equal values; tables compare by key, since formatToml writes plain keys before tables.
bool sameTree(const TomlValue& a, const TomlValue& b) {
  if (a.type != b.type || a.text != b.text || a.integer != b.integer || a.boolean != b.boolean ||
      a.items.size() != b.items.size() || a.fields.size() != b.fields.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.items.size(); ++i) {
    if (!sameTree(a.items[i], b.items[i])) return false;
  }
  for (const auto& field : a.fields) {
    const TomlValue* other = b.find(field.key);
    if (other == nullptr || !sameTree(field.value, *other)) return false;
  }
  return true;
}

void checkError(const kaja::core::Error& error) {
  KAJA_FUZZ_CHECK(!error.message.empty(), "an error says what is wrong");
  KAJA_FUZZ_CHECK(error.context.find("mcp.toml") != std::string::npos ||
                      error.message.find("mcp.toml") != std::string::npos,
                  "an error names the file");
}

void checkAbility(const TomlValue& root) {
  auto ability = kaja::core::abilityFromToml(root, "fuzzed", kFile);
  if (!ability) {
    checkError(ability.error());
    return;
  }
  KAJA_FUZZ_CHECK(kaja::core::validate(*ability).has_value(), "a loaded ability is valid");
  KAJA_FUZZ_CHECK(kaja::core::isValidName(ability->name), "a loaded ability has a valid name");
  if (ability->isRemote()) {
    KAJA_FUZZ_CHECK(ability->url && kaja::core::isAbsoluteHttpUrl(*ability->url),
                    "a remote ability has an absolute http(s) url");
  } else {
    KAJA_FUZZ_CHECK(ability->package.has_value() != ability->command.has_value(),
                    "a stdio ability has package or command, not both");
  }
}

void checkPersona(const TomlValue& root) {
  auto persona = kaja::core::personaFromToml(root, "fuzzed", kFile);
  if (!persona) {
    checkError(persona.error());
    return;
  }
  std::set<std::string> names;
  for (const auto& entry : persona->abilities) {
    KAJA_FUZZ_CHECK(kaja::core::isValidName(entry.ability), "a persona names valid abilities");
    KAJA_FUZZ_CHECK(names.insert(entry.ability).second, "a persona names each ability once");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(bytes), size);
  auto root = kaja::core::parseTomlText(text, kFile);
  if (!root) {
    checkError(root.error());
    return 0;
  }
  KAJA_FUZZ_CHECK(root->type == TomlValue::Type::kTable, "a document is a table");
  // formatToml writes a nested table under a header that names its whole path, and kaja
  // reads keys of at most 128 dotted parts (toml++ reads at most 256 nested values), while
  // keys and headers together build deeper trees; kaja writes only its secrets file (two
  // levels), so the round trip is checked up to a depth kaja reads.
  if (writable(*root) && depth(*root) < 120) {
    const std::string written = kaja::core::formatToml(*root);
    auto again = kaja::core::parseTomlText(written, kFile);
    KAJA_FUZZ_CHECK(again.has_value(), "TOML that kaja writes reads back");
    KAJA_FUZZ_CHECK(sameTree(*root, *again), "to the same tree");
  }
  checkAbility(*root);
  checkPersona(*root);
  return 0;
}
