// `kaja doctor` end to end on a temporary marketplace of real and broken servers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

std::string npmScript(const std::string& package) {
  return std::string(KAJA_SOURCE_DIR) + "/tests/npm/node_modules/@modelcontextprotocol/" + package +
         "/dist/index.js";
}

class DoctorCliTest : public ::testing::Test {
 protected:
  DoctorCliTest() {
    market_ = root_.path() + "/market";
    root_.write("market/abilities/everything/mcp.toml",
                "command = \"node\"\nargs = [\"" + npmScript("server-everything") +
                    "\", \"stdio\"]\ntools = [\"echo\", \"get-sum\"]\n");
    root_.write("market/abilities/files/mcp.toml",
                "command = \"node\"\nargs = [\"" + npmScript("server-filesystem") +
                    "\"]\nroots = true\npathArgs = [\"path\"]\n");
    root_.write("home/notes/hello.txt", "hi");
    root_.write("market/personas/default.toml",
                "abilities = [{ name = \"files\", roots = [\"~/notes\", \"~/gone\"] }]\n");
  }
  json doctor(std::vector<std::string> extra, int& exitCode) {
    std::vector<std::string> argv = {std::string(KAJA_BIN_DIR) + "/kaja", "doctor", "--json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto result = testing::runCommand(
        argv, {"HOME=" + root_.path() + "/home", "XDG_CONFIG_HOME=" + root_.path() + "/config",
               "XDG_DATA_HOME=" + root_.path() + "/data", "PATH=/usr/local/bin:/usr/bin:/bin",
               "KAJA_SHIPPED_MARKETPLACE=" + market_});
    exitCode = result.exitCode;
    stderr_ = result.err;
    return json::parse(result.out, nullptr, false);
  }
  static json row(const json& report, const std::string& name) {
    for (const auto& item : report["abilities"]) {
      if (item["name"] == name) return item;
    }
    return json();
  }
  testing::TempDir root_;
  std::string market_;
  std::string stderr_;
};

TEST_F(DoctorCliTest, ReportsEveryAbilityAndFailsOnlyForBrokenOnes) {
  root_.write("market/abilities/crashes/mcp.toml",
              "command = \"/bin/sh\"\nargs = [\"-c\", \"echo bad config >&2; exit 3\"]\n");
  root_.write("market/abilities/silent/mcp.toml", "command = \"/bin/sleep\"\nargs = [\"600\"]\n");
  root_.write("market/abilities/absent/mcp.toml", "command = \"kaja-no-such-program\"\n");
  root_.write("market/abilities/keyed/mcp.toml",
              "command = \"/bin/cat\"\nauth = { type = \"apiKey\", in = \"env\", name = \"K\" }\n");
  root_.write("market/abilities/typo/mcp.toml", "comand = \"/bin/cat\"\n");

  int exitCode = -1;
  json report = doctor({"--timeout", "4", "--verbose"}, exitCode);
  ASSERT_TRUE(report.is_object()) << stderr_;
  EXPECT_EQ(exitCode, 1);
  EXPECT_EQ(report["ok"], false);
  EXPECT_EQ(report["abilities"].size(), 7u);

  json everything = row(report, "everything");
  EXPECT_EQ(everything["state"], "ok");
  EXPECT_GT(everything["tools"].get<int>(), 5);
  EXPECT_EQ(everything["offered"], json({"echo", "get-sum"}));
  EXPECT_GT(everything["schemaChars"].get<int>(), 50);
  EXPECT_GE(everything["ms"].get<int>(), 0);

  json files = row(report, "files");
  EXPECT_EQ(files["state"], "ok");
  EXPECT_THAT(files["hint"].get<std::string>(), HasSubstr("~/gone"));

  json crashes = row(report, "crashes");
  EXPECT_EQ(crashes["state"], "failed");
  EXPECT_THAT(crashes["stderr"].get<std::string>(), HasSubstr("bad config"));
  EXPECT_FALSE(crashes["error"].is_null());

  json silent = row(report, "silent");
  EXPECT_EQ(silent["state"], "failed");
  EXPECT_THAT(silent["error"].get<std::string>(), HasSubstr("did not answer within 4 s"));

  json absent = row(report, "absent");
  EXPECT_EQ(absent["state"], "left-out");
  EXPECT_THAT(absent["hint"].get<std::string>(), HasSubstr("kaja-no-such-program"));

  json keyed = row(report, "keyed");
  EXPECT_EQ(keyed["state"], "off");
  EXPECT_THAT(keyed["hint"].get<std::string>(), HasSubstr("kaja key set keyed"));

  json typo = row(report, "typo");
  EXPECT_EQ(typo["state"], "failed");
  EXPECT_THAT(typo["error"].get<std::string>(), HasSubstr("did you mean \"command\"?"));
}

