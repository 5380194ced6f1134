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
/// matcher: zero-width space/joiner/non-joiner, word joiner, BOM, soft hyphen, bidi controls,
/// variation selectors, tag characters U+E0000–E007F and C0/C1 controls other than whitespace.
bool isInvisible(char32_t codePoint);

/// What normalisation does with an invisible character.
enum class InvisibleMode {
  kRemove,  ///< "ig\u200bnore" reads "ignore"
  kSpace,   ///< "ignore\u200bprevious" reads "ignore previous"
};

/// Options for normalizeForScan.
struct NormalizeOptions {
  InvisibleMode invisibles = InvisibleMode::kRemove;
  /// Puts a space between a lowercase and an uppercase letter ("ignorePrevious" reads
  /// "ignore previous"). Meant for identifiers only: on prose it would break "IgNoRe".
  bool splitCamelCase = false;
};

/// Returns `text` the way a prompt-injection matcher wants it: invisible characters removed
/// or turned into spaces, compatibility forms folded to ASCII (fullwidth, mathematical
/// alphanumerics, letterlike symbols, circled and squared letters, ligatures, super- and
/// subscripts, small capitals, common Cyrillic and Greek look-alikes), accents stripped from
/// Latin-1 and Latin Extended-A letters, combining marks removed, ASCII lowercased and every
/// run of whitespace collapsed to one space with none at either end. Code points it does not
/// know are kept as UTF-8.
std::string normalizeForScan(std::string_view text, const NormalizeOptions& options = {});

}  // namespace kaja::core::policy
