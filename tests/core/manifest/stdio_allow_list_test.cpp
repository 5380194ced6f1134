// The stdio allow-list's entries and matching, as an attacker would probe them.
#include "core/manifest/stdio_allow_list.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kaja::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Runner lookup as on a machine whose npx is /usr/bin/npx and which has no bunx.
std::optional<std::string> machine(const std::string& name) {
  if (name == "npx") return "/usr/bin/npx";
  if (name == "node") return "/usr/bin/node";
  return std::nullopt;
}

StdioAllowList listOf(std::initializer_list<std::string_view> entries) {
  StdioAllowList list;
  list.whereToAdd = "allow under [stdio] in /etc/kaja/config.toml";
  for (auto entry : entries) {
    auto rule = parseStdioAllowRule(entry);
    EXPECT_TRUE(rule.has_value()) << entry << ": " << rule.error();
    if (rule) list.rules.push_back(*rule);
  }
  return list;
}

TEST(StdioAllowRuleTest, SplitsOnSpacesAndHonoursDoubleQuotes) {
  auto rule = parseStdioAllowRule(R"(  npx   -y  "a b" "" "say \"hi\"" "c:\\d" back\slash "*" *)");
  ASSERT_TRUE(rule.has_value()) << rule.error();
  EXPECT_THAT(rule->words,
              ElementsAre("npx", "-y", "a b", "", "say \"hi\"", "c:\\d", "back\\slash", "*"));
  EXPECT_TRUE(rule->moreArgs);

  auto exact = parseStdioAllowRule("/usr/bin/my-server --flag");
  ASSERT_TRUE(exact.has_value()) << exact.error();
  EXPECT_THAT(exact->words, ElementsAre("/usr/bin/my-server", "--flag"));
  EXPECT_FALSE(exact->moreArgs);
}

TEST(StdioAllowRuleTest, RefusesEveryAmbiguousEntry) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "is empty"},
      {"    ", "is empty"},
      {"*", "must start with a program"},
      {"npx * -y", "before its last word"},
      {"npx -y foo*", "inside the word \"foo*\""},
      {"npx -y *foo", "inside the word"},
      {"npx -y foo **", "inside the word"},
      {"npx \"-y\"*", "inside the word"},
      {"npx\t-y foo", "control characters"},
      {"npx -y foo\n/bin/sh", "control characters"},
      {"npx \"-y\tfoo\"", "even in quotes"},
      {"npx \"unclosed", "never closed"},
      {R"(npx "a\b")", "only \\\" and \\\\"},
      {"./npx -y foo", "starts with the program \"./npx\""},
      {"bin/npx -y foo", "absolute path"},
      {"/usr/bin/../bin/npx -y foo", "'..'"},
      {"/usr/bin/./npx", "'.'"},
      {"/usr//bin/npx", "absolute path"},
      {"/usr/bin/", "absolute path"},
      {"\"\" -y", "starts with the program \"\""},
  };
  for (const auto& [entry, problem] : cases) {
    auto rule = parseStdioAllowRule(entry);
    ASSERT_FALSE(rule.has_value()) << "accepted: " << entry;
    EXPECT_THAT(rule.error(), HasSubstr(problem)) << entry;
  }
}

