#include "core/util/quote.h"

#include <gtest/gtest.h>

#include <string>

namespace kaja::core {
namespace {

using namespace std::string_literals;

TEST(QuoteTest, PlainTextIsOnlyQuoted) {
  EXPECT_EQ(quoteForMessage("~/notes/Café.md"), "\"~/notes/Café.md\"");
  EXPECT_EQ(quoteForMessage(""), "\"\"");
  EXPECT_EQ(quoteForMessage("日本 ⚠️"), "\"日本 ⚠️\"");  // a variation selector is kept
}

TEST(QuoteTest, ControlCharactersBecomeEscapesOnOneLine) {
  EXPECT_EQ(quoteForMessage("a\nb\r\tc"), R"("a\nb\r\tc")");
  EXPECT_EQ(quoteForMessage("a\0b"s), R"("a\u0000b")");
  EXPECT_EQ(quoteForMessage("\x1b[31mred\x1b]0;title\x07"),
            R"("\u001b[31mred\u001b]0;title\u0007")");
  EXPECT_EQ(quoteForMessage("x\x7fy"), R"("x\u007fy")");
  EXPECT_EQ(quoteForMessage("\u0085\u009b2J"), R"("\u0085\u009b2J")");  // C1 NEL and CSI
  EXPECT_EQ(quoteForMessage("a\u2028b\u2029"), R"("a\u2028b\u2029")");
  for (const std::string& text : {"a\nb"s, "\r"s, "\0"s, "\u2028"s, "\x1b"s, "\u0085"s}) {
    std::string quoted = quoteForMessage(text);
    EXPECT_EQ(quoted.find_first_of("\n\r\x1b"s + '\0'), std::string::npos) << quoted;
  }
}

TEST(QuoteTest, InvisibleAndBidiCharactersAreShown) {
  EXPECT_EQ(quoteForMessage("rw\u202Etxt.exe"), R"("rw\u202etxt.exe")");
  EXPECT_EQ(quoteForMessage("a\u200Bb\u2066c\u00ADd"), R"("a\u200bb\u2066c\u00add")");
  EXPECT_EQ(quoteForMessage("x\U000E0041"), R"("x\U000e0041")");
}

TEST(QuoteTest, QuotesBackslashesAndBadBytesCannotForgeEscapes) {
  EXPECT_EQ(quoteForMessage(R"(say "hi")"), R"("say \"hi\"")");
  EXPECT_EQ(quoteForMessage(R"(C:\n)"), R"("C:\\n")");  // not a newline
  EXPECT_EQ(quoteForMessage("a\xff\xc3"), R"("a\xff\xc3")");
  EXPECT_EQ(quoteForMessage("\xed\xa0\x80"), R"("\xed\xa0\x80")");  // encoded surrogate
  EXPECT_EQ(quoteForMessage("\xc0\xaf"), R"("\xc0\xaf")");          // overlong '/'
}

TEST(QuoteTest, TerminalTextKeepsLinesAndTabsOnly) {
  EXPECT_EQ(escapeForTerminal("line 1\n\tline 2\\n"), "line 1\n\tline 2\\n");
  EXPECT_EQ(escapeForTerminal("ok\r\x1b[2Kfake"), R"(ok\r\u001b[2Kfake)");
  EXPECT_EQ(escapeForTerminal("\x1b]8;;http://x\x1b\\link"), R"(\u001b]8;;http://x\u001b\link)");
  EXPECT_EQ(escapeForTerminal("\x9b"
                              "31m"),
            R"(\x9b31m)");  // a raw 8-bit CSI byte
  EXPECT_EQ(escapeForTerminal("back\bspace"), R"(back\u0008space)");
}

}  // namespace
}  // namespace kaja::core
