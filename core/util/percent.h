#pragma once

#include <string>
#include <string_view>

namespace kaja::core {

/// Returns `text` with each `%XX` (two hex digits, either case) replaced by its byte. A `%`
/// not followed by two hex digits is kept as it is. With `plusIsSpace` (HTML form encoding,
/// application/x-www-form-urlencoded), `+` becomes a space.
std::string percentDecode(std::string_view text, bool plusIsSpace = false);

}  // namespace kaja::core
