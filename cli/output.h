#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace kaja::cli {

/// Global switches every subcommand honours.
struct Options {
  bool verbose = false;
};

/// Returns the process-wide options (set by main).
Options& options();

/// Returns `message` as a sentence: trailing blanks dropped and a full stop added unless it
/// already ends in ".", "?" or "!". Every message kaja prints passes through it.
std::string asSentence(std::string_view message);

/// Prints "kaja: error: <sentence>" on stderr, plus the detail under --verbose.
void printError(const core::Error& error);
void printError(std::string_view message);
/// Prints "kaja: warning: <sentence>" on stderr.
void printWarning(std::string_view message);
/// Prints "kaja: <sentence>" on stderr: what a command did, for the person who ran it.
void printNote(std::string_view message);
/// Prints "kaja: refused: <sentence>" on stderr: a rule or the person said no.
void printRefusal(std::string_view message);

/// Returns text from a server (a tool name, a description, an error) made safe for one line
/// of a terminal: control characters (ESC and so CSI/OSC sequences, CR, LF, tab, C1), bidi
/// overrides and other invisible characters are written as escapes, bad UTF-8 as `\xNN`.
std::string oneLine(std::string_view text);
/// Like oneLine, but newlines and tabs are kept (for stderr tails and tool output).
std::string safeText(std::string_view text);

/// Returns `value` as JSON text that is always valid UTF-8 (ill-formed bytes in strings become
/// U+FFFD instead of aborting) and safe on a terminal (C1 controls, bidi controls and line
/// separators inside strings are written as \u escapes, as JSON allows).
std::string jsonText(const nlohmann::json& value, int indent = 2);

/// Returns true when colour may be used on `stream`: a terminal, and NO_COLOR unset.
bool useColour(std::FILE* stream);
/// Wraps `text` in an ANSI colour code when `enabled`.
std::string colour(std::string_view text, std::string_view code, bool enabled);

/// Returns "1 tool", "2 tools": `count` and `noun`, with an "s" unless the count is one.
std::string counted(size_t count, std::string_view noun);

/// Returns the width tables on stdout use: the terminal's (at least 40, at most 100
/// columns), or 100 when stdout is no terminal.
size_t terminalWidth();

/// Returns the number of terminal columns a UTF-8 string takes (one per code point).
size_t displayWidth(std::string_view text);
/// Returns `text` cut to `width` columns, with "…" at the end when it was cut.
std::string fitWidth(std::string_view text, size_t width);

/// Returns `text` broken at spaces into lines of at most `width` columns (a longer word
/// is cut). Always returns at least one line.
std::vector<std::string> wrapWords(std::string_view text, size_t width);

/// Returns `text` broken into pieces of at most `width` columns that join back into it: each
/// piece ends after "__", or else after one of `_-|,./`, when one falls in its second half,
/// and anywhere otherwise. Always returns at least one piece.
std::vector<std::string> breakWord(std::string_view text, size_t width);

/// A plain text table that fits a width: the last column takes what the others
/// leave and wraps onto further lines; the others are cut at 24 columns unless wrapped.
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void addRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  /// Makes `column` (not the last) at most `maxWidth` columns wide and breaks a longer cell
  /// onto further lines (see breakWord) instead of cutting it.
  void wrapColumn(size_t column, size_t maxWidth) { wrapped_.emplace_back(column, maxWidth); }
  /// Returns the table as text, every line at most `width` columns.
  [[nodiscard]] std::string render(size_t width, bool colourHeader) const;

 private:
  /// Returns the cap of `column` and whether it wraps.
  [[nodiscard]] std::pair<size_t, bool> capOf(size_t column) const;

  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::pair<size_t, size_t>> wrapped_;  ///< column, its width
};

/// Returns the exit code for an error from core.
int exitCodeFor(const core::Error& error);

/// Prints `error` as one `kaja: error: …` line and returns its exit code.
int reportError(const core::Error& error);

}  // namespace kaja::cli
