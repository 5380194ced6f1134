#include "core/util/unicode.h"

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/uspoof.h>
#include <unicode/utf8.h>

#include <memory>

namespace kaja::core::unicode {
namespace {

// ICU converts ill-formed UTF-8 to U+FFFD on the way in, which is what every caller wants.
icu::UnicodeString fromUtf8(std::string_view text) {
  return icu::UnicodeString::fromUTF8(
      icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
}

std::string toUtf8(const icu::UnicodeString& text) {
  std::string out;
  text.toUTF8String(out);
  return out;
}

// Works on UTF-8 directly: text that is already normal, the common case for file names,
// costs one scan and one copy.
std::string normalize(const icu::Normalizer2* normalizer, std::string_view text) {
  if (normalizer == nullptr || !isValidUtf8(text)) {
    if (normalizer == nullptr) return sanitizeUtf8(text);
    std::string clean = sanitizeUtf8(text);
    return normalize(normalizer, clean);
  }
  icu::StringPiece piece(text.data(), static_cast<int32_t>(text.size()));
  UErrorCode status = U_ZERO_ERROR;
  if (normalizer->isNormalizedUTF8(piece, status) && U_SUCCESS(status)) return std::string(text);
  status = U_ZERO_ERROR;
  std::string out;
  icu::StringByteSink<std::string> sink(&out, static_cast<int32_t>(text.size()));
  normalizer->normalizeUTF8(0, piece, sink, nullptr, status);
  if (U_FAILURE(status)) return std::string(text);
  return out;
}

struct SpoofCloser {
  void operator()(USpoofChecker* checker) const { uspoof_close(checker); }
};

// Opened once; uspoof_getSkeleton is documented as thread-safe on a checker that is not
// being changed.
const USpoofChecker* spoofChecker() {
  static const std::unique_ptr<USpoofChecker, SpoofCloser> checker = [] {
    UErrorCode status = U_ZERO_ERROR;
    USpoofChecker* opened = uspoof_open(&status);
    if (U_FAILURE(status)) return std::unique_ptr<USpoofChecker, SpoofCloser>();
    return std::unique_ptr<USpoofChecker, SpoofCloser>(opened);
  }();
  return checker.get();
}

}  // namespace

bool isValidUtf8(std::string_view text) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  auto length = static_cast<int32_t>(text.size());
  int32_t i = 0;
  while (i < length) {
    UChar32 c = 0;
    U8_NEXT(bytes, i, length, c);
    if (c < 0) return false;
  }
  return true;
}

std::string sanitizeUtf8(std::string_view text) {
  if (isValidUtf8(text)) return std::string(text);
  return toUtf8(fromUtf8(text));
}

std::string toNfc(std::string_view text) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(status);
  return normalize(U_SUCCESS(status) ? nfc : nullptr, text);
}

std::string nfkcCasefold(std::string_view text) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* fold = icu::Normalizer2::getNFKCCasefoldInstance(status);
  return normalize(U_SUCCESS(status) ? fold : nullptr, text);
}

std::string confusableSkeleton(std::string_view text) {
  const USpoofChecker* checker = spoofChecker();
  icu::UnicodeString input = fromUtf8(text);
  if (checker == nullptr) return toUtf8(input);
  UErrorCode status = U_ZERO_ERROR;
  icu::UnicodeString skeleton;
  uspoof_getSkeletonUnicodeString(checker, 0, input, skeleton, &status);
  if (U_FAILURE(status)) return toUtf8(input);
  return toUtf8(skeleton);
}

CharKind charKind(char32_t codePoint) {
  auto c = static_cast<UChar32>(codePoint);
  if (u_isUWhiteSpace(c)) return CharKind::kSpace;
  int8_t type = u_charType(c);
  switch (type) {
    case U_UPPERCASE_LETTER:
    case U_LOWERCASE_LETTER:
    case U_TITLECASE_LETTER:
    case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
      return CharKind::kLetter;
    case U_NON_SPACING_MARK:
    case U_ENCLOSING_MARK:
    case U_COMBINING_SPACING_MARK:
      return CharKind::kMark;
    case U_DECIMAL_DIGIT_NUMBER:
    case U_LETTER_NUMBER:
    case U_OTHER_NUMBER:
      return CharKind::kNumber;
    case U_CONTROL_CHAR:
    case U_UNASSIGNED:
    case U_SURROGATE:
      return CharKind::kControl;
    default:
      return CharKind::kOther;
  }
}

bool isDefaultIgnorable(char32_t codePoint) {
  return u_hasBinaryProperty(static_cast<UChar32>(codePoint), UCHAR_DEFAULT_IGNORABLE_CODE_POINT);
}

bool isBlankLooking(char32_t codePoint) {
  if (codePoint == 0x2800 || codePoint == 0xFFFC) return true;
  switch (u_charType(static_cast<UChar32>(codePoint))) {
    case U_FORMAT_CHAR:
    case U_PRIVATE_USE_CHAR:
    case U_UNASSIGNED:
      return true;
    default:
      return false;
  }
}

std::string charName(char32_t codePoint) {
  char buffer[128];
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = u_charName(static_cast<UChar32>(codePoint), U_UNICODE_CHAR_NAME, buffer,
                              sizeof buffer, &status);
  if (U_FAILURE(status) || length <= 0 || length >= static_cast<int32_t>(sizeof buffer)) {
    return {};
  }
  return std::string(buffer, static_cast<size_t>(length));
}

}  // namespace kaja::core::unicode
