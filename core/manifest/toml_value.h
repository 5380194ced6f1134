#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace kaja::core {

struct TomlField;

/// A parsed TOML value with the line it came from. This is kaja's own small tree so that
/// toml++ (header-heavy) stays inside toml_value.cpp and no other file includes it.
struct TomlValue {
  enum class Type { kString, kInteger, kFloat, kBoolean, kArray, kTable, kDateTime };

  Type type = Type::kTable;
  int line = 0;
  std::string text;  ///< the string for kString; a printable form for kDateTime
  std::int64_t integer = 0;
  double number = 0;
  bool boolean = false;
  std::vector<TomlValue> items;   ///< kArray elements
  std::vector<TomlField> fields;  ///< kTable, in file order

  /// Returns the field named `key` of a table, or nullptr when absent.
  [[nodiscard]] const TomlValue* find(std::string_view key) const;
};

/// One key of a table and its value. (A std::pair here would be instantiated while
/// TomlValue is still incomplete, which the standard does not allow.)
struct TomlField {
  std::string key;
  TomlValue value;
};

/// Returns a TOML type's name for messages: "a string", "an array", …
const char* describeType(TomlValue::Type type);

/// Parses a TOML file into a tree. A syntax error names the file and line.
Result<TomlValue> parseTomlFile(const std::string& path);

/// Parses TOML text; `sourceName` is used in errors.
Result<TomlValue> parseTomlText(std::string_view text, const std::string& sourceName);

/// Writes `value` (a table) as TOML text. Strings are quoted and escaped.
std::string formatToml(const TomlValue& table);

/// Writes one value as inline TOML: a quoted string, `[…]`, or `{ key = … }`.
std::string formatTomlInline(const TomlValue& value);

}  // namespace kaja::core
