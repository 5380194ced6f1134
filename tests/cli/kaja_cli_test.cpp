// End-to-end tests of the kaja binary on a temporary config and data dir.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

class KajaCliTest : public ::testing::Test {
 protected:
  KajaCliTest() {
    home_ = root_.path() + "/home";
    config_ = root_.path() + "/config";
    data_ = root_.path() + "/data";
    // A PATH of stubs only: nothing from the machine decides what the runners are.
    stubs_ = root_.path() + "/stubs";
    root_.writeScript("stubs/bunx", "exit 0");
    root_.writeScript("stubs/node", "exit 0");
    root_.writeScript("stubs/docker", "exit 1");
  }
  testing::CommandResult kaja(const std::vector<std::string>& args, const std::string& input = {}) {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::runCommand(argv, env(), input);
  }
  std::vector<std::string> env() const {
    return {"HOME=" + home_, "XDG_CONFIG_HOME=" + config_, "XDG_DATA_HOME=" + data_,
            "PATH=" + stubs_,
            // Tools folder of the source tree's bun must not be found by accident here.
            "KAJA_SHIPPED_MARKETPLACE=" + std::string(kaja::test::sourceDir()) + "/marketplace",
            "NO_COLOR=1"};
  }
  static json byName(const json& rows, const std::string& name) {
    for (const auto& row : rows) {
      if (row["name"] == name) return row;
    }
    return json();
  }
  std::string userAbility(const std::string& name) const {
    return "config/kaja/marketplace/abilities/" + name + "/mcp.toml";
  }

  testing::TempDir root_;
  std::string home_, config_, data_, stubs_;
};

TEST_F(KajaCliTest, AbilitiesJsonListsTheSixShippedAbilities) {
  auto result = kaja({"abilities", "--json"});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  json rows = json::parse(result.out);
  ASSERT_EQ(rows.size(), 6u);
  for (const auto& row : rows) {
    for (const char* key :
         {"name", "transport", "state", "reason", "runner", "runs", "description"}) {
      EXPECT_TRUE(row.contains(key)) << row.dump() << " lacks " << key;
    }
  }
  json fs = byName(rows, "filesystem");
  EXPECT_EQ(fs["state"], "on");
  EXPECT_EQ(fs["runner"], "bunx");
  EXPECT_EQ(fs["transport"], "stdio");
  EXPECT_THAT(fs["runs"].get<std::string>(), HasSubstr("@modelcontextprotocol/server-filesystem@"));

  json ctx = byName(rows, "context7");
  ASSERT_EQ(ctx["tools"].size(), 2u);
  EXPECT_EQ(ctx["tools"][0]["name"], "resolve-library-id");
  EXPECT_TRUE(ctx["tools"][0]["description"].is_string());
  EXPECT_EQ(ctx["policy"]["keyless"], true);
  EXPECT_EQ(ctx["policy"]["approval"], "never");
  EXPECT_EQ(fs["policy"]["localOnly"], true);
  EXPECT_EQ(ctx["runner"], "remote");
  EXPECT_EQ(ctx["state"], "on");  // keyless
  EXPECT_EQ(ctx["runs"], "https://mcp.context7.com/mcp");

  json geo = byName(rows, "geo-service");
  EXPECT_EQ(geo["state"], "off");
  EXPECT_THAT(geo["reason"].get<std::string>(), HasSubstr("kaja key set geo-service"));

  json time = byName(rows, "time");
  EXPECT_EQ(time["state"], "left-out");
  EXPECT_TRUE(time["runner"].is_null());
  EXPECT_THAT(time["reason"].get<std::string>(), HasSubstr("uv (for uvx) or pipx"));
}

TEST_F(KajaCliTest, BrokenManifestsAreListedAndTheRestStillLoad) {
  root_.write(userAbility("typo"), "command = \"/bin/cat\"\naproval = \"never\"\n");
  root_.write(userAbility("nourl"), "transport = \"http\"\n");
  root_.write(userAbility("bad.name"), "command = \"/bin/cat\"\n");
  root_.write(userAbility("mine"), "description = \"my server\"\ncommand = \"/bin/cat\"\n");
  auto result = kaja({"abilities", "--json"});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  json rows = json::parse(result.out);
  EXPECT_EQ(rows.size(), 10u);
  json typo = byName(rows, "typo");
  EXPECT_EQ(typo["state"], "broken");
  EXPECT_THAT(typo["reason"].get<std::string>(), HasSubstr("typo/mcp.toml:2"));
  EXPECT_THAT(typo["reason"].get<std::string>(), HasSubstr("did you mean \"approval\"?"));
  EXPECT_EQ(byName(rows, "nourl")["state"], "broken");
  EXPECT_EQ(byName(rows, "bad.name")["state"], "broken");
  json mine = byName(rows, "mine");
  EXPECT_EQ(mine["state"], "on");
  EXPECT_EQ(mine["runner"], "command");
  EXPECT_EQ(mine["runs"], "/bin/cat");
  EXPECT_EQ(mine["source"], "user");
  EXPECT_EQ(byName(rows, "filesystem")["state"], "on");

  // The table shows the same, one line per error, within 100 columns.
  auto table = kaja({"abilities"});
  ASSERT_EQ(table.exitCode, 0);
  EXPECT_THAT(table.out, HasSubstr("broken"));
  size_t start = 0;
  while (start < table.out.size()) {
    size_t end = table.out.find('\n', start);
    std::string line = table.out.substr(start, end - start);
    size_t columns = 0;
    for (unsigned char c : line) columns += (c & 0xC0) != 0x80;
    EXPECT_LE(columns, 100u) << line;
    start = end + 1;
  }
}

