#pragma once

#include <string>
#include <string_view>

namespace kaja::core::policy {

/// Returns the code points of `text`. Each byte that is not part of a well-formed UTF-8
/// sequence (overlong forms, surrogates and values past U+10FFFF included) becomes U+FFFD,
/// so a decoder bug cannot hide bytes from a scanner.
std::u32string decodeUtf8(std::string_view text);

/// Appends the UTF-8 encoding of `codePoint` to `out`.
void appendUtf8(std::string& out, char32_t codePoint);

/// Returns true for characters that take no space on screen but can split a word for a
/// matcher or hide text from a reader: every Default_Ignorable_Code_Point (zero-width
/// space/joiner/non-joiner, word joiner, BOM, soft hyphen, bidi controls, variation selectors,
/// Hangul fillers, tag characters U+E0000–E007F, …) and C0/C1 controls other than whitespace.
bool isInvisible(char32_t codePoint);

/// Returns true when `text` holds an invisible character (see isInvisible).
bool hasInvisible(std::string_view text);

/// Returns `text` without its invisible characters (see isInvisible), as well-formed UTF-8.
/// This is what kaja offers the model in place of a server's text.
std::string stripInvisible(std::string_view text);

/// Returns the ASCII that Unicode tag characters in `text` spell (U+E0041 is "A"), one run
/// per word, or "" when there are none. Tag characters draw nothing, yet a model can read
/// them. The tag letters of a flag emoji (U+1F3F4, tags, U+E007F) do not count.
std::string hiddenTagText(std::string_view text);

/// What normalisation does with an invisible character.
enum class InvisibleMode {
  kRemove,  ///< "ig\u200bnore" reads "ignore"
  /// Each run of invisible characters between two visible ones becomes one kWordBreakMark
  /// ("ig\u200bnore\u200bprevious" reads "ig", mark, "nore", mark, "previous"), so that a
  /// matcher can read each run as nothing or as a word break, whichever the run is meant as.
  kMark,
};

/// What InvisibleMode::kMark puts in place of a run of invisible characters: U+001F, which
/// normalised text holds nowhere else (it is itself invisible, so input spelling it is read as
/// one more invisible character). Never first or last, next to a space or twice in a row.
inline constexpr char kWordBreakMark = '\x1F';

/// Options for normalizeForScan.
struct NormalizeOptions {
  InvisibleMode invisibles = InvisibleMode::kRemove;
  /// Puts a space between a lowercase and an uppercase letter ("ignorePrevious" reads
  /// "ignore previous"). Meant for identifiers only: on prose it would break "IgNoRe".
  bool splitCamelCase = false;
};

/// Returns `text` the way a prompt-injection matcher wants it: invisible characters removed
/// or marked (see InvisibleMode); then ICU's NFKC_Casefold (fullwidth, mathematical, circled and
/// letterlike forms, ligatures, super- and subscripts, case); then each letter or number
/// that looks like ASCII read as that ASCII (its UTS #39 confusable skeleton without accents:
/// Cyrillic, Greek, Armenian and IPA look-alikes, "é" as "e"), each punctuation mark or
/// symbol that looks like one ASCII mark read as it ("’" as "'", "‒" as "-"), combining marks
/// removed and every run of whitespace collapsed to one space with none at either end.
/// Other code points (other scripts, the braille blank U+2800, "·") are kept as UTF-8; a
/// matcher treats every code point that is no letter as a word break.
std::string normalizeForScan(std::string_view text, const NormalizeOptions& options = {});

}  // namespace kaja::core::policy
