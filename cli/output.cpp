#include "cli/output.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "cli/command.h"
#include "core/util/quote.h"

namespace kaja::cli {

Options& options() {
  static Options instance;
  return instance;
}

std::string asSentence(std::string_view message) {
  std::string text(message);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\t')) {
    text.pop_back();
  }
  if (text.empty()) return text;
  const char last = text.back();
  if (last != '.' && last != '?' && last != '!') text += '.';
  return text;
}

// Messages often quote what a server said, so every one is written as one safe line.
void printError(const core::Error& error) {
  std::fprintf(stderr, "kaja: error: %s\n", oneLine(asSentence(error.describe())).c_str());
  if (options().verbose && !error.detail.empty()) {
    std::fprintf(stderr, "%s\n", safeText(error.detail).c_str());
  }
}

void printError(std::string_view message) {
  std::fprintf(stderr, "kaja: error: %s\n", oneLine(asSentence(message)).c_str());
}

void printWarning(std::string_view message) {
  std::fprintf(stderr, "kaja: warning: %s\n", oneLine(asSentence(message)).c_str());
}

void printNote(std::string_view message) {
  std::fprintf(stderr, "kaja: %s\n", oneLine(asSentence(message)).c_str());
}

void printRefusal(std::string_view message) {
  std::fprintf(stderr, "kaja: refused: %s\n", oneLine(asSentence(message)).c_str());
}

std::string oneLine(std::string_view text) { return core::escapeForTerminal(text, false); }

std::string safeText(std::string_view text) { return core::escapeForTerminal(text, true); }

std::string jsonText(const nlohmann::json& value, int indent) {
  std::string text = value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
  // Outside strings the writer emits ASCII only, so every such sequence is inside a string,
  // where a \u escape means the same character.
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    unsigned code = 0;
    size_t length = 0;
    auto next = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
    if (c == 0x7F) {
      code = c, length = 1;
    } else if (c == 0xC2 && i + 1 < text.size() && next(1) >= 0x80 && next(1) <= 0x9F) {
      code = next(1), length = 2;  // C1 controls U+0080–U+009F
    } else if (c == 0xD8 && i + 1 < text.size() && next(1) == 0x9C) {
      code = 0x061C, length = 2;  // ARABIC LETTER MARK
    } else if (c == 0xE2 && i + 2 < text.size() && (next(1) == 0x80 || next(1) == 0x81)) {
      unsigned cp = 0x2000 | ((next(1) & 0x3F) << 6) | (next(2) & 0x3F);
      bool hidden = (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
                    (cp >= 0x2060 && cp <= 0x206F);
      if (hidden) code = cp, length = 3;
    }
    if (length == 0) {
      out += text[i];
      continue;
    }
    char buffer[8];
    std::snprintf(buffer, sizeof buffer, "\\u%04x", code);
    out += buffer;
    i += length - 1;
  }
  return out;
}

bool useColour(std::FILE* stream) {
  const char* noColour = std::getenv("NO_COLOR");
  if (noColour != nullptr && *noColour != '\0') return false;
  return ::isatty(::fileno(stream)) != 0;
}

std::string colour(std::string_view text, std::string_view code, bool enabled) {
  if (!enabled) return std::string(text);
  return "\033[" + std::string(code) + "m" + std::string(text) + "\033[0m";
}

size_t displayWidth(std::string_view text) {
  size_t width = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    // ANSI colour sequences ("\033[…m") take no columns.
    if (text[i] == '\033') {
      size_t end = text.find('m', i);
      if (end != std::string_view::npos) {
        i = end;
        continue;
      }
    }
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++width;
  }
  return width;
}

std::string fitWidth(std::string_view text, size_t width) {
  if (displayWidth(text) <= width) return std::string(text);
  if (width == 0) return {};
  std::string out;
  size_t columns = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    bool starts = (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
    if (starts && ++columns > width - 1) break;
    out += text[i];
  }
  return out + "…";
}

std::vector<std::string> wrapWords(std::string_view text, size_t width) {
  std::vector<std::string> lines(1);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    std::string word(text.substr(start, end - start));
    std::string& current = lines.back();
    if (!current.empty() && displayWidth(current) + 1 + displayWidth(word) > width) {
      lines.emplace_back();
    }
    if (!lines.back().empty()) lines.back() += ' ';
    lines.back() += fitWidth(word, width);
    start = end + 1;
  }
  return lines;
}

