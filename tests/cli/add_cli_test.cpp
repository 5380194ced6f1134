// `kaja add`, `kaja add-json`, `kaja get` and `kaja remove` end to end: each form lands
// in the user's marketplace and `kaja abilities` runs it; secrets go to the secrets file;
// bad input leaves every file as it was.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/manifest/ability_loader.h"
#include "tests/cli/cli_edit_fixture.h"
#include "tests/core/mcp/http_test_servers.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

class AddCliTest : public ::testing::Test, public testing::CliEditFixture {
 protected:
  json abilityRow(const std::string& name) {
    auto listed = kaja({"abilities", "--json"});
    EXPECT_EQ(listed.exitCode, 0) << listed.err;
    for (const auto& row : json::parse(listed.out)) {
      if (row["name"] == name) return row;
    }
    return nullptr;
  }

  // Runs `args`, which must be refused with one sentence and change no file.
  void expectRefusedUnchanged(const std::vector<std::string>& args, const std::string& words) {
    auto before = snapshot();
    auto result = kaja(args);
    EXPECT_EQ(result.exitCode, 2) << args[0] << ": " << result.err;
    EXPECT_THAT(result.err, HasSubstr(words));
    EXPECT_THAT(result.err, ::testing::StartsWith("kaja: error: "));
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_TRUE(result.err.ends_with(".\n") || result.err.ends_with("?\n")) << result.err;
    EXPECT_EQ(snapshot(), before) << "files changed by: " << result.err;
  }
};

TEST_F(AddCliTest, CommandFormRunsWithItsCommandAndEnv) {
  auto added = kaja({"add", "mine", "--env", "LOG_LEVEL=debug", "--", "/bin/cat", "-u"});
  ASSERT_EQ(added.exitCode, 0) << added.err;
  json row = abilityRow("mine");
  ASSERT_FALSE(row.is_null());
  EXPECT_EQ(row["source"], "user");
  EXPECT_EQ(row["state"], "on");
  EXPECT_EQ(row["runner"], "command");
  EXPECT_THAT(row["runs"].get<std::string>(), HasSubstr("/bin/cat -u"));
  EXPECT_THAT(row["runs"].get<std::string>(), HasSubstr("LOG_LEVEL"));
  EXPECT_EQ(row["manifest"], manifest("mine"));
  auto loaded = core::loadAbility(userMarket() + "/abilities/mine");
  ASSERT_TRUE(loaded) << loaded.error().describe();
  EXPECT_EQ(loaded->env.at("LOG_LEVEL"), "debug");
  // Nothing staged is left next to it.
  for (const auto& entry : fs::directory_iterator(userMarket() + "/abilities")) {
    EXPECT_EQ(entry.path().filename(), "mine");
  }
}

TEST_F(AddCliTest, QuotesBackslashesAndNewlinesRoundTripExactly) {
  const std::string tricky = "he said \"hi\" \\ back\nnext line\ttab \x7f end";
  const std::string arg = "a\"b\\c\r\n[x] = 'y' # not a comment";
  auto added = kaja({"add", "tricky", "--description", tricky, "--env", "MSG=" + tricky, "--",
                     "/bin/echo", arg, tricky});
  ASSERT_EQ(added.exitCode, 0) << added.err;
  auto loaded = core::loadAbility(userMarket() + "/abilities/tricky");
  ASSERT_TRUE(loaded) << loaded.error().describe();
  EXPECT_EQ(loaded->description, tricky);
  EXPECT_EQ(loaded->env.at("MSG"), tricky);
  ASSERT_EQ(loaded->args.size(), 2u);
  EXPECT_EQ(loaded->args[0], arg);
  EXPECT_EQ(loaded->args[1], tricky);
}