TEST(StdioAllowListTest, MatchesTheExecutedArgvWordForWord) {
  const auto list = listOf(
      {"npx -y @modelcontextprotocol/server-filesystem@2025.8.21 *", "/usr/bin/my-server --flag"});
  const std::string pkg = "@modelcontextprotocol/server-filesystem@2025.8.21";
  EXPECT_TRUE(list.allows({"/usr/bin/npx", "-y", pkg}, machine));
  EXPECT_TRUE(list.allows({"/usr/bin/npx", "-y", pkg, "/home/a", "/tmp"}, machine));
  EXPECT_TRUE(list.allows({"/usr/bin/my-server", "--flag"}, machine));

  // A trailing argument without `*`, or one missing.
  EXPECT_FALSE(list.allows({"/usr/bin/my-server", "--flag", "--evil"}, machine));
  EXPECT_FALSE(list.allows({"/usr/bin/my-server"}, machine));
  // The rule's `npx` is the npx kaja finds, never another program by that name.
  EXPECT_FALSE(list.allows({"/tmp/evil/npx", "-y", pkg}, machine));
  EXPECT_FALSE(list.allows({"npx", "-y", pkg}, machine));
  EXPECT_FALSE(list.allows({"/usr/local/bin/npx", "-y", pkg}, machine));
  // ... and an absolute rule is that path, not a spelling of it.
  EXPECT_FALSE(list.allows({"/usr/bin/../bin/my-server", "--flag"}, machine));
  EXPECT_FALSE(list.allows({"/usr//bin/my-server", "--flag"}, machine));
  // Another version, a longer name, a look-alike (Cyrillic 'о' in "modelcontextprotocol").
  EXPECT_FALSE(list.allows({"/usr/bin/npx", "-y", "@modelcontextprotocol/server-filesystem@latest"},
                           machine));
  EXPECT_FALSE(list.allows({"/usr/bin/npx", "-y", pkg + "x"}, machine));
  EXPECT_FALSE(list.allows({"/usr/bin/npx", "-y",
                            "@m\xD0\xBE"
                            "delcontextprotocol/server-filesystem@2025.8.21"},
                           machine));
  // Words are not joined and split again: spaces inside an argument stay inside it.
  EXPECT_FALSE(list.allows({"/usr/bin/my-server --flag"}, machine));
  EXPECT_FALSE(list.allows({"/usr/bin/npx", "-y " + pkg}, machine));
  EXPECT_FALSE(list.allows({"/usr/bin/my-server", "--flag "}, machine));
  EXPECT_FALSE(list.allows({}, machine));
  // Without a way to look names up, a name matches nothing.
  EXPECT_FALSE(list.allows({"/usr/bin/npx", "-y", pkg}, {}));
}

TEST(StdioAllowListTest, AQuotedStarIsALiteralArgument) {
  const auto list = listOf({"/usr/bin/grep \"*\""});
  EXPECT_TRUE(list.allows({"/usr/bin/grep", "*"}, machine));
  EXPECT_FALSE(list.allows({"/usr/bin/grep", "x"}, machine));
  EXPECT_FALSE(list.allows({"/usr/bin/grep", "*", "x"}, machine));
  // An unquoted final `*` allows nothing in place of a rule's own word.
  const auto wide = listOf({"/usr/bin/srv --a *"});
  EXPECT_TRUE(wide.allows({"/usr/bin/srv", "--a", "*"}, machine));
  EXPECT_FALSE(wide.allows({"/usr/bin/srv", "--b", "--a"}, machine));
  EXPECT_FALSE(wide.allows({"/usr/bin/srv"}, machine));
}

TEST(StdioAllowListTest, AnEmptyListAllowsNothing) {
  const StdioAllowList none;
  EXPECT_FALSE(none.allows({"/usr/bin/npx", "-y", "x"}, machine));
}

TEST(StdioAllowListTest, TheRefusalQuotesALineThatAllowsExactlyTheArgv) {
  const auto list = listOf({"/usr/bin/true"});
  const std::vector<std::string> argv = {"/usr/bin/node", "/srv/a b/index.js", "", "say \"hi\"",
                                         "star*",         "back\\slash"};
  EXPECT_FALSE(list.allows(argv, machine));
  const std::string refusal = list.refusal("files", argv);
  const std::string line = formatStdioCommandLine(argv);
  EXPECT_EQ(line, R"(/usr/bin/node "/srv/a b/index.js" "" "say \"hi\"" "star*" back\slash)");
  EXPECT_THAT(refusal, HasSubstr("ability files's command line `" + line + "`"));
  EXPECT_THAT(refusal, HasSubstr("allow under [stdio] in /etc/kaja/config.toml"));
  EXPECT_THAT(refusal, HasSubstr("` *`"));
  EXPECT_EQ(refusal.find('\n'), std::string::npos);
  // Pasting the line into the list allows that argv and no other.
  auto pasted = parseStdioAllowRule(line);
  ASSERT_TRUE(pasted.has_value()) << pasted.error();
  StdioAllowList fixed;
  fixed.rules.push_back(*pasted);
  EXPECT_TRUE(fixed.allows(argv, machine));
  auto longer = argv;
  longer.push_back("x");
  EXPECT_FALSE(fixed.allows(longer, machine));
  // A control character is shown escaped, and no entry can be written to match it.
  const std::string shown = formatStdioCommandLine({"/usr/bin/srv", "a\nb"});
  EXPECT_EQ(shown, R"(/usr/bin/srv "a\x0Ab")");
  EXPECT_FALSE(parseStdioAllowRule(shown).has_value());
}

}  // namespace
}  // namespace kaja::core
