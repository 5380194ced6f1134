// A typo is a usage error with a suggestion, never a refusal: unknown abilities, tools and
// personas, malformed call arguments, and the rules that refusals name (`kaja help rules`).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/policy/refusal.h"
#include "core/policy/rule_guide.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

class TypoErrorsCliTest : public ::testing::Test {
 protected:
  TypoErrorsCliTest() {
    home_ = root_.path() + "/home";
    const std::string script = std::string(kaja::test::sourceDir()) +
                               "/tests/npm/node_modules/@modelcontextprotocol/server-filesystem/"
                               "dist/index.js";
    root_.write("market/abilities/filesystem/mcp.toml",
                "command = \"node\"\nargs = [\"" + script +
                    "\"]\nroots = true\napproval = \"writes\"\npathArgs = [\"path\"]\n");
    root_.write("market/abilities/unlisted/mcp.toml", "command = \"/bin/cat\"\n");
    root_.write("market/personas/default.toml",
                "abilities = [{ name = \"filesystem\", tools = [\"read_text_file\", "
                "\"list_directory\"], roots = [{ path = \"~/ro\", readOnly = true }] }]\n");
    root_.write("market/personas/writer.toml", "abilities = []\n");
    root_.write("home/ro/a.txt", "a");
  }

  testing::CommandResult kaja(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::runCommand(
        argv, {"HOME=" + home_, "XDG_CONFIG_HOME=" + root_.path() + "/config",
               "XDG_DATA_HOME=" + root_.path() + "/data", "PATH=/usr/local/bin:/usr/bin:/bin",
               "KAJA_SHIPPED_MARKETPLACE=" + root_.path() + "/market"});
  }

  // The one stderr line, which must be a sentence.
  static std::string onlyLine(const testing::CommandResult& result) {
    std::string line = result.err;
    while (!line.empty() && line.back() == '\n') line.pop_back();
    EXPECT_EQ(line.find('\n'), std::string::npos) << result.err;
    EXPECT_THAT(line, ::testing::AnyOf(EndsWith("."), EndsWith("?"))) << line;
    return line;
  }

  testing::TempDir root_;
  std::string home_;
};

TEST_F(TypoErrorsCliTest, AMisspelledAbilityIsAUsageErrorWithTheNearestName) {
  auto result = kaja({"call", "filesytem", "read_text_file", "{}"});
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_THAT(onlyLine(result), HasSubstr("no ability named \"filesytem\"; did you mean "
                                          "\"filesystem\"?"));
  auto far = kaja({"call", "zzzzzzzz", "x"});
  EXPECT_EQ(far.exitCode, 2);
  EXPECT_THAT(onlyLine(far), HasSubstr("`kaja abilities` lists them"));
}

TEST_F(TypoErrorsCliTest, AnAbilityThatExistsButIsNotInThePersonaIsARefusalThatSaysHowToEnableIt) {
  auto result = kaja({"call", "unlisted", "x"});
  EXPECT_EQ(result.exitCode, 3);
  EXPECT_THAT(result.err, HasSubstr("kaja: refused: persona \"default\" does not include "
                                    "unlisted; turn it on with `kaja enable unlisted`"));
}

TEST_F(TypoErrorsCliTest, AToolTheServerDoesNotHaveIsAUsageErrorAndAFilteredOneIsARefusal) {
  auto typo = kaja({"call", "filesystem", "read_txt_file", "{}"});
  EXPECT_EQ(typo.exitCode, 2) << typo.err;
  EXPECT_THAT(onlyLine(typo), HasSubstr("filesystem has no tool named \"read_txt_file\"; did "
                                        "you mean \"read_text_file\"?"));
  // write_file exists on the server, but the persona narrows filesystem to two tools.
  auto narrowed =
      kaja({"call", "filesystem", "write_file", R"({"path": "~/ro/a.txt", "content": "x"})"});
  EXPECT_EQ(narrowed.exitCode, 3) << narrowed.err;
  EXPECT_THAT(narrowed.err, HasSubstr("kaja: refused: "));
  EXPECT_THAT(narrowed.err, HasSubstr("(rule K13 persona tools; kaja help rules K13 says more)."));
  EXPECT_EQ(testing::readFile(home_ + "/ro/a.txt"), "a");
}