TEST_F(AddCliTest, SecretEnvGoesToTheSecretsFileOnly) {
  auto added = kaja({"add", "keyed", "--env", "MY_API_KEY=sk-topsecret-123", "--env", "REGION=eu",
                     "--", "/bin/cat"});
  ASSERT_EQ(added.exitCode, 0) << added.err;
  std::string text = testing::readFile(manifest("keyed"));
  EXPECT_THAT(text, Not(HasSubstr("sk-topsecret-123")));
  EXPECT_THAT(text, HasSubstr("MY_API_KEY"));
  EXPECT_THAT(text, HasSubstr("REGION"));
  EXPECT_THAT(testing::readFile(secretsFile()), HasSubstr("sk-topsecret-123"));
  EXPECT_EQ(modeOf(secretsFile()), 0600);
  EXPECT_THAT(added.err + added.out, Not(HasSubstr("sk-topsecret-123")));
  json row = abilityRow("keyed");
  EXPECT_EQ(row["state"], "on");
  EXPECT_THAT(row["runs"].get<std::string>(), HasSubstr("MY_API_KEY"));
  auto keys = kaja({"key", "list", "--json"});
  EXPECT_THAT(keys.out, HasSubstr("\"stored\": true"));
}

TEST_F(AddCliTest, NpmFormRunsThroughBunxOrNpx) {
  const std::string package = "@modelcontextprotocol/server-everything@2026.8.31";
  auto added = kaja({"add", "evr", "--npm", package});
  ASSERT_EQ(added.exitCode, 0) << added.err;
  json row = abilityRow("evr");
  ASSERT_FALSE(row.is_null());
  EXPECT_THAT(row["runner"].get<std::string>(), ::testing::AnyOf("bunx", "npx"));
  EXPECT_THAT(row["runs"].get<std::string>(), HasSubstr(package));
  expectRefusedUnchanged({"add", "evr2", "--npm", "@modelcontextprotocol/server-everything"},
                         "pinned");
}

TEST_F(AddCliTest, RemoteFormKeepsItsKeyAndDoctorReachesIt) {
  auto server = testing::ServerProcess::start(testing::everythingHttpPlan("streamableHttp"));
  ASSERT_NE(server, nullptr) << "server-everything did not start";
  const std::string url = server->url("/mcp");
  auto added = kaja({"add", "remote", url, "--header", "Authorization: Bearer tok-remote-42"});
  ASSERT_EQ(added.exitCode, 0) << added.err;
  std::string text = testing::readFile(manifest("remote"));
  EXPECT_THAT(text, Not(HasSubstr("tok-remote-42")));
  EXPECT_THAT(text, HasSubstr("prefix = \"Bearer \""));
  EXPECT_THAT(testing::readFile(secretsFile()), HasSubstr("tok-remote-42"));
  json row = abilityRow("remote");
  EXPECT_EQ(row["runner"], "remote");
  EXPECT_EQ(row["runs"], url);

  auto doctor = kaja({"doctor", "--json", "remote"});
  EXPECT_EQ(doctor.exitCode, 0) << doctor.out << doctor.err;
  json report = json::parse(doctor.out);
  ASSERT_EQ(report["abilities"].size(), 1u);
  EXPECT_EQ(report["abilities"][0]["state"], "ok") << doctor.out;
}

