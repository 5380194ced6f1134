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

}  // namespace
}  // namespace kaja::core
