#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "core/mcp/json_rpc.h"

namespace kaja::core::policy {

/// Removes Unicode tag characters U+E0000–E007F from `text` in place and returns how many
/// there were. They draw nothing, yet a model reads them as ASCII.
size_t removeTagCharacters(std::string& text);

/// Returns `text` as well-formed UTF-8 (each ill-formed byte becomes U+FFFD) without tag
/// characters, and adds how many tag characters were taken out to `hidden`. Every string the
/// output guard keeps goes through here, whole or cut.
std::string cleanText(std::string_view text, size_t& hidden);

/// Returns how many bytes `value` takes as compact JSON, escapes inside strings not counted. Levels
/// below `maxDepth` are not visited. Costs one step per JSON value.
size_t jsonSizeEstimate(const mcp::Json& value, int maxDepth = 64);

/// Copies JSON values within one byte budget, keeping their JSON types, so that a result
/// that was too big can still be read and still matches its schema as far as possible:
/// a string that does not fit is cut at a UTF-8 boundary and ends in a marker
/// ("…[kaja: 2097152 more bytes cut]"), an empty string, array or object that does not fit is
/// left out (an array or object that fits only in part loses its last members), and nesting deeper
/// than `maxDepth` becomes a marker string. Kept strings are made well-formed UTF-8 and lose their
/// tag characters (counted in hidden()); a member whose key has tag characters or ill-formed
/// bytes is left out rather than renamed, and so is one whose key is already taken. One cutter
/// may be used for several values: they share the budget.
class JsonCutter {
 public:
  explicit JsonCutter(size_t budget, int maxDepth = 64) : left_(budget), maxDepth_(maxDepth) {}

  /// Returns the part of `value` that fits, or nullopt when nothing of it fits (the whole
  /// value is then counted as cut).
  std::optional<mcp::Json> cut(const mcp::Json& value);

  /// Copies every member of the object `from` whose key is not in `skip` into `to`, each
  /// cut to what is left of the budget; members that do not fit are left out and counted, and
  /// so are members whose cleaned key is in `skip` or already in `to`.
  void copyMembers(const mcp::Json& from, mcp::Json& to,
                   std::initializer_list<std::string_view> skip);

  /// Returns about how many bytes were cut or left out so far.
  [[nodiscard]] size_t cutBytes() const { return cut_; }
  /// Returns how many tag characters were taken out of kept strings.
  [[nodiscard]] size_t hidden() const { return hidden_; }
  /// Returns the budget not yet spent.
  [[nodiscard]] size_t left() const { return left_; }

 private:
  std::optional<mcp::Json> cutAt(const mcp::Json& value, int depth);
  mcp::Json cutString(std::string_view text);
  void cutArray(const mcp::Json& from, mcp::Json& to, int depth);
  void cutObject(const mcp::Json& from, mcp::Json& to, int depth,
                 std::initializer_list<std::string_view> skip);

  size_t left_;
  int maxDepth_;
  size_t cut_ = 0;
  size_t hidden_ = 0;
};

}  // namespace kaja::core::policy