TEST_F(AddCliTest, AddJsonTakesClaudeCodeEntries) {
  auto local = kaja({"add-json", "fromjson",
                     R"({"command": "/bin/cat", "args": ["-u"], "env": {"GITHUB_TOKEN": "ghp_x1",
                     "MODE": "fast"}})"});
  ASSERT_EQ(local.exitCode, 0) << local.err;
  json row = abilityRow("fromjson");
  EXPECT_EQ(row["runner"], "command");
  EXPECT_THAT(row["runs"].get<std::string>(), HasSubstr("/bin/cat -u"));
  EXPECT_THAT(testing::readFile(manifest("fromjson")), Not(HasSubstr("ghp_x1")));
  EXPECT_THAT(testing::readFile(secretsFile()), HasSubstr("ghp_x1"));

  // A ${VAR} reference is no key: the ability is off until one is stored.
  auto referenced = kaja({"add-json", "jsonref",
                          R"({"type": "http", "url": "http://127.0.0.1:9/mcp",
                          "headers": {"Authorization": "Bearer ${API_TOKEN}"}})"});
  ASSERT_EQ(referenced.exitCode, 0) << referenced.err;
  EXPECT_THAT(referenced.err, HasSubstr("kaja key set jsonref"));
  EXPECT_EQ(abilityRow("jsonref")["state"], "off");
  EXPECT_THAT(testing::readFile(secretsFile()), Not(HasSubstr("API_TOKEN")));

  auto remote =
      kaja({"add-json", "jsonremote", R"({"type": "sse", "url": "http://127.0.0.1:9/sse"})"});
  ASSERT_EQ(remote.exitCode, 0) << remote.err;
  row = abilityRow("jsonremote");
  EXPECT_EQ(row["transport"], "sse");
  EXPECT_EQ(row["runs"], "http://127.0.0.1:9/sse");
}

TEST_F(AddCliTest, BadInputChangesNoFile) {
  ASSERT_EQ(kaja({"add", "mine", "--", "/bin/cat"}).exitCode, 0);
  ASSERT_EQ(kaja({"add", "keyed", "--env", "API_KEY=old", "--", "/bin/cat"}).exitCode, 0);
  expectRefusedUnchanged({"add", "bad name", "--", "/bin/cat"}, "not a valid ability name");
  expectRefusedUnchanged({"add", "../escape", "--", "/bin/cat"}, "not a valid ability name");
  expectRefusedUnchanged({"add", "mine", "--", "/bin/echo"}, "already exists");
  expectRefusedUnchanged({"add", "echo", "--", "/bin/echo"}, "--force");
  expectRefusedUnchanged({"add", "keyed", "--force", "--env", "API_KEY=new", "--env",
                          "OTHER_TOKEN=x", "--", "/bin/cat"},
                         "one key per ability");
  expectRefusedUnchanged({"add", "hdr", "http://127.0.0.1:9/mcp", "--header", "X-Trace: 1"},
                         "not a key");
  expectRefusedUnchanged({"add", "dots", "--", "../bin/cat"}, "mcp.toml:");
  expectRefusedUnchanged({"add", "rel", "ftp://example.invalid/x"}, "after --");
  expectRefusedUnchanged({"add-json", "broken", "{\"command\": \"x\",\n \"args\": [1,}"},
                         "line 2, column");
  expectRefusedUnchanged({"add-json", "cwdful", R"({"command": "x", "cwd": "srv"})"},
                         "\"cwd\" is the relative path");
  expectRefusedUnchanged({"remove", "echo"}, "kaja persona remove default echo");
  expectRefusedUnchanged({"remove", "mnie"}, "Did you mean \"mine\"?");
  expectRefusedUnchanged({"get", "ech"}, "Did you mean \"echo\"?");
  EXPECT_EQ(testing::readFile(secretsFile()).find("new"), std::string::npos);
}

TEST_F(AddCliTest, ForceReplacesAndRemoveTakesOnlyTheUsersOwn) {
  ASSERT_EQ(
      kaja({"add", "echo", "--force", "--env", "SERVICE_TOKEN=t1", "--", "/bin/echo"}).exitCode, 0);
  auto got = kaja({"get", "echo", "--json"});
  ASSERT_EQ(got.exitCode, 0) << got.err;
  json info = json::parse(got.out);
  EXPECT_EQ(info["source"], "user");
  EXPECT_EQ(info["overridesShipped"], true);
  EXPECT_EQ(info["runner"], "command");
  EXPECT_EQ(info["state"], "on");
  EXPECT_EQ(info["keyStored"], true);
  EXPECT_THAT(info["text"].get<std::string>(), HasSubstr("/bin/echo"));
  EXPECT_THAT(info["personas"], ::testing::Contains("default"));

  auto removed = kaja({"remove", "echo"});
  ASSERT_EQ(removed.exitCode, 0) << removed.err;
  EXPECT_THAT(removed.err, HasSubstr("shipped echo is in use again"));
  EXPECT_THAT(removed.err, HasSubstr("kaja key rm echo"));
  EXPECT_FALSE(fs::exists(userMarket() + "/abilities/echo"));
  EXPECT_THAT(testing::readFile(secretsFile()), HasSubstr("t1"));
  json row = abilityRow("echo");
  EXPECT_EQ(row["source"], "shipped");
  EXPECT_TRUE(fs::exists(shippedMarket() + "/abilities/echo/mcp.toml"));

  auto text = kaja({"get", "echo"});
  EXPECT_EQ(text.exitCode, 0);
  EXPECT_THAT(text.out, HasSubstr("shipped with kaja"));
  EXPECT_THAT(text.out, HasSubstr("description = \"echoes\""));
}

}  // namespace
}  // namespace kaja::cli
