// Found by an outside review: a key of 100,000 dotted parts (200 KB of TOML) in any file kaja
// reads crashed it (toml++ nests a table per part and recursed until the stack ran out), and
// took a running `kaja serve` down when such a manifest appeared. kaja now refuses a key of
// more than 128 parts with the file and line, before toml++ reads it; the dots of values,
// strings and comments do not count.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/manifest/toml_value.h"

namespace kaja::core {
namespace {

using ::testing::HasSubstr;

std::string dotted(std::size_t parts) {
  std::string key = "a";
  for (std::size_t i = 1; i < parts; ++i) key += ".a";
  return key;
}

TEST(TomlDepthTest, AKeyOfAHundredThousandPartsIsRefusedWithItsLine) {
  for (const std::string& text : {"command = \"x\"\n" + dotted(100000) + " = 1\n",
                                  "command = \"x\"\n[" + dotted(100000) + "]\n",
                                  "command = \"x\"\n[[" + dotted(100000) + "]]\n",
                                  "command = \"x\"\nt = { b = 1, " + dotted(100000) + " = 2 }\n",
                                  "command = \"x\"\nt = [ { " + dotted(100000) + " = 2 } ]\n",
                                  "command = \"x\"\n\"q\".'r'." + dotted(100000) + " = 1\n"}) {
    auto parsed = parseTomlText(text, "mcp.toml");
    ASSERT_FALSE(parsed) << text.substr(0, 40);
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidConfig);
    EXPECT_THAT(parsed.error().message, HasSubstr("more than 128 dotted parts"));
    EXPECT_EQ(parsed.error().context, "mcp.toml:2") << parsed.error().describe();
  }
}

TEST(TomlDepthTest, KeysUpToTheLimitAndDotsOutsideKeysAreRead) {
  std::string floats = "values = [";
  for (int i = 0; i < 1000; ++i) floats += std::to_string(i) + ".5, ";
  floats += "1.5]\n";
  // The header comes last: the keys before it belong to the root table.
  const std::string text = dotted(128) + " = 1\n" + floats + "s = \"" + std::string(1000, '.') +
                           "\"\nm = '''\n" + std::string(1000, '.') + "\n'''\n# " +
                           std::string(1000, '.') + "\ninline = { k = 1.5, j = [2.5, 3.5] }\n[" +
                           dotted(127) + ".x]\n";
  auto parsed = parseTomlText(text, "ok.toml");
  ASSERT_TRUE(parsed) << parsed.error().describe();
  const TomlValue* values = parsed->find("values");
  ASSERT_NE(values, nullptr);
  EXPECT_EQ(values->items.size(), 1001U);
  EXPECT_FALSE(parseTomlText(dotted(129) + " = 1\n", "one-over.toml"));
}

// Found by the manifest fuzz target (after 5,918,978 executions): an empty inline table
// ("{}") was taken for the start of a key, so the reader thought itself still inside it, and
// the dots of every header after it were added up; 18 short headers then made kaja refuse a
// file it had written itself.
TEST(TomlDepthTest, AnEmptyInlineTableEndsWhereItCloses) {
  for (const std::string& opening :
       {std::string("a = [{ b = [{}] }]\n"), std::string("a = { b = {}, c = { } }\n"),
        std::string("a = [{}, {},]\n")}) {
    std::string text = opening;
    for (int i = 1; i <= 20; ++i) text += "[h." + dotted(static_cast<std::size_t>(i)) + "]\n";
    auto parsed = parseTomlText(text, "ok.toml");
    EXPECT_TRUE(parsed) << opening << parsed.error().describe();
  }
  // The keys inside it are still counted.
  EXPECT_FALSE(parseTomlText("a = [{ " + dotted(129) + " = 1 }]\n", "over.toml"));
  EXPECT_FALSE(parseTomlText("a = [{}]\n" + dotted(129) + " = 1\n", "over.toml"));
}

}  // namespace
}  // namespace kaja::core
