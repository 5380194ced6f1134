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

TEST(TextNormalizerTest, InvisiblesAreRemovedOrMarked) {
  std::string text = "ig\u200Bno\u00ADre\u2060 pre\uFEFFvi\u200Dous\u202E";
  EXPECT_EQ(normalizeForScan(text), "ignore previous");
  // One mark per run, and none next to a space, at either end or where only marks and what
  // folds to nothing stood.
  const std::string m(1, kWordBreakMark);
  const NormalizeOptions marked{InvisibleMode::kMark};
  EXPECT_EQ(normalizeForScan(text, marked), "ig" + m + "no" + m + "re pre" + m + "vi" + m + "ous");
  EXPECT_EQ(normalizeForScan("\u200Bi\u200C\u200Dg\u200B\u0301\u2060n \u200B", marked),
            "i" + m + "g" + m + "n");
  // U+001F is itself invisible: input spelling it is read as one more invisible character.
  EXPECT_EQ(normalizeForScan("a" + m + "\x01" + "b", marked), "a" + m + "b");
  EXPECT_EQ(normalizeForScan("a" + m + "\x01" + "b"), "ab");
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

TEST(TextNormalizerTest, FoldsLookAlikesOutsideAnyTable) {
  EXPECT_EQ(normalizeForScan("I\u0261nore"), "ignore");  // U+0261 script g
  EXPECT_EQ(normalizeForScan("y\u0585ur"), "your");      // U+0585 Armenian o
  EXPECT_EQ(normalizeForScan("\u0251ll"), "all");        // U+0251 Latin alpha
  EXPECT_EQ(normalizeForScan("\u057Dser"), "user");      // U+057D Armenian se
  EXPECT_EQ(normalizeForScan("\u2C9Fbey"), "obey");      // U+2C9F Coptic o
  EXPECT_EQ(normalizeForScan("\uA4F2GNORE"), "lgnore");  // Lisu I reads l, as I does
  EXPECT_EQ(normalizeForScan("\u026A\u0262\u0274\u1D0F\u0280\u1D07"), "ignore");  // small caps
  EXPECT_EQ(normalizeForScan("\u029C\u026A\u1D05\u1D07 \u029F\u0299"), "hide lb");
  EXPECT_EQ(normalizeForScan("p\u027Eompt"), "prompt");  // r with fishhook
  EXPECT_EQ(normalizeForScan("\u00DEe \u00F0og \u0142ist \u00F8ne \u0111one"),
            "the dog list one done");
}

TEST(TextNormalizerTest, FoldsPunctuationLookAlikesAndKeepsOtherSeparators) {
  EXPECT_EQ(normalizeForScan("Don\u2019t"), "don't");
  EXPECT_EQ(normalizeForScan("Don\u02BCt"), "don't");  // a modifier letter, not punctuation
  EXPECT_EQ(normalizeForScan("a\u2012b\u2010c"), "a-b-c");
  EXPECT_EQ(normalizeForScan("~\u2215.ssh"), "~/.ssh");
  EXPECT_EQ(normalizeForScan("<\u2223im"), "<|im");
  // Separators that look like nothing ASCII stay, and the scanner breaks words on them.
  EXPECT_EQ(normalizeForScan("a\u00B7b"), "a\u00B7b");
  // One that draws nothing at all (braille blank) is invisible, like a zero-width space:
  // kept, it would split a word the reader sees whole.
  EXPECT_EQ(normalizeForScan("a\u2800b"), "ab");
  EXPECT_EQ(normalizeForScan("a\U00013430b\uFFF9c\uE000d"), "abcd");
}

TEST(TextNormalizerTest, StripInvisibleKeepsVisibleText) {
  EXPECT_EQ(stripInvisible("Re\u200Bturns \u2066data\u2069\u0007 \u00ADok\U000E0041"),
            "Returns data ok");
  EXPECT_EQ(stripInvisible("line\nnext\ttab \u00E9\u65E5"), "line\nnext\ttab \u00E9\u65E5");
  EXPECT_EQ(stripInvisible("a\x1b[31mb"), "a[31mb");
  EXPECT_EQ(stripInvisible("bad\xFF"), "bad\uFFFD");
}

TEST(TextNormalizerTest, HiddenTagTextIsReadOutButFlagsAreNot) {
  std::string tags;
  for (char c : std::string("Hi there")) appendUtf8(tags, 0xE0000 + static_cast<char32_t>(c));
  EXPECT_EQ(hiddenTagText("ok" + tags + "."), "Hi there ");
  EXPECT_EQ(hiddenTagText("plain"), "");
  // England's flag: U+1F3F4, tag letters "gbeng", CANCEL TAG.
  std::string england = "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F";
  EXPECT_EQ(hiddenTagText("Go " + england), "");
}

}  // namespace
}  // namespace kaja::core::policy
