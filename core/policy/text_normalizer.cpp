#include "core/policy/text_normalizer.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>

#include "core/util/unicode.h"

namespace kaja::core::policy {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

bool inRange(char32_t c, char32_t low, char32_t high) { return c >= low && c <= high; }

bool isSpace(char32_t c) {
  return inRange(c, 0x09, 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         inRange(c, 0x2000, 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

// Latin letters that are no look-alike of an ASCII letter for ICU, do not decompose and have
// no one-letter name, but that a reader takes for ASCII.
std::string_view latinSupplement(char32_t c) {
  switch (c) {
    case 0x00F0:  // ð
      return "d";
    case 0x00FE:  // þ
      return "th";
    case 0x0138:  // ĸ
      return "k";
    case 0x014B:  // ŋ
      return "n";
    default:
      return {};
  }
}

// The ASCII letter a Latin letter is a variant of, by its Unicode name: small capitals
// ("LATIN LETTER SMALL CAPITAL R"), letters with hooks, tails or strokes ("LATIN SMALL LETTER
// R WITH FISHHOOK") and modifier letters; 0 for anything else.
char latinLetterByName(char32_t c) {
  std::string name = unicode::charName(c);
  for (std::string_view prefix :
       {"LATIN SMALL LETTER ", "LATIN CAPITAL LETTER ", "LATIN LETTER SMALL CAPITAL ",
        "MODIFIER LETTER SMALL ", "MODIFIER LETTER CAPITAL ", "LATIN SUBSCRIPT SMALL LETTER "}) {
    if (!name.starts_with(prefix)) continue;
    std::string_view rest = std::string_view(name).substr(prefix.size());
    if (rest.size() >= 1 && rest[0] >= 'A' && rest[0] <= 'Z' &&
        (rest.size() == 1 || rest.substr(1).starts_with(" WITH "))) {
      return static_cast<char>(rest[0] - 'A' + 'a');
    }
  }
  return 0;
}

// Returns `text` without its combining marks, or "" when what is left is not all ASCII.
std::string asciiWithoutMarks(std::string_view text) {
  std::string out;
  for (char32_t c : decodeUtf8(text)) {
    if (c < 0x80) {
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    } else if (unicode::charKind(c) != unicode::CharKind::kMark) {
      return {};
    }
  }
  return out;
}

bool isAsciiAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// The ASCII reading of one non-ASCII code point of NFKC_Casefold text: a letter or number
// that looks like ASCII letters reads as them (its UTS #39 skeleton without marks: Cyrillic
// "о" and Armenian "օ" read "o", "é" reads "e"; else, for a Latin letter, the letter its name
// gives: small capital "ʀ" reads "r"); a character that looks like one ASCII punctuation mark
// reads as it ("’" and "ʼ" read "'", "∕" reads "/", "∣" reads "|"); a space is a space; a lone
// combining mark is dropped; anything else stays as it is.
std::string foldCodePoint(char32_t c) {
  std::string utf8;
  appendUtf8(utf8, c);
  auto kind = unicode::charKind(c);
  if (kind == unicode::CharKind::kSpace) return " ";
  if (kind == unicode::CharKind::kMark) return {};
  if (kind == unicode::CharKind::kControl) return utf8;
  if (auto extra = latinSupplement(c); !extra.empty()) return std::string(extra);
  std::string ascii = asciiWithoutMarks(unicode::confusableSkeleton(utf8));
  bool symbol = kind == unicode::CharKind::kOther;
  if (!symbol && !ascii.empty() && std::all_of(ascii.begin(), ascii.end(), isAsciiAlnum)) {
    return ascii;
  }
  if (symbol && ascii == "l") return "|";  // "l" is the skeleton of "|" itself
  if (ascii.size() == 1 && !isAsciiAlnum(ascii[0]) && ascii[0] != ' ') return ascii;
  if (kind == unicode::CharKind::kLetter) {
    if (char base = latinLetterByName(c)) return std::string(1, base);
  }
  return utf8;
}

// foldCodePoint, remembered: each distinct code point costs ICU calls once per thread.
const std::string& foldCached(char32_t c) {
  thread_local std::unordered_map<char32_t, std::string> cache;
  auto it = cache.find(c);
  if (it == cache.end()) it = cache.emplace(c, foldCodePoint(c)).first;
  return it->second;
}

bool isPlainAscii(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

}  // namespace

std::u32string decodeUtf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      out += static_cast<char32_t>(lead);
      ++i;
      continue;
    }
    size_t length = 0;
    char32_t value = 0;
    char32_t minimum = 0;
    if ((lead & 0xE0) == 0xC0) {
      length = 2, value = lead & 0x1F, minimum = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3, value = lead & 0x0F, minimum = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4, value = lead & 0x07, minimum = 0x10000;
    }
    bool valid = length != 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) {
      auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) {
        valid = false;
      } else {
        value = (value << 6) | (next & 0x3F);
      }
    }
    if (valid && (value < minimum || value > 0x10FFFF || inRange(value, 0xD800, 0xDFFF))) {
      valid = false;
    }
    if (!valid) {
      out += kReplacement;
      ++i;
      continue;
    }
    out += value;
    i += length;
  }
  return out;
}

