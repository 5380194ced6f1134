#include "core/util/quote.h"

#include <cstdio>
#include <optional>

#include "core/util/unicode.h"

namespace kaja::core {
namespace {

// Decodes the well-formed UTF-8 sequence at text[i], advancing i past it; returns nullopt
// (and advances by one byte) for anything ill-formed: overlong forms, surrogates, values past
// U+10FFFF, truncated sequences and stray continuation bytes.
std::optional<char32_t> nextCodePoint(std::string_view text, size_t& i) {
  auto lead = static_cast<unsigned char>(text[i]);
  if (lead < 0x80) {
    ++i;
    return lead;
  }
  size_t length = (lead & 0xE0) == 0xC0   ? 2
                  : (lead & 0xF0) == 0xE0 ? 3
                  : (lead & 0xF8) == 0xF0 ? 4
                                          : 0;
  char32_t value = length == 2 ? lead & 0x1F : length == 3 ? lead & 0x0F : lead & 0x07;
  bool valid = length != 0 && i + length <= text.size();
  for (size_t k = 1; valid && k < length; ++k) {
    auto next = static_cast<unsigned char>(text[i + k]);
    valid = (next & 0xC0) == 0x80;
    value = (value << 6) | (next & 0x3F);
  }
  static constexpr char32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (!valid || value < kMinimum[length] || value > 0x10FFFF ||
      (value >= 0xD800 && value <= 0xDFFF)) {
    ++i;
    return std::nullopt;
  }
  i += length;
  return value;
}

bool needsEscape(char32_t c) {
  if (c < 0x20 || (c >= 0x7F && c <= 0x9F)) return true;
  if (c == 0x2028 || c == 0x2029) return true;
  // Variation selectors only choose a glyph (text or emoji style); they hide nothing.
  if ((c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xE0100 && c <= 0xE01EF)) return false;
  return c >= 0xA0 && unicode::isDefaultIgnorable(c);
}

void appendEscape(std::string& out, char32_t c) {
  switch (c) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      break;
  }
  char buffer[16];
  if (c > 0xFFFF) {
    std::snprintf(buffer, sizeof buffer, "\\U%08x", static_cast<unsigned>(c));
  } else {
    std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
  }
  out += buffer;
}

std::string escape(std::string_view text, bool doubleBackslash, bool keepLines) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    std::optional<char32_t> c = nextCodePoint(text, i);
    if (!c) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\x%02x", static_cast<unsigned char>(text[start]));
      out += buffer;
      continue;
    }
    if (keepLines && (*c == '\n' || *c == '\t')) {
      out += static_cast<char>(*c);
    } else if (*c == '\\' && doubleBackslash) {
      out += "\\\\";
    } else if (needsEscape(*c)) {
      appendEscape(out, *c);
    } else {
      out.append(text.substr(start, i - start));
    }
  }
  return out;
}

}  // namespace

std::string escapeForMessage(std::string_view text) { return escape(text, true, false); }

std::string escapeForTerminal(std::string_view text, bool keepLines) {
  return escape(text, false, keepLines);
}

std::string quoteForMessage(std::string_view text) {
  std::string out = "\"";
  for (char c : escapeForMessage(text)) {
    if (c == '"') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace kaja::core