std::vector<std::string> breakWord(std::string_view text, size_t width) {
  std::vector<std::string> pieces;
  while (width > 0 && displayWidth(text) > width) {
    // The byte just past `width` columns, and the best break at or before it.
    size_t end = 0;
    size_t columns = 0;
    while (end < text.size()) {
      bool starts = (static_cast<unsigned char>(text[end]) & 0xC0) != 0x80;
      if (starts && columns++ == width) break;
      ++end;
    }
    size_t cut = end;
    size_t half = end / 2;
    if (size_t at = end < 2 ? std::string_view::npos : text.rfind("__", end - 2);
        at != std::string_view::npos && at + 2 > half) {
      cut = at + 2;
    } else if (size_t mark = text.find_last_of("_-|,./", end - 1);
               mark != std::string_view::npos && mark + 1 > half) {
      cut = mark + 1;
    }
    pieces.emplace_back(text.substr(0, cut));
    text.remove_prefix(cut);
  }
  pieces.emplace_back(text);
  return pieces;
}

std::pair<size_t, bool> Table::capOf(size_t column) const {
  for (const auto& [wraps, width] : wrapped_) {
    if (wraps == column) return {width, true};
  }
  return {24, false};
}

std::string Table::render(size_t width, bool colourHeader) const {
  size_t columns = headers_.size();
  std::vector<size_t> widths(columns);
  for (size_t c = 0; c < columns; ++c) widths[c] = displayWidth(headers_[c]);
  for (const auto& row : rows_) {
    for (size_t c = 0; c < columns && c < row.size(); ++c) {
      widths[c] = std::max(widths[c], displayWidth(row[c]));
    }
  }
  // Fixed columns keep their natural width up to a cap; the last one gets the rest.
  size_t used = 0;
  for (size_t c = 0; c + 1 < columns; ++c) {
    widths[c] = std::min(widths[c], capOf(c).first);
    used += widths[c] + 2;
  }
  widths[columns - 1] = width > used + 10 ? width - used : 10;

  auto line = [&](const std::vector<std::string>& cells, bool header) {
    // Each cell as the lines it takes: the last column wraps at spaces, a wrapped column
    // breaks its text, any other is cut to fit.
    std::vector<std::vector<std::string>> pieces(columns);
    size_t height = 1;
    for (size_t c = 0; c < columns; ++c) {
      if (c + 1 == columns) {
        pieces[c] = wrapWords(cells.size() >= columns ? cells.back() : "", widths[c]);
      } else {
        std::string cell = c < cells.size() ? cells[c] : "";
        pieces[c] = capOf(c).second ? breakWord(cell, widths[c])
                                    : std::vector<std::string>{fitWidth(cell, widths[c])};
      }
      height = std::max(height, pieces[c].size());
    }
    std::string out;
    for (size_t i = 0; i < height; ++i) {
      std::string text;
      for (size_t c = 0; c < columns; ++c) {
        std::string piece = i < pieces[c].size() ? pieces[c][i] : "";
        text += piece;
        if (c + 1 < columns) text += std::string(widths[c] + 2 - displayWidth(piece), ' ');
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      out += (i > 0 ? "\n" : "") + text;
    }
    return (header ? colour(out, "1", colourHeader) : out) + "\n";
  };
  std::string out = line(headers_, true);
  for (const auto& row : rows_) out += line(row, false);
  return out;
}

std::string counted(size_t count, std::string_view noun) {
  std::string out = std::to_string(count) + " " + std::string(noun);
  if (count != 1) out += noun.ends_with("y") ? "" : "s";
  if (count != 1 && noun.ends_with("y")) out.replace(out.size() - 1, 1, "ies");
  return out;
}

size_t terminalWidth() {
  winsize size{};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 &&
      size.ws_col >= 40) {
    return std::min<size_t>(size.ws_col, 100);
  }
  return 100;
}

int reportError(const core::Error& error) {
  printError(error);
  return exitCodeFor(error);
}

int exitCodeFor(const core::Error& error) {
  switch (error.code) {
    case core::ErrorCode::kInvalidConfig:
    case core::ErrorCode::kUsage:
    case core::ErrorCode::kNotFound:
      return kExitUsage;
    case core::ErrorCode::kRefused:
      return kExitRefused;
    case core::ErrorCode::kConnect:
    case core::ErrorCode::kSpawn:
    case core::ErrorCode::kTimeout:
      return kExitConnect;
    default:
      return kExitFailed;
  }
}

}  // namespace kaja::cli