// A FIFO where kaja keeps one of its files (put there by mistake or by another program) got
// a blocking open, which hung every command until someone wrote to it. Each is now refused.
TEST_F(KajaCliTest, AFifoWhereKajaKeepsAFileIsRefusedNotWaitedOn) {
  const auto run = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    testing::RunOptions options;
    options.timeoutSeconds = 20;
    return testing::runCommandWith(argv, env(), options);
  };
  const std::string personas = config_ + "/kaja/marketplace/personas";
  ASSERT_EQ(::system(("mkdir -p " + personas).c_str()), 0);
  ASSERT_EQ(::mkfifo((personas + "/pipe.toml").c_str(), 0600), 0);
  auto listed = run({"personas", "--json"});
  ASSERT_FALSE(listed.timedOut) << "kaja personas waited on a FIFO";
  EXPECT_THAT(listed.out + listed.err, HasSubstr("pipe.toml"));
  EXPECT_THAT(listed.out + listed.err, HasSubstr("not a regular file"));
  auto abilities = run({"abilities", "--json"});  // a persona it does not use
  ASSERT_FALSE(abilities.timedOut);
  EXPECT_EQ(abilities.exitCode, 0) << abilities.err;
  ::unlink((personas + "/pipe.toml").c_str());

  for (const std::string file : {"config.toml", "secrets.toml"}) {
    ASSERT_EQ(::mkfifo((config_ + "/kaja/" + file).c_str(), 0600), 0);
    auto result = run({"abilities", "--json"});
    ASSERT_FALSE(result.timedOut) << "kaja abilities waited on a FIFO named " << file;
    EXPECT_THAT(result.out + result.err, HasSubstr(file));
    ::unlink((config_ + "/kaja/" + file).c_str());
  }
}

// An outside review got "persona does not include num" from call and "has no ability" from
// tools for an ability whose manifest did not load; the manifest is what needs fixing.
TEST_F(KajaCliTest, CallAndToolsNameABrokenManifest) {
  root_.write(userAbility("broke"), "command = \"/bin/cat\"\nargs = [\"\\udb40\"]\n");
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"call", "broke", "echo", "{}"}, {"tools", "broke"}}) {
    auto result = kaja(args);
    EXPECT_EQ(result.exitCode, 2) << args.front() << ": " << result.err;
    EXPECT_THAT(result.err, HasSubstr("ability \"broke\" is broken")) << args.front();
    EXPECT_THAT(result.err, HasSubstr("broke/mcp.toml")) << args.front();
    EXPECT_THAT(result.err, Not(HasSubstr("does not include"))) << args.front();
  }
}

TEST_F(KajaCliTest, UserAbilityReplacesShippedOne) {
  root_.write(userAbility("time"), "command = \"/bin/cat\"\n");
  auto result = kaja({"abilities", "--json"});
  json time = byName(json::parse(result.out), "time");
  EXPECT_EQ(time["state"], "on");
  EXPECT_EQ(time["runner"], "command");
  EXPECT_EQ(time["source"], "user");
}

