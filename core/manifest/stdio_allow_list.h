#pragma once

#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/manifest/ability.h"

// The operator's allow-list of stdio command lines (U5): when one is set, kaja starts a
// stdio server only when the command line it would execute is on it.
//
// An entry is words separated by spaces (runs of spaces count as one). Only double quotes
// are special: "a b" is one word holding a space, "" an empty word, and inside quotes \"
// and \\ stand for " and \ (any other backslash there is a mistake). A word `*` of its own,
// unquoted, as the last word allows zero or more further arguments; a `*` anywhere else
// unquoted is a mistake, so `npx -y foo*` never means "anything starting with foo" (write
// "foo*" in quotes for a literal star). Tabs, newlines and other control characters are
// refused. The first word is the program: a name (looked up as kaja looks up runners, so
// `npx` means the npx kaja would run) or an absolute path without `.` or `..` parts.

namespace kaja::core {

/// One parsed entry.
struct StdioAllowRule {
  std::vector<std::string> words;  ///< the program, then its arguments; never empty
  bool moreArgs = false;           ///< ended with a `*` word: further arguments allowed
  std::string text;                ///< the entry as written
  SourceLocation at;               ///< where it was written; line 0 for a command-line flag
};

/// Finds a program by name as runner resolution does; nullopt when it is not installed.
using ProgramFinder = std::function<std::optional<std::string>(const std::string& name)>;

/// The allow-list. Immutable once built. An empty `rules` refuses every stdio server.
struct StdioAllowList {
  std::vector<StdioAllowRule> rules;
  /// Where to add a line, completing "add it to …", e.g. "allow under [stdio] in
  /// /home/a/.config/kaja/config.toml".
  std::string whereToAdd;

  /// Returns true when some rule allows `argv` (argv[0] absolute, as kaja executes it):
  /// every word equal byte for byte, a program name resolved with `find` first, and with
  /// a final `*` any number of arguments after the rule's own.
  [[nodiscard]] bool allows(const std::vector<std::string>& argv, const ProgramFinder& find) const;
  /// Returns the sentence that refuses `ability`'s `argv`, with how to allow it.
  [[nodiscard]] std::string refusal(const std::string& ability,
                                    const std::vector<std::string>& argv) const;
};

/// Parses one entry; on a mistake returns what is wrong, as the end of a sentence that
/// starts with the entry's name ("must not …").
std::expected<StdioAllowRule, std::string> parseStdioAllowRule(std::string_view text);

/// Returns `argv` written as an allow-list entry that matches exactly it: words that are
/// empty or hold a space, '"', '*' or a control character are quoted (a control character
/// as \xNN, which no entry can match).
std::string formatStdioCommandLine(const std::vector<std::string>& argv);

}  // namespace kaja::core
