#include "core/policy/text_normalizer.h"

#include <gtest/gtest.h>

namespace kaja::core::policy {
namespace {

TEST(TextNormalizerTest, DecodesUtf8AndReplacesEveryBadByte) {
  EXPECT_EQ(decodeUtf8("a\xC3\xA9\xE2\x80\x8B\xF0\x9D\x90\x80"),
            (std::u32string{U'a', 0xE9, 0x200B, 0x1D400}));
  // Overlong '/', a lone continuation byte, a surrogate and a truncated sequence.
  EXPECT_EQ(decodeUtf8("\xC0\xAF"), (std::u32string{0xFFFD, 0xFFFD}));
  EXPECT_EQ(decodeUtf8("\x80x"), (std::u32string{0xFFFD, U'x'}));
  EXPECT_EQ(decodeUtf8("\xED\xA0\x80"), (std::u32string{0xFFFD, 0xFFFD, 0xFFFD}));
  EXPECT_EQ(decodeUtf8("\xE2\x80"), (std::u32string{0xFFFD, 0xFFFD}));
  EXPECT_EQ(decodeUtf8("\xF4\x90\x80\x80").front(), 0xFFFDu);  // past U+10FFFF
}

TEST(TextNormalizerTest, AppendUtf8RoundTrips) {
  std::string out;
  for (char32_t c : {U'a', char32_t{0xE9}, char32_t{0x200B}, char32_t{0x1D400}}) {
    appendUtf8(out, c);
  }
  EXPECT_EQ(out, "a\xC3\xA9\xE2\x80\x8B\xF0\x9D\x90\x80");
}

TEST(TextNormalizerTest, InvisiblesAreRemovedOrSpaced) {
  std::string text = "ig\u200Bno\u00ADre\u2060 pre\uFEFFvi\u200Dous\u202E";
  EXPECT_EQ(normalizeForScan(text), "ignore previous");
  EXPECT_EQ(normalizeForScan("ignore\u200Bprevious", {InvisibleMode::kSpace}), "ignore previous");
  EXPECT_EQ(normalizeForScan("ab\U000E0041\U000E0020cd"), "abcd");  // tag characters
  EXPECT_TRUE(isInvisible(0x200C));
  EXPECT_TRUE(isInvisible(0x2067));
  EXPECT_FALSE(isInvisible(U' '));
  EXPECT_FALSE(isInvisible(U'\n'));
  EXPECT_FALSE(isInvisible(0xE9));
}

TEST(TextNormalizerTest, FoldsCompatibilityForms) {
  EXPECT_EQ(normalizeForScan("\uFF29\uFF47\uFF4E\uFF4F\uFF52\uFF45\uFF01"),
            "ignore!");                                                  // fullwidth
  EXPECT_EQ(normalizeForScan("\U0001D408\U0001D420\U0001D427"), "ign");  // math bold
  EXPECT_EQ(normalizeForScan("\U0001D4F2\U0001D4F0"), "ig");             // math bold script
  EXPECT_EQ(normalizeForScan("\U0001D7CF\U0001D7F0"), "14");             // math digits
  EXPECT_EQ(normalizeForScan("\uFB01le \uFB02ow"), "file flow");         // ligatures
  EXPECT_EQ(normalizeForScan("\u24D8\u24D6\u24DD"), "ign");              // circled
  EXPECT_EQ(normalizeForScan("x\u00B2 \u2075"), "x2 5");                 // superscripts
  EXPECT_EQ(normalizeForScan("\u210Eello"), "hello");                    // letterlike h
  EXPECT_EQ(normalizeForScan("\u0456gn\u043Er\u0435"), "ignore");        // Cyrillic look-alikes
}

TEST(TextNormalizerTest, StripsAccentsAndCombiningMarks) {
  EXPECT_EQ(normalizeForScan("\u00CFGN\u00D6R\u00C9 pr\u0113v\u012F\u014Fu\u015F"),
            "ignore previous");
  EXPECT_EQ(normalizeForScan("i\u0301gno\u0308re"), "ignore");
  EXPECT_EQ(normalizeForScan("Stra\u00DFe \u0152uvre"), "strasse oeuvre");
  EXPECT_EQ(normalizeForScan("2\u00D73"), "2\u00D73");  // × is no letter and stays
}

TEST(TextNormalizerTest, LowercasesAndCollapsesWhitespace) {
  EXPECT_EQ(normalizeForScan("  IgNoRe \t\n\u00A0 ALL\u3000 "), "ignore all");
  EXPECT_EQ(normalizeForScan("readFileNow", {InvisibleMode::kRemove, true}), "read file now");
  EXPECT_EQ(normalizeForScan("IgNoRe", {InvisibleMode::kRemove, false}), "ignore");
  EXPECT_EQ(normalizeForScan("\u65E5\u672C"), "\u65E5\u672C");  // unknown scripts are kept
}

}  // namespace
}  // namespace kaja::core::policy
