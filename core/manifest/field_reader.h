#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/manifest/toml_value.h"

namespace kaja::core {

/// Reads typed fields out of one TOML table and turns every mistake into an Error that
/// names the file, the line and the dotted key, and says what is allowed.
class FieldReader {
 public:
  /// `table` must outlive the reader. `prefix` is the dotted path of the table ("" for
  /// the top level, "auth" for the auth table).
  FieldReader(const TomlValue& table, std::string file, std::string prefix);

  /// Fails on the first key that is not in `allowed`, suggesting the nearest one.
  [[nodiscard]] Result<void> onlyKeys(std::span<const std::string_view> allowed) const;
  [[nodiscard]] Result<void> onlyKeys(std::initializer_list<std::string_view> allowed) const {
    return onlyKeys(std::span(allowed.begin(), allowed.size()));
  }
  /// Returns the field, nullptr when absent.
  [[nodiscard]] const TomlValue* get(std::string_view key) const { return table_.find(key); }

  [[nodiscard]] Result<std::optional<std::string>> string(std::string_view key) const;
  [[nodiscard]] Result<std::optional<bool>> boolean(std::string_view key) const;
  [[nodiscard]] Result<std::optional<std::vector<std::string>>> strings(std::string_view key) const;
  /// A table whose every value is a string.
  [[nodiscard]] Result<std::optional<std::map<std::string, std::string>>> stringMap(
      std::string_view key) const;
  /// A whole number from `min` to `max`; absent returns nullopt.
  [[nodiscard]] Result<std::optional<std::int64_t>> integer(std::string_view key, std::int64_t min,
                                                            std::int64_t max) const;
  /// A string that must be one of `choices`; absent returns nullopt.
  [[nodiscard]] Result<std::optional<std::string>> choice(
      std::string_view key, std::initializer_list<std::string_view> choices) const;

  /// Returns an error pointing at `value` (its line) and the dotted `key`.
  [[nodiscard]] Error errorAt(const TomlValue& value, std::string_view key,
                              const std::string& message) const;
  /// Returns an error pointing at the table itself.
  [[nodiscard]] Error errorHere(const std::string& message) const;
  /// Returns "prefix.key", or "key" at the top level.
  [[nodiscard]] std::string dotted(std::string_view key) const;
  [[nodiscard]] const std::string& file() const { return file_; }

 private:
  const TomlValue& table_;
  std::string file_;
  std::string prefix_;
};

/// Returns the candidate closest to `word` by edit distance when it is close enough to be
/// a likely typo, else an empty string.
std::string nearestWord(std::string_view word, std::span<const std::string_view> candidates);
inline std::string nearestWord(std::string_view word,
                               std::initializer_list<std::string_view> candidates) {
  return nearestWord(word, std::span(candidates.begin(), candidates.size()));
}

/// Returns "; did you mean \"X\"?" when a candidate is close enough to `word` to be a
/// likely typo of it (see nearestWord), else an empty string, for the end of a message.
std::string didYouMean(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace kaja::core

/// Inside a function returning a Result: evaluates `expr` (a FieldReader read, a
/// Result<std::optional<T>>), returns its error, and assigns its value to `to` when present.
#define KAJA_READ(to, expr)                            \
  do {                                                 \
    auto read_ = (expr);                               \
    if (!read_) return std::unexpected(read_.error()); \
    if (*read_) (to) = std::move(**read_);             \
  } while (0)