TEST_F(TypoErrorsCliTest, AnUnknownPersonaSuggestsTheNearestEverywhereItIsNamed) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"tools", "--persona", "writr"},
           {"persona", "use", "writr"},
           {"call", "--persona", "writr", "filesystem", "read_text_file"}}) {
    auto result = kaja(args);
    EXPECT_EQ(result.exitCode, 2) << args[0];
    EXPECT_THAT(onlyLine(result), HasSubstr("there is no persona named \"writr\"; did you mean "
                                            "\"writer\"?"))
        << args[0];
  }
  auto far = kaja({"tools", "--persona", "qqqqqqqq"});
  EXPECT_THAT(onlyLine(far), HasSubstr("`kaja personas` lists them."));
}

TEST_F(TypoErrorsCliTest, AnOptionGivenTwiceIsAUsageErrorRatherThanOneOfThemWinning) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"tools", "--persona", "default", "--persona", "writer"},
           {"tools", "--persona=default", "--persona", "default"},
           {"marketplace", "sync", "m", "--sha256", "aa", "--sha256=bb"}}) {
    auto result = kaja(args);
    EXPECT_EQ(result.exitCode, 2) << args[0];
    EXPECT_THAT(onlyLine(result), HasSubstr(" is given twice; give it once")) << args[0];
  }
  // --env and --header add one more each time: AddCliTest gives --env twice.
}

TEST_F(TypoErrorsCliTest, MalformedArgumentsSayWhereTheParseFailedWithoutEchoingThem) {
  auto result = kaja({"call", "filesystem", "read_text_file",
                      "{\"path\": \"~/ro/a.txt\",\n"
                      "  \"token\": s3cret}"});
  EXPECT_EQ(result.exitCode, 2);
  const std::string line = onlyLine(result);
  EXPECT_THAT(line, HasSubstr("ARGS_JSON: the JSON is not valid at line 2, column 12"));
  // A secret typed into the arguments is not repeated back.
  EXPECT_THAT(line, Not(HasSubstr("s3cret")));
  auto array = kaja({"call", "filesystem", "read_text_file", "[1, 2]"});
  EXPECT_EQ(array.exitCode, 2);
  EXPECT_THAT(onlyLine(array), HasSubstr("ARGS_JSON must be a JSON object, not array"));
}

TEST_F(TypoErrorsCliTest, EveryRuleKajaRefusesByIsExplainedByHelpRules) {
  const std::string_view rules[] = {
      core::policy::rule::kAbilityTools,    core::policy::rule::kPersonaTools,
      core::policy::rule::kReadOnlyPersona, core::policy::rule::kReadOnlyFolder,
      core::policy::rule::kOutsideFolders,  core::policy::rule::kRelativePath,
      core::policy::rule::kUnsafePath,      core::policy::rule::kArguments,
      core::policy::rule::kBackup,          core::policy::rule::kApproval,
      core::policy::rule::kConfirmList,     core::policy::rule::kPromptInjection,
      core::policy::rule::kLocalOnlyArg,    core::policy::rule::kLinkedFile,
      core::policy::rule::kKajaFiles};
  auto all = kaja({"help", "rules"});
  ASSERT_EQ(all.exitCode, 0) << all.err;
  for (auto rule : rules) {
    EXPECT_NE(core::policy::findRuleGuide(rule), nullptr) << rule;
    EXPECT_THAT(all.out, HasSubstr("\n" + std::string(rule) + "\n")) << rule;
  }
  EXPECT_EQ(core::policy::ruleGuides().size(), std::size(rules));

  auto k15 = kaja({"help", "rules", "K15"});
  EXPECT_EQ(k15.exitCode, 0);
  EXPECT_THAT(k15.out, HasSubstr("K15 read-only folder"));
  EXPECT_THAT(k15.out, HasSubstr("K15 outside folders"));
  EXPECT_THAT(k15.out, Not(HasSubstr("K13 persona tools")));

  auto typo = kaja({"help", "rules", "K51"});
  EXPECT_EQ(typo.exitCode, 2);
  EXPECT_THAT(onlyLine(typo), HasSubstr("kaja has no rule named \"K51\""));
  // The man page carries the same list.
  auto man = kaja({"help", "--man"});
  EXPECT_THAT(man.out, HasSubstr(".SH RULES"));
}

TEST_F(TypoErrorsCliTest, MessagesEndInAFullStop) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"tools", "extra", "words"},
                                                                {"personas", "x"},
                                                                {"frobnicate"},
                                                                {"call", "--bogus"},
                                                                {"persona", "use", "a/b"}}) {
    auto result = kaja(args);
    EXPECT_EQ(result.exitCode, 2) << args[0];
    onlyLine(result);
  }
}

}  // namespace
}  // namespace kaja::cli