TEST_F(KajaCliTest, KeySetFromStdinTurnsAbilityOnWithoutLeakingIt) {
  const std::string key = "AIzaTEST-key-0123456789";
  auto set = kaja({"key", "set", "geo-service"}, key + "\n");
  ASSERT_EQ(set.exitCode, 0) << set.err;
  EXPECT_THAT(set.err, Not(HasSubstr(key)));
  std::string secrets = config_ + "/kaja/secrets.toml";
  struct stat info {};
  ASSERT_EQ(::stat(secrets.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_THAT(testing::readFile(secrets), HasSubstr(key));

  auto listed = kaja({"abilities", "--json"});
  EXPECT_THAT(listed.out, Not(HasSubstr(key)));
  json geo = byName(json::parse(listed.out), "geo-service");
  EXPECT_EQ(geo["state"], "on");
  EXPECT_THAT(geo["runs"].get<std::string>(), HasSubstr("GOOGLE_MAPS_API_KEY=…"));

  auto keys = kaja({"key", "list", "--json"});
  EXPECT_THAT(keys.out, Not(HasSubstr(key)));
  EXPECT_THAT(keys.out, HasSubstr("\"stored\": true"));

  auto removed = kaja({"key", "rm", "geo-service"});
  ASSERT_EQ(removed.exitCode, 0) << removed.err;
  EXPECT_THAT(testing::readFile(secrets), Not(HasSubstr(key)));
  EXPECT_EQ(byName(json::parse(kaja({"abilities", "--json"}).out), "geo-service")["state"], "off");
}

TEST_F(KajaCliTest, KeySetRefusesBadInputAndUnknownAbility) {
  EXPECT_EQ(kaja({"key", "set", "geo-service"}, "").exitCode, 2);
  EXPECT_EQ(kaja({"key", "set", "geo-service"}, "a\tb").exitCode, 2);
  auto unknown = kaja({"key", "set", "no-such-ability"}, "k");
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_THAT(unknown.err, HasSubstr("no ability named \"no-such-ability\""));
  EXPECT_EQ(kaja({"key", "set", "../etc"}, "k").exitCode, 2);
  struct stat info {};
  EXPECT_NE(::stat((config_ + "/kaja/secrets.toml").c_str(), &info), 0);
}

TEST_F(KajaCliTest, LooseSecretsFileIsReportedWithFix) {
  std::string secrets = root_.write("config/kaja/secrets.toml",
                                    "[abilities.geo-service]\n"
                                    "api_key = \"zzz\"\n");
  ::chmod(secrets.c_str(), 0644);
  auto result = kaja({"abilities"});
  EXPECT_EQ(result.exitCode, 0);
  EXPECT_THAT(result.err, HasSubstr("chmod 600"));
}

TEST_F(KajaCliTest, ConfigPathsFollowXdg) {
  auto result = kaja({"config", "paths", "--json"});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  json paths = json::parse(result.out);
  EXPECT_EQ(paths["config"], config_ + "/kaja");
  EXPECT_EQ(paths["data"], data_ + "/kaja");
  EXPECT_EQ(paths["secrets"], config_ + "/kaja/secrets.toml");
  EXPECT_EQ(paths["backups"], data_ + "/kaja/backups");
}

TEST_F(KajaCliTest, PersonasListAndSwitch) {
  auto listed = kaja({"personas", "--json"});
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  json personas = json::parse(listed.out);
  json def = byName(personas, "default");
  json writer = byName(personas, "writer");
  EXPECT_EQ(def["active"], true);
  EXPECT_EQ(writer["active"], false);
  bool sawReadOnly = false;
  for (const auto& entry : writer["abilities"]) {
    for (const auto& root : entry["roots"]) sawReadOnly |= root["readOnly"].get<bool>();
  }
  EXPECT_TRUE(sawReadOnly);

  root_.write("home/notes/a.md", "x");
  auto use = kaja({"persona", "use", "writer"});
  ASSERT_EQ(use.exitCode, 0) << use.err;
  EXPECT_THAT(use.err, HasSubstr("~/projects/site does not exist"));
  EXPECT_EQ(byName(json::parse(kaja({"personas", "--json"}).out), "writer")["active"], true);

  auto unknown = kaja({"persona", "use", "nobody"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_THAT(unknown.err, HasSubstr("no persona named \"nobody\""));
  EXPECT_EQ(byName(json::parse(kaja({"personas", "--json"}).out), "writer")["active"], true);

  root_.write("config/kaja/marketplace/personas/mine.toml", "abilities = [\"ghost\"]\n");
  json mine = byName(json::parse(kaja({"personas", "--json"}).out), "mine");
  EXPECT_EQ(mine["source"], "user");
  ASSERT_EQ(mine["warnings"].size(), 1u);
  EXPECT_THAT(mine["warnings"][0].get<std::string>(), HasSubstr("no such ability"));
}

TEST_F(KajaCliTest, UsageErrorsAreOneLineWithExitCode2) {
  auto unknown = kaja({"abilites"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_THAT(unknown.err, HasSubstr("kaja: error: unknown command \"abilites\"; did you mean "
                                     "\"abilities\"?"));
  auto flag = kaja({"abilities", "--jsn"});
  EXPECT_EQ(flag.exitCode, 2);
  EXPECT_THAT(flag.err, HasSubstr("did you mean --json?"));
  auto help = kaja({"--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_THAT(help.out, HasSubstr("Exit codes:"));
  auto sub = kaja({"abilities", "--help"});
  EXPECT_EQ(sub.exitCode, 0);
  EXPECT_THAT(sub.out, HasSubstr("left-out"));
}

}  // namespace
}  // namespace kaja::cli
