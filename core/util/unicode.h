#pragma once

#include <string>
#include <string_view>

namespace kaja::core::unicode {

/// The one place kaja calls ICU. Every function takes UTF-8 that may be malformed: each
/// byte that is not part of a well-formed sequence (overlong forms and encoded surrogates
/// included) is read as U+FFFD, so no input is refused and no byte is hidden. None throws.

/// Returns true when `text` is well-formed UTF-8 (no surrogates, nothing past U+10FFFF).
bool isValidUtf8(std::string_view text);

/// Returns `text` with every ill-formed byte replaced by U+FFFD; well-formed text is
/// returned unchanged.
std::string sanitizeUtf8(std::string_view text);

/// Returns the NFC form of `text` (canonical composition: "e" + U+0301 becomes "é").
std::string toNfc(std::string_view text);

/// Returns NFKC_Casefold of `text`: compatibility forms folded (U+212A KELVIN SIGN becomes
/// "k", fullwidth letters become ASCII), case folded, default-ignorable characters removed.
std::string nfkcCasefold(std::string_view text);

/// Returns the UTS #39 confusable skeleton of `text`: two strings a reader could mistake
/// for one another ("paypal" and "раураl" with Cyrillic letters) have the same skeleton.
/// Falls back to `text` itself when ICU's confusable data cannot be opened.
std::string confusableSkeleton(std::string_view text);

/// What a code point is, by its Unicode general category.
enum class CharKind {
  kLetter,   ///< L*: a letter of any script
  kMark,     ///< M*: a combining mark (accent, vowel sign)
  kNumber,   ///< N*: a digit or other number
  kSpace,    ///< White_Space (tab, newline, U+00A0, U+3000, …)
  kControl,  ///< Cc that is not White_Space, and unassigned or surrogate code points
  kOther,    ///< punctuation, symbols, format characters
};

/// Returns the kind of `codePoint`.
CharKind charKind(char32_t codePoint);

/// Returns true for Default_Ignorable_Code_Point characters: zero-width space and joiners,
/// soft hyphen, bidi controls, variation selectors, tag characters U+E0000–E007F, Hangul
/// fillers and the like. They draw nothing, yet split or hide words.
bool isDefaultIgnorable(char32_t codePoint);

/// Returns true for characters that draw nothing a reader can tell from nothing, beyond the
/// default-ignorable ones: every format character (General_Category Cf, such as the Egyptian
/// hieroglyph format controls U+13430–U+1343F and the interlinear annotation marks
/// U+FFF9–U+FFFB), private-use and unassigned code points, and the blank-looking U+2800
/// (braille blank) and U+FFFC (object replacement).
bool isBlankLooking(char32_t codePoint);

/// Returns the Unicode name of `codePoint` ("LATIN LETTER SMALL CAPITAL R"), or "" when it
/// has none.
std::string charName(char32_t codePoint);

}  // namespace kaja::core::unicode
