#pragma once

#include <string>
#include <string_view>

namespace kaja::core {

/// Returns `text` between double quotes, safe to put inside a one-line message: `"` and `\`
/// are escaped, and so is every character that could break the line, hide text or take
/// over a terminal (see escapeForMessage). `quoteForMessage("a\nb")` is `"a\nb"` with a
/// literal backslash-n.
std::string quoteForMessage(std::string_view text);

/// Returns `text` with no quotes added and these written as escapes: C0 and C1 controls and
/// DEL (`\n`, `\r`, `\t`, `\u001b`, `\u0085`, …), line and paragraph separators, bidi
/// controls and other default-ignorable characters other than variation selectors
/// (`\u202e`, `\u200b`, `\U000e0041`), and each byte that is not well-formed UTF-8 (`\xff`).
/// A backslash is doubled, so the escapes cannot be forged. Everything else is kept as it is.
std::string escapeForMessage(std::string_view text);

/// Returns `text` safe to write to a terminal: like escapeForMessage, except that a backslash
/// is kept single (the text is shown, not parsed) and, when `keepLines`, `\n` and `\t` pass
/// unchanged. ESC (so CSI and OSC sequences), bare CR, backspace, C1 controls and bidi
/// overrides are always escaped.
std::string escapeForTerminal(std::string_view text, bool keepLines = true);

}  // namespace kaja::core
