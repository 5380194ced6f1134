// config.toml's `[stdio] allow`: read strictly, every mistake with its file and line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/manifest/kaja_config.h"
#include "tests/core/manifest/kaja_config_fixture.h"
#include "tests/support/build_paths.h"
#include "tests/support/temp_dir.h"

namespace kaja::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class KajaConfigStdioTest : public KajaConfigFixture {};

TEST_F(KajaConfigStdioTest, NoTableMeansNoList) {
  auto config = load("[sandbox]\nurl = \"http://127.0.0.1:1\"\nuser = \"a\"\nkey_file = \"k\"\n");
  ASSERT_TRUE(config.has_value()) << config.error().describe();
  EXPECT_FALSE(config->stdioAllow.has_value());
}

TEST_F(KajaConfigStdioTest, ReadsEachEntryWithItsLine) {
  auto config = load(
      "[stdio]\nallow = [\n  \"npx -y @modelcontextprotocol/server-filesystem@2025.8.21 *\",\n"
      "  '/usr/bin/my-server --flag \"a b\"',\n]\n");
  ASSERT_TRUE(config.has_value()) << config.error().describe();
  ASSERT_TRUE(config->stdioAllow.has_value());
  const auto& rules = config->stdioAllow->rules;
  ASSERT_EQ(rules.size(), 2U);
  EXPECT_THAT(rules[0].words,
              ElementsAre("npx", "-y", "@modelcontextprotocol/server-filesystem@2025.8.21"));
  EXPECT_TRUE(rules[0].moreArgs);
  EXPECT_EQ(rules[0].at.line, 3);
  EXPECT_THAT(rules[1].words, ElementsAre("/usr/bin/my-server", "--flag", "a b"));
  EXPECT_FALSE(rules[1].moreArgs);
  EXPECT_EQ(rules[1].at.line, 4);
  EXPECT_EQ(rules[1].at.file, file_);
  EXPECT_EQ(config->stdioAllow->whereToAdd, "allow under [stdio] in " + file_);
}

TEST_F(KajaConfigStdioTest, AnEmptyListIsSetAndAllowsNothing) {
  auto config = load("[stdio]\nallow = []\n");
  ASSERT_TRUE(config.has_value()) << config.error().describe();
  ASSERT_TRUE(config->stdioAllow.has_value());
  EXPECT_TRUE(config->stdioAllow->rules.empty());
  EXPECT_FALSE(config->stdioAllow->allows(
      {"/bin/true"}, [](const std::string&) { return std::optional<std::string>("/bin/true"); }));
}

TEST_F(KajaConfigStdioTest, MistakesNameTheFileAndLine) {
  struct Case {
    std::string text;
    int line;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"stdio = [\"npx\"]\n", 1, "\"stdio\" must be a table"},
      {"[stdio]\n", 1, "needs allow"},
      {"[stdio]\nalow = []\n", 2, "did you mean \"stdio.allow\""},
      {"[stdio]\nallow = []\nextra = 1\n", 3, "\"stdio.extra\""},
      {"[stdio]\nallow = \"npx -y x *\"\n", 2, "must be an array of command lines, not a string"},
      {"[stdio]\nallow = [\n  \"npx -y x\",\n  3,\n]\n", 4, "\"stdio.allow[1]\" must be a command"},
      {"[stdio]\nallow = [\n  \"npx\",\n  [\"npx\"],\n]\n", 4, "not an array"},
      {"[stdio]\nallow = [\"\"]\n", 2, "\"stdio.allow[0]\" is empty"},
      {"[stdio]\nallow = [\n\"   \"]\n", 3, "is empty"},
      {"[stdio]\nallow = [\n\"npx\",\n\"npx * -y\"]\n", 4, "before its last word"},
      {"[stdio]\nallow = [\"npx -y foo*\"]\n", 2, "inside the word"},
      {"[stdio]\nallow = [\"npx\\t-y\"]\n", 2, "control characters"},
      {"[stdio]\nallow = [\"../bin/npx -y\"]\n", 2, "starts with the program"},
      {"[stdio]\nallow = [\"/usr/bin/../../tmp/x\"]\n", 2, "'..'"},
      {"[stdio]\nallow = [\"npx \\\"a\"]\n", 2, "never closed"},
      {"[stdi]\nallow = []\n", 1, "did you mean \"stdio\""},
  };
  for (const auto& item : cases) {
    auto config = load(item.text);
    ASSERT_FALSE(config.has_value()) << "accepted:\n" << item.text;
    EXPECT_EQ(config.error().code, ErrorCode::kInvalidConfig);
    EXPECT_EQ(config.error().context, file_ + ":" + std::to_string(item.line)) << item.text;
    EXPECT_THAT(config.error().message, HasSubstr(item.message)) << item.text;
  }
}

TEST_F(KajaConfigStdioTest, TheReadmeExampleReadsAsDocumented) {
  std::ifstream in(std::string(kaja::test::sourceDir()) + "/README.md");
  std::stringstream readme;
  readme << in.rdbuf();
  const std::string text = readme.str();
  const size_t start = text.find("```toml\n[stdio]\n");
  ASSERT_NE(start, std::string::npos) << "README.md has no [stdio] example";
  const size_t body = start + 8;
  const size_t end = text.find("```", body);
  ASSERT_NE(end, std::string::npos);
  auto config = load(text.substr(body, end - body));
  ASSERT_TRUE(config.has_value()) << config.error().describe();
  ASSERT_TRUE(config->stdioAllow.has_value());
  ASSERT_EQ(config->stdioAllow->rules.size(), 2U);
  EXPECT_TRUE(config->stdioAllow->rules[0].moreArgs);
  EXPECT_FALSE(config->stdioAllow->rules[1].moreArgs);
}

}  // namespace
}  // namespace kaja::core