TEST_F(DoctorCliTest, AllGoodExitsZeroAndNamesRootsServersWithoutFolders) {
  root_.write("market/personas/default.toml", "abilities = [\"everything\"]\n");
  int exitCode = -1;
  json report = doctor({}, exitCode);
  ASSERT_TRUE(report.is_object()) << stderr_;
  EXPECT_EQ(exitCode, 0) << report.dump(2);
  EXPECT_EQ(report["ok"], true);
  json files = row(report, "files");
  EXPECT_EQ(files["state"], "ok");
  EXPECT_THAT(files["hint"].get<std::string>(), HasSubstr("no persona gives it folders"));
}

TEST_F(DoctorCliTest, NamedAbilitiesOnlyAndUnknownNameIsUsageError) {
  int exitCode = -1;
  json report = doctor({"everything"}, exitCode);
  EXPECT_EQ(exitCode, 0);
  EXPECT_EQ(report["abilities"].size(), 1u);
  doctor({"nope"}, exitCode);
  EXPECT_EQ(exitCode, 2);
  EXPECT_THAT(stderr_, HasSubstr("no ability named \"nope\""));
  doctor({"--timeout", "soon"}, exitCode);
  EXPECT_EQ(exitCode, 2);
}

TEST_F(DoctorCliTest, WarnsWhenAPersonaOffersTooManyTools) {
  root_.write(
      "market/abilities/everything/mcp.toml",
      "command = \"node\"\nargs = [\"" + npmScript("server-everything") + "\", \"stdio\"]\n");
  for (int i = 0; i < 4; ++i) {
    root_.write(
        "market/abilities/copy" + std::to_string(i) + "/mcp.toml",
        "command = \"node\"\nargs = [\"" + npmScript("server-everything") + "\", \"stdio\"]\n");
  }
  root_.write("market/personas/big.toml",
              "abilities = [\"everything\", \"copy0\", \"copy1\", \"copy2\", \"copy3\"]\n");
  int exitCode = -1;
  json report = doctor({}, exitCode);
  ASSERT_TRUE(report.is_object()) << stderr_;
  ASSERT_EQ(report["warnings"].size(), 1u) << report["warnings"].dump();
  EXPECT_THAT(report["warnings"][0].get<std::string>(), HasSubstr("persona \"big\" offers"));
}

TEST_F(DoctorCliTest, ServersCheapLastTimeStartAtLowerPriority) {
  // `nice` prints the server's niceness to stderr, which --json --verbose shows.
  root_.write("market/abilities/everything/mcp.toml",
              "command = \"/bin/sh\"\nargs = [\"-c\", \"echo niceness=$(nice) >&2; exec node " +
                  npmScript("server-everything") + " stdio\"]\n");
  root_.write("data/kaja/connect-costs.json", "{\"everything\": 100, \"files\": 9000}");
  int exitCode = -1;
  json report = doctor({"--verbose"}, exitCode);
  ASSERT_TRUE(report.is_object()) << stderr_;
  EXPECT_EQ(exitCode, 0) << report.dump(2);
  json everything = row(report, "everything");
  json files = row(report, "files");
  EXPECT_EQ(everything["lowPriority"], true);
  EXPECT_EQ(files["lowPriority"], false);
  EXPECT_THAT(everything["stderr"].get<std::string>(), HasSubstr("niceness=10"));

  // What each used this time replaces what was remembered.
  json remembered = json::parse(testing::readFile(root_.path() + "/data/kaja/connect-costs.json"),
                                nullptr, false);
  ASSERT_TRUE(remembered.is_object());
  EXPECT_EQ(remembered["files"], files["cpuMs"]);
  EXPECT_EQ(remembered["everything"], everything["cpuMs"]);
  // A node server cannot start on less than 10 ms of CPU.
  EXPECT_GT(files["cpuMs"].get<long>(), 10);
  EXPECT_LT(files["cpuMs"].get<long>(), 9000);

  // The table marks the slowed row's time and says why under it.
  root_.write("data/kaja/connect-costs.json", "{\"everything\": 100, \"files\": 9000}");
  auto table = testing::runCommand(
      {std::string(KAJA_BIN_DIR) + "/kaja", "doctor"},
      {"HOME=" + root_.path() + "/home", "XDG_CONFIG_HOME=" + root_.path() + "/config",
       "XDG_DATA_HOME=" + root_.path() + "/data", "PATH=/usr/local/bin:/usr/bin:/bin",
       "KAJA_SHIPPED_MARKETPLACE=" + market_, "NO_COLOR=1"});
  EXPECT_THAT(table.out, ::testing::MatchesRegex("(.|\n)*everything +ok +[0-9/]+ +[0-9]+ "
                                                 "ms\\*(.|\n)*"));
  EXPECT_THAT(table.out, HasSubstr("\n* quick last time, so started at lower CPU priority"));

  // Named alone, nothing is slowed.
  report = doctor({"everything", "--verbose"}, exitCode);
  EXPECT_EQ(row(report, "everything")["lowPriority"], false);
}

}  // namespace
}  // namespace kaja::cli