void appendUtf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

bool isInvisible(char32_t c) {
  if (isSpace(c)) return false;
  // No ASCII character is default-ignorable: ASCII text needs no ICU lookup.
  if (c < 0x80) return c < 0x20 || c == 0x7F;
  return inRange(c, 0x7F, 0x9F) || unicode::isDefaultIgnorable(c) || unicode::isBlankLooking(c);
}

bool hasInvisible(std::string_view text) {
  if (isPlainAscii(text)) {
    return std::any_of(text.begin(), text.end(),
                       [](char c) { return isInvisible(static_cast<unsigned char>(c)); });
  }
  std::u32string decoded = decodeUtf8(text);
  return std::any_of(decoded.begin(), decoded.end(), [](char32_t c) { return isInvisible(c); });
}

std::string stripInvisible(std::string_view text) {
  if (isPlainAscii(text)) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
      if (!isInvisible(static_cast<unsigned char>(c))) out += c;
    }
    return out;
  }
  std::string out;
  out.reserve(text.size());
  for (char32_t c : decodeUtf8(text)) {
    if (!isInvisible(c)) appendUtf8(out, c);
  }
  return out;
}

std::string hiddenTagText(std::string_view text) {
  if (text.find('\xF3') == std::string_view::npos) return {};
  std::u32string decoded = decodeUtf8(text);
  std::string hidden;
  for (size_t i = 0; i < decoded.size(); ++i) {
    if (!inRange(decoded[i], 0xE0000, 0xE007F)) continue;
    size_t end = i;
    while (end < decoded.size() && inRange(decoded[end], 0xE0000, 0xE007F)) ++end;
    // A flag such as England's is U+1F3F4, tag letters, then CANCEL TAG U+E007F.
    bool flag = i > 0 && decoded[i - 1] == 0x1F3F4 && decoded[end - 1] == 0xE007F;
    for (size_t k = i; !flag && k < end; ++k) {
      if (inRange(decoded[k], 0xE0020, 0xE007E)) hidden += static_cast<char>(decoded[k] - 0xE0000);
    }
    if (!flag) hidden += ' ';
    i = end;
  }
  return hidden;
}

std::string normalizeForScan(std::string_view text, const NormalizeOptions& options) {
  // Step 1, on the text as written: invisibles removed or marked, camelCase split (case is
  // gone after folding).
  std::string prepared;
  prepared.reserve(text.size());
  bool ascii = isPlainAscii(text);
  std::u32string decoded;
  if (!ascii) decoded = decodeUtf8(text);
  size_t count = ascii ? text.size() : decoded.size();
  char32_t previous = 0;
  for (size_t index = 0; index < count; ++index) {
    char32_t c =
        ascii ? static_cast<char32_t>(static_cast<unsigned char>(text[index])) : decoded[index];
    if (isInvisible(c)) {
      if (options.invisibles == InvisibleMode::kMark) prepared += kWordBreakMark;
      continue;
    }
    if (options.splitCamelCase && c >= 'A' && c <= 'Z' && previous >= 'a' && previous <= 'z') {
      prepared += ' ';
    }
    previous = c;
    if (ascii) {
      prepared += static_cast<char>(c);
    } else {
      appendUtf8(prepared, c);
    }
  }
  // Step 2: NFKC_Casefold (fullwidth, mathematical and circled letters, ligatures, case),
  // then each remaining non-ASCII code point read as the ASCII it looks like.
  std::string folded;
  if (ascii) {
    folded = std::move(prepared);
    for (char& c : folded) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
  } else {
    std::string casefolded = unicode::nfkcCasefold(prepared);
    folded.reserve(casefolded.size());
    for (char32_t c : decodeUtf8(casefolded)) {
      if (c < 0x80) {
        folded += static_cast<char>(c);
      } else {
        folded += foldCached(c);
      }
    }
  }
  // Step 3: every run of whitespace becomes one space, none at either end. A mark counts only
  // between two characters that are no space: next to a space, a word breaks anyway (and the
  // characters between two marks may have folded to nothing).
  std::string out;
  out.reserve(folded.size());
  bool pendingSpace = false;
  bool pendingMark = false;
  for (char c : folded) {
    if (c == ' ' || (c >= '\t' && c <= '\r')) {
      pendingSpace = !out.empty();
      pendingMark = false;
      continue;
    }
    if (c == kWordBreakMark) {
      pendingMark = !out.empty() && !pendingSpace;
      continue;
    }
    if (pendingSpace) out += ' ';
    if (pendingMark) out += kWordBreakMark;
    pendingSpace = pendingMark = false;
    out += c;
  }
  return out;
}

}  // namespace kaja::core::policy
