#include "core/policy/text_normalizer.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace kaja::core::policy {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

bool inRange(char32_t c, char32_t low, char32_t high) { return c >= low && c <= high; }

bool isSpace(char32_t c) {
  return inRange(c, 0x09, 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         inRange(c, 0x2000, 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

bool isCombiningMark(char32_t c) {
  return inRange(c, 0x0300, 0x036F) || inRange(c, 0x1AB0, 0x1AFF) || inRange(c, 0x1DC0, 0x1DFF) ||
         inRange(c, 0x20D0, 0x20FF) || inRange(c, 0xFE20, 0xFE2F);
}

// Latin-1 letters U+00C0–U+00FF by their base letter; '1' = "ae", '2' = "th", '3' = "ss",
// '.' = not a letter (× and ÷), kept as it is.
constexpr std::string_view kLatin1 =
    "aaaaaa1ceeeeiiiidnooooo.ouuuuy23"
    "aaaaaa1ceeeeiiiidnooooo.ouuuuy2y";
static_assert(kLatin1.size() == 64);

// Latin Extended-A U+0100–U+017F by base letter; '1' = "ij", '2' = "oe".
constexpr std::string_view kLatinExtendedA =
    "aaaaaa"
    "cccccccc"
    "dddd"
    "eeeeeeeeee"
    "gggggggg"
    "hhhh"
    "iiiiiiiiii"
    "11"
    "jj"
    "kkk"
    "llllllllll"
    "nnnnnnnnn"
    "oooooo"
    "22"
    "rrrrrr"
    "ssssssss"
    "tttttt"
    "uuuuuuuuuuuu"
    "ww"
    "yyy"
    "zzzzzz"
    "s";
static_assert(kLatinExtendedA.size() == 128);

// Single code points that read as one ASCII character: letterlike symbols (the holes in the
// mathematical alphabets), super- and subscripts, modifier letters, small capitals and the
// Cyrillic and Greek letters that look like Latin ones.
const std::vector<std::pair<char32_t, char>>& singleFolds() {
  static const auto* table = [] {
    auto* folds = new std::vector<std::pair<char32_t, char>>{
        {0x00AA, 'a'}, {0x00B2, '2'}, {0x00B3, '3'},  {0x00B9, '1'},  {0x00BA, 'o'}, {0x0262, 'g'},
        {0x026A, 'i'}, {0x0274, 'n'}, {0x0280, 'r'},  {0x028F, 'y'},  {0x0299, 'b'}, {0x029C, 'h'},
        {0x029F, 'l'}, {0x02B0, 'h'}, {0x02B2, 'j'},  {0x02B3, 'r'},  {0x02B7, 'w'}, {0x02B8, 'y'},
        {0x02E1, 'l'}, {0x02E2, 's'}, {0x02E3, 'x'},  {0x0391, 'a'},  {0x0392, 'b'}, {0x0395, 'e'},
        {0x0396, 'z'}, {0x0397, 'h'}, {0x0399, 'i'},  {0x039A, 'k'},  {0x039C, 'm'}, {0x039D, 'n'},
        {0x039F, 'o'}, {0x03A1, 'p'}, {0x03A4, 't'},  {0x03A5, 'y'},  {0x03A7, 'x'}, {0x03B1, 'a'},
        {0x03B9, 'i'}, {0x03BD, 'v'}, {0x03BF, 'o'},  {0x03C1, 'p'},  {0x03C5, 'u'}, {0x0405, 's'},
        {0x0406, 'i'}, {0x0408, 'j'}, {0x0410, 'a'},  {0x0412, 'b'},  {0x0415, 'e'}, {0x041A, 'k'},
        {0x041C, 'm'}, {0x041D, 'h'}, {0x041E, 'o'},  {0x0420, 'p'},  {0x0421, 'c'}, {0x0422, 't'},
        {0x0425, 'x'}, {0x0430, 'a'}, {0x0435, 'e'},  {0x043E, 'o'},  {0x0440, 'p'}, {0x0441, 'c'},
        {0x0443, 'y'}, {0x0445, 'x'}, {0x0455, 's'},  {0x0456, 'i'},  {0x0458, 'j'}, {0x04BB, 'h'},
        {0x0501, 'd'}, {0x051B, 'q'}, {0x051D, 'w'},  {0x1D00, 'a'},  {0x1D04, 'c'}, {0x1D05, 'd'},
        {0x1D07, 'e'}, {0x1D0A, 'j'}, {0x1D0B, 'k'},  {0x1D0D, 'm'},  {0x1D0F, 'o'}, {0x1D18, 'p'},
        {0x1D1B, 't'}, {0x1D1C, 'u'}, {0x1D20, 'v'},  {0x1D21, 'w'},  {0x1D22, 'z'}, {0x1D2C, 'a'},
        {0x1D2E, 'b'}, {0x1D30, 'd'}, {0x1D31, 'e'},  {0x1D33, 'g'},  {0x1D34, 'h'}, {0x1D35, 'i'},
        {0x1D36, 'j'}, {0x1D37, 'k'}, {0x1D38, 'l'},  {0x1D39, 'm'},  {0x1D3A, 'n'}, {0x1D3C, 'o'},
        {0x1D3E, 'p'}, {0x1D3F, 'r'}, {0x1D40, 't'},  {0x1D41, 'u'},  {0x1D42, 'w'}, {0x1D43, 'a'},
        {0x1D47, 'b'}, {0x1D48, 'd'}, {0x1D49, 'e'},  {0x1D4D, 'g'},  {0x1D4F, 'k'}, {0x1D50, 'm'},
        {0x1D52, 'o'}, {0x1D56, 'p'}, {0x1D57, 't'},  {0x1D58, 'u'},  {0x1D5B, 'v'}, {0x1D62, 'i'},
        {0x1D63, 'r'}, {0x1D64, 'u'}, {0x1D65, 'v'},  {0x1D9C, 'c'},  {0x1DA0, 'f'}, {0x1DBB, 'z'},
        {0x2070, '0'}, {0x2071, 'i'}, {0x207F, 'n'},  {0x2090, 'a'},  {0x2091, 'e'}, {0x2092, 'o'},
        {0x2093, 'x'}, {0x2095, 'h'}, {0x2096, 'k'},  {0x2097, 'l'},  {0x2098, 'm'}, {0x2099, 'n'},
        {0x209A, 'p'}, {0x209B, 's'}, {0x209C, 't'},  {0x2102, 'c'},  {0x210A, 'g'}, {0x210B, 'h'},
        {0x210C, 'h'}, {0x210D, 'h'}, {0x210E, 'h'},  {0x2110, 'i'},  {0x2111, 'i'}, {0x2112, 'l'},
        {0x2113, 'l'}, {0x2115, 'n'}, {0x2119, 'p'},  {0x211A, 'q'},  {0x211B, 'r'}, {0x211C, 'r'},
        {0x211D, 'r'}, {0x2124, 'z'}, {0x2128, 'z'},  {0x212C, 'b'},  {0x212D, 'c'}, {0x212F, 'e'},
        {0x2130, 'e'}, {0x2131, 'f'}, {0x2133, 'm'},  {0x2134, 'o'},  {0x2139, 'i'}, {0x24EA, '0'},
        {0xA730, 'f'}, {0xA731, 's'}, {0x1D6A4, 'i'}, {0x1D6A5, 'j'},
    };
    std::sort(folds->begin(), folds->end());
    return folds;
  }();
  return *table;
}

// Appends the ASCII reading of `c` and returns true, or returns false when `c` has none.
bool foldToAscii(char32_t c, std::string& out) {
  if (c < 0x80) {
    out += static_cast<char>(c);
    return true;
  }
  if (inRange(c, 0xC0, 0xFF)) {
    char base = kLatin1[c - 0xC0];
    if (base == '.') return false;
    out += base == '1' ? "ae" : base == '2' ? "th" : base == '3' ? "ss" : std::string(1, base);
    return true;
  }
  if (inRange(c, 0x100, 0x17F)) {
    char base = kLatinExtendedA[c - 0x100];
    out += base == '1' ? "ij" : base == '2' ? "oe" : std::string(1, base);
    return true;
  }
  if (inRange(c, 0xFF01, 0xFF5E)) {  // fullwidth ASCII
    out += static_cast<char>(c - 0xFEE0);
    return true;
  }
  if (inRange(c, 0x1D400, 0x1D6A3)) {  // 13 mathematical Latin alphabets of 52 letters
    auto index = (c - 0x1D400) % 52;
    out += static_cast<char>(index < 26 ? 'A' + index : 'a' + (index - 26));
    return true;
  }
  if (inRange(c, 0x1D7CE, 0x1D7FF)) {  // 5 mathematical digit sets
    out += static_cast<char>('0' + (c - 0x1D7CE) % 10);
    return true;
  }
  struct Run {
    char32_t first, last;
    char base;
  };
  static constexpr std::array<Run, 10> kRuns = {{
      {0x2074, 0x2079, '4'},    // superscript 4–9
      {0x2080, 0x2089, '0'},    // subscript 0–9
      {0x2460, 0x2468, '1'},    // circled 1–9
      {0x249C, 0x24B5, 'a'},    // parenthesized a–z
      {0x24B6, 0x24CF, 'A'},    // circled A–Z
      {0x24D0, 0x24E9, 'a'},    // circled a–z
      {0x1F130, 0x1F149, 'A'},  // squared A–Z
      {0x1F150, 0x1F169, 'A'},  // negative circled A–Z
      {0x1F170, 0x1F189, 'A'},  // negative squared A–Z
      {0x1F1E6, 0x1F1FF, 'a'},  // regional indicators
  }};
  for (const auto& run : kRuns) {
    if (inRange(c, run.first, run.last)) {
      out += static_cast<char>(run.base + (c - run.first));
      return true;
    }
  }
  static constexpr std::array<std::string_view, 7> kLigatures = {"ff",  "fi", "fl", "ffi",
                                                                 "ffl", "st", "st"};
  if (inRange(c, 0xFB00, 0xFB06)) {
    out += kLigatures[c - 0xFB00];
    return true;
  }
  const auto& folds = singleFolds();
  auto it = std::lower_bound(folds.begin(), folds.end(), std::pair<char32_t, char>{c, 0});
  if (it != folds.end() && it->first == c) {
    out += it->second;
    return true;
  }
  return false;
}

bool isAsciiLower(char c) { return c >= 'a' && c <= 'z'; }
bool isAsciiUpper(char c) { return c >= 'A' && c <= 'Z'; }

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
  return c < 0x20 || inRange(c, 0x7F, 0x9F) || c == 0xAD || c == 0x034F || c == 0x061C ||
         c == 0x115F || c == 0x1160 || c == 0x17B4 || c == 0x17B5 || inRange(c, 0x180B, 0x180E) ||
         inRange(c, 0x200B, 0x200F) || inRange(c, 0x202A, 0x202E) || inRange(c, 0x2060, 0x2064) ||
         inRange(c, 0x2066, 0x206F) || c == 0x3164 || inRange(c, 0xFE00, 0xFE0F) || c == 0xFEFF ||
         c == 0xFFA0 || inRange(c, 0x1D173, 0x1D17A) || inRange(c, 0xE0000, 0xE007F) ||
         inRange(c, 0xE0100, 0xE01EF);
}

std::string normalizeForScan(std::string_view text, const NormalizeOptions& options) {
  std::string folded;
  folded.reserve(text.size());
  bool ascii = std::all_of(text.begin(), text.end(),
                           [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  std::u32string decoded;
  if (!ascii) decoded = decodeUtf8(text);
  size_t count = ascii ? text.size() : decoded.size();
  for (size_t index = 0; index < count; ++index) {
    char32_t c =
        ascii ? static_cast<char32_t>(static_cast<unsigned char>(text[index])) : decoded[index];
    if (isInvisible(c)) {
      if (options.invisibles == InvisibleMode::kSpace) folded += ' ';
      continue;
    }
    if (isCombiningMark(c)) continue;
    if (isSpace(c)) {
      folded += ' ';
      continue;
    }
    if (!foldToAscii(c, folded)) appendUtf8(folded, c);
  }
  std::string out;
  out.reserve(folded.size());
  bool pendingSpace = false;
  for (size_t i = 0; i < folded.size(); ++i) {
    char c = folded[i];
    if (c == ' ') {
      pendingSpace = !out.empty();
      continue;
    }
    if (options.splitCamelCase && isAsciiUpper(c) && i > 0 && isAsciiLower(folded[i - 1])) {
      pendingSpace = true;
    }
    if (pendingSpace) out += ' ';
    pendingSpace = false;
    out += isAsciiUpper(c) ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

}  // namespace kaja::core::policy
