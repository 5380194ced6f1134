// A workspace's .mcp.json as a layer: read live from the folder kaja runs in (or one above
// it), its servers off until `kaja enable`, which is kept in kaja's data and never in the
// workspace; a server of the file never runs unasked and never takes an ability's place.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli/cli_edit_fixture.h"
#include "tests/core/mcp/test_servers.h"
#include "tests/support/build_paths.h"

namespace kaja::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class WorkspaceCliTest : public ::testing::Test, public CliEditFixture {
 protected:
  WorkspaceCliTest() {
    project_ = root_.path() + "/home/project";
    fs::create_directories(project_ + "/src/deep");
  }

  // Runs kaja in `dir` (the project's subfolder by default) with `extra` in its environment.
  CommandResult kajaIn(const std::vector<std::string>& args,
                       const std::vector<std::string>& extra = {}, std::string dir = "",
                       const std::string& input = "") {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> environment = env();
    environment.insert(environment.end(), extra.begin(), extra.end());
    RunOptions options;
    options.timeoutSeconds = 60;
    options.input = input;
    options.workingDir = dir.empty() ? project_ + "/src/deep" : dir;
    return runCommandWith(argv, environment, options);
  }

  void writeMcpJson(const json& servers) {
    root_.write("home/project/.mcp.json", json({{"mcpServers", servers}}).dump(2));
  }

  json abilities(const std::vector<std::string>& extra = {}) {
    auto result = kajaIn({"abilities", "--json"}, extra);
    EXPECT_EQ(result.exitCode, 0) << result.err;
    return json::parse(result.out, nullptr, false);
  }

  static const json* row(const json& rows, const std::string& name) {
    for (const auto& item : rows) {
      if (item.value("name", "") == name) return &item;
    }
    return nullptr;
  }

  // A stdio server entry that runs server-everything, and first leaves `marker` behind, so
  // a test can tell whether anything started it.
  json everythingEntry(const std::string& marker) {
    std::string script = root_.writeScript(
        "bin/everything-" + marker, "touch '" + root_.path() + "/started-" + marker + "'\nexec '" +
                                        nodePath() + "' '" + npmServerScript("server-everything") +
                                        "' stdio\n");
    return {{"command", script}, {"args", json::array()}, {"env", json::object()}};
  }

  bool started(const std::string& marker) const {
    return fs::exists(root_.path() + "/started-" + marker);
  }

  std::string project_;
};

TEST_F(WorkspaceCliTest, AServerIsOffUntilEnabledThenConnects) {
  // The shape of Claude Code's documented project file.
  writeMcpJson({{"shared-server", everythingEntry("a")}});
  const auto files = snapshot();

  json rows = abilities();
  const json* server = row(rows, "shared-server");
  ASSERT_NE(server, nullptr) << rows.dump();
  EXPECT_EQ((*server)["source"], "workspace");
  EXPECT_EQ((*server)["state"], "off");
  EXPECT_EQ((*server)["manifest"], project_ + "/.mcp.json");

  auto got = kajaIn({"get", "shared-server", "--json"});
  json shown = json::parse(got.out, nullptr, false);
  EXPECT_EQ(shown["source"], "workspace") << got.out;
  EXPECT_EQ(shown["state"], "off") << got.out;
  EXPECT_EQ(shown["manifest"], project_ + "/.mcp.json");

  // Nothing starts it unasked: not doctor, not tools, not a call.
  auto doctor = kajaIn({"doctor", "--json"});
  EXPECT_NE(doctor.out.find("kaja enable shared-server"), std::string::npos) << doctor.out;
  auto tools = kajaIn({"tools", "shared-server"});
  EXPECT_NE(tools.exitCode, 0);
  auto call = kajaIn({"call", "shared-server", "echo", "{\"message\":\"hi\"}"});
  EXPECT_EQ(call.exitCode, 3) << call.err;
  EXPECT_FALSE(started("a"));

  auto enabled = kajaIn({"enable", "shared-server"});
  ASSERT_EQ(enabled.exitCode, 0) << enabled.err;
  EXPECT_EQ(snapshot(), files) << "neither the workspace nor a persona changed";
  json state = json::parse(readFile(root_.path() + "/data/kaja/workspaces.json"));
  ASSERT_TRUE(state[project_]["enabled"].contains("shared-server")) << state.dump();

  auto echoed = kajaIn({"call", "shared-server", "echo", "{\"message\":\"from the workspace\"}"});
  EXPECT_EQ(echoed.exitCode, 0) << echoed.err;
  EXPECT_NE(echoed.out.find("from the workspace"), std::string::npos) << echoed.out;
  EXPECT_TRUE(started("a"));

  // Elsewhere the file does not apply, and the same name is unknown.
  auto elsewhere = kajaIn({"abilities", "--json"}, {}, root_.path());
  EXPECT_EQ(elsewhere.out.find("shared-server"), std::string::npos);

  // The entry changes (a pull swaps its command): off again until enabled again.
  json changed = everythingEntry("b");
  writeMcpJson({{"shared-server", changed}});
  auto after = kajaIn({"abilities", "--json"});
  EXPECT_EQ((*row(json::parse(after.out), "shared-server"))["state"], "off");
  EXPECT_NE(after.out.find("changed in"), std::string::npos) << after.out;
  auto stale = kajaIn({"call", "shared-server", "echo", "{\"message\":\"hi\"}"});
  EXPECT_EQ(stale.exitCode, 3) << stale.err;
  EXPECT_FALSE(started("b"));
  ASSERT_EQ(kajaIn({"enable", "shared-server"}).exitCode, 0);
  EXPECT_EQ(kajaIn({"call", "shared-server", "echo", "{\"message\":\"hi\"}"}).exitCode, 0);
  EXPECT_TRUE(started("b"));

  ASSERT_EQ(kajaIn({"disable", "shared-server"}).exitCode, 0);
  EXPECT_EQ((*row(abilities(), "shared-server"))["state"], "off");
}

TEST_F(WorkspaceCliTest, APersonaThatNamesAWorkspaceServerNeverTurnsItOn) {
  // A name left in the user's persona (an ability since removed, or one added by hand)
  // matches nothing of a project cloned later: only `kaja enable` turns its server on.
  root_.write("config/kaja/marketplace/personas/default.toml",
              "abilities = [\"echo\", \"notes\"]\n");
  writeMcpJson({{"notes", everythingEntry("persona")}});
  auto call = kajaIn({"call", "--yes", "notes", "echo", R"({"message":"hi"})"});
  EXPECT_NE(call.exitCode, 0);
  EXPECT_NE(call.err.find("kaja enable notes"), std::string::npos) << call.err;
  auto tools = kajaIn({"tools"});
  EXPECT_NE(tools.err.find("only a server of this workspace's .mcp.json; it stays off until "
                           "`kaja enable notes`"),
            std::string::npos)
      << tools.err;
  EXPECT_EQ(tools.out.find("mcp__notes__"), std::string::npos) << tools.out;
  EXPECT_FALSE(started("persona"));

  // kaja's own hints never lead there, and persona add refuses the name.
  auto added = kajaIn({"persona", "add", "plain", "notes"});
  EXPECT_EQ(added.exitCode, 2) << added.err;
  EXPECT_NE(added.err.find("is a server of this workspace's .mcp.json, which no persona lists"),
            std::string::npos)
      << added.err;
  auto hint = kajaIn({"tools", "--persona", "plain", "notes"});
  EXPECT_NE(hint.err.find("`kaja enable notes` turns it on here"), std::string::npos) << hint.err;
  EXPECT_FALSE(started("persona"));

  // Enabled, it joins as it is.
  ASSERT_EQ(kajaIn({"enable", "notes"}).exitCode, 0);
  EXPECT_EQ(kajaIn({"call", "--yes", "notes", "echo", R"({"message":"hi"})"}).exitCode, 0);
  EXPECT_TRUE(started("persona"));
}

TEST_F(WorkspaceCliTest, AWorkspaceServerOffersAtMostSixtyFourTools) {
  json tools = json::array();
  for (int i = 0; i < 70; ++i) {
    tools.push_back(
        {{"name", "t" + std::to_string(100 + i)}, {"inputSchema", {{"type", "object"}}}});
  }
  root_.write("tools.json", tools.dump());
  writeMcpJson(
      {{"flood",
        {{"command", nodePath()},
         {"args",
          {std::string(kaja::test::sourceDir()) + "/tests/servers/scripted_tools_server.mjs",
           root_.path() + "/tools.json"}}}}});
  ASSERT_EQ(kajaIn({"enable", "flood"}).exitCode, 0);

  auto listed = kajaIn({"tools", "flood", "--json"});
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  EXPECT_NE(listed.err.find("flood offers 70 tools; kaja takes only the first 64 from a "
                            "workspace's server, so t164 and the rest are left out"),
            std::string::npos)
      << listed.err;
  EXPECT_NE(listed.out.find("t163"), std::string::npos);
  EXPECT_EQ(listed.out.find("t164"), std::string::npos);

  auto doctor = kajaIn({"doctor", "flood", "--json"});
  EXPECT_NE(doctor.out.find("t164 and the rest are left out"), std::string::npos) << doctor.out;
  EXPECT_EQ(kajaIn({"call", "--yes", "flood", "t163"}).exitCode, 0);
  auto past = kajaIn({"call", "--yes", "flood", "t169"});
  EXPECT_EQ(past.exitCode, 3) << past.err;
  EXPECT_NE(past.err.find("among the ones kaja takes: flood offers 70 tools"), std::string::npos)
      << past.err;
  EXPECT_NE(past.err.find("t169"), std::string::npos) << past.err;
}

TEST_F(WorkspaceCliTest, ExpandsVariablesAsClaudeCodeDoes) {
  // Claude Code's documented example of expansion, pointed at this machine.
  writeMcpJson({{"api-server",
                 {{"type", "http"},
                  {"url", "${API_BASE_URL:-https://api.example.com}/mcp"},
                  {"headers", {{"Authorization", "Bearer ${API_KEY}"}}}}},
                {"defaulted", {{"command", "/bin/cat"}, {"args", {"${MISSING:-fallback}"}}}}});
  json unset = abilities();
  const json* api = row(unset, "api-server");
  ASSERT_NE(api, nullptr);
  EXPECT_EQ((*api)["state"], "broken");
  EXPECT_NE((*api)["reason"].get<std::string>().find("${API_KEY}, which is not set"),
            std::string::npos)
      << api->dump();
  EXPECT_NE((*row(unset, "defaulted"))["runs"].get<std::string>().find("fallback"),
            std::string::npos);

  json set = abilities({"API_BASE_URL=http://127.0.0.1:9", "API_KEY=sekrit-value-42"});
  api = row(set, "api-server");
  ASSERT_NE(api, nullptr);
  EXPECT_EQ((*api)["runs"], "http://127.0.0.1:9/mcp") << api->dump();
  EXPECT_EQ(set.dump().find("sekrit-value-42"), std::string::npos) << "no key in --json";

  // A secret-looking variable expanded into an argument or a url is shown as its reference.
  writeMcpJson(
      {{"tokened", {{"command", "/bin/cat"}, {"args", {"--token=${GH_TOKEN}", "${REGION:-eu}"}}}},
       {"queried", {{"type", "http"}, {"url", "http://127.0.0.1:9/mcp?k=${API_KEY}"}}}});
  const std::vector<std::string> secretEnv = {"GH_TOKEN=ghp-visible-9876", "API_KEY=sekrit-42"};
  json masked = abilities(secretEnv);
  EXPECT_EQ(masked.dump().find("ghp-visible-9876"), std::string::npos) << masked.dump();
  EXPECT_EQ(masked.dump().find("sekrit-42"), std::string::npos) << masked.dump();
  EXPECT_NE((*row(masked, "tokened"))["runs"].get<std::string>().find("--token=${GH_TOKEN} eu"),
            std::string::npos)
      << masked.dump();
  for (const auto& name : {"tokened", "queried"}) {
    auto got = kajaIn({"get", name, "--json"}, secretEnv);
    EXPECT_EQ(got.out.find("ghp-visible-9876"), std::string::npos) << got.out;
    EXPECT_EQ(got.out.find("sekrit-42"), std::string::npos) << got.out;
  }
  writeMcpJson({{"api-server",
                 {{"type", "http"},
                  {"url", "${API_BASE_URL:-https://api.example.com}/mcp"},
                  {"headers", {{"Authorization", "Bearer ${API_KEY}"}}}}}});

  // A key from the workspace lives in this process only: saving another key keeps it out.
  auto stored = kajaIn({"key", "set", "echo"}, {"API_KEY=sekrit-value-42"}, "", "echo-key\n");
  EXPECT_EQ(stored.exitCode, 0) << stored.err;
  EXPECT_EQ(readFile(secretsFile()).find("sekrit-value-42"), std::string::npos);
  EXPECT_NE(readFile(secretsFile()).find("echo-key"), std::string::npos);

  // `kaja key list` says where the workspace server's key comes from, and never shows it.
  auto keys =
      kajaIn({"key", "list"}, {"API_BASE_URL=http://127.0.0.1:9", "API_KEY=sekrit-value-42"});
  ASSERT_EQ(keys.exitCode, 0) << keys.err;
  EXPECT_NE(keys.out.find("api-server               key from this workspace's .mcp.json or the "
                          "environment it names (not stored)"),
            std::string::npos)
      << keys.out;
  EXPECT_EQ(keys.out.find("sekrit-value-42"), std::string::npos);
  auto keysJson = kajaIn({"key", "list", "--json"},
                         {"API_BASE_URL=http://127.0.0.1:9", "API_KEY=sekrit-value-42"});
  json listed = json::parse(keysJson.out);
  const json* apiKey = row(listed, "api-server");
  ASSERT_NE(apiKey, nullptr) << keysJson.out;
  EXPECT_EQ((*apiKey)["stored"], false);
  EXPECT_EQ((*apiKey)["fromWorkspace"], true);
}

TEST_F(WorkspaceCliTest, NeverTakesAnAbilitysPlaceAndRefusesWhatItCannotUse) {
  writeMcpJson({{"echo", everythingEntry("shadow")},
                {"climber", {{"command", "../bin/x"}}},
                {"not a name", {{"command", "/bin/cat"}}},
                {"fine", {{"command", "/bin/cat"}}}});
  auto result = kajaIn({"abilities", "--json"});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  json rows = json::parse(result.out);
  EXPECT_EQ((*row(rows, "echo"))["source"], "shipped") << "the shipped echo stays";
  EXPECT_NE(result.err.find("a workspace never takes an ability's place"), std::string::npos)
      << result.err;
  EXPECT_EQ((*row(rows, "climber"))["state"], "broken");
  EXPECT_NE((*row(rows, "climber"))["reason"].get<std::string>().find(".."), std::string::npos);
  EXPECT_NE(result.err.find("\"not a name\" is not used"), std::string::npos) << result.err;
  EXPECT_EQ((*row(rows, "fine"))["state"], "off");

  // A server of the file that shares a name with the user's ability gives it no key.
  root_.write("market/abilities/keyed/mcp.toml",
              "command = \"/bin/cat\"\nauth = { type = \"apiKey\", in = \"env\", name = "
              "\"KEYED_TOKEN\" }\n");
  writeMcpJson({{"keyed", {{"command", "/bin/cat"}, {"env", {{"KEYED_TOKEN", "from-the-repo"}}}}},
                {"climber", {{"command", "../bin/x"}}}});
  json keyedRows = abilities();
  const json* keyed = row(keyedRows, "keyed");
  ASSERT_NE(keyed, nullptr);
  EXPECT_EQ((*keyed)["state"], "off")
      << "the repository's key is not the user's: " << keyed->dump();

  auto refused = kajaIn({"enable", "climber"});
  EXPECT_EQ(refused.exitCode, 2) << refused.err;
  EXPECT_FALSE(fs::exists(root_.path() + "/data/kaja/workspaces.json"));
  EXPECT_FALSE(started("shadow"));
}

TEST_F(WorkspaceCliTest, ABrokenFileIsAWarningAndEverythingElseWorks) {
  root_.write("home/project/.mcp.json", "{\"mcpServers\": {\"a\": {\"command\": \"/bin/cat\",}");
  auto result = kajaIn({"abilities", "--json"});
  EXPECT_EQ(result.exitCode, 0) << result.err;
  EXPECT_NE(result.err.find(".mcp.json"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("line 1"), std::string::npos) << result.err;
  EXPECT_NE(row(json::parse(result.out), "echo"), nullptr);

  root_.write("home/project/.mcp.json", "[1, 2]");
  auto shape = kajaIn({"abilities"});
  EXPECT_EQ(shape.exitCode, 0);
  EXPECT_NE(shape.err.find("holds no \"mcpServers\" object"), std::string::npos) << shape.err;

  // A FIFO by that name is no file to read, but it is not passed over in silence either
  // (and kaja does not wait on it).
  fs::remove(project_ + "/.mcp.json");
  ASSERT_EQ(::mkfifo((project_ + "/.mcp.json").c_str(), 0644), 0);
  auto fifo = kajaIn({"abilities"});
  EXPECT_EQ(fifo.exitCode, 0) << fifo.err;
  EXPECT_NE(fifo.err.find(".mcp.json is not a regular file; its servers are not used"),
            std::string::npos)
      << fifo.err;
  fs::remove(project_ + "/.mcp.json");

  // KAJA_WORKSPACE=none turns workspaces off.
  writeMcpJson({{"fine", {{"command", "/bin/cat"}}}});
  EXPECT_NE(row(abilities(), "fine"), nullptr);
  EXPECT_EQ(row(abilities({"KAJA_WORKSPACE=none"}), "fine"), nullptr);
  auto missing = kajaIn({"abilities"}, {"KAJA_WORKSPACE=" + root_.path() + "/nowhere"});
  EXPECT_EQ(missing.exitCode, 0);
  EXPECT_NE(missing.err.find("which is not a folder; no workspace's servers are read"),
            std::string::npos)
      << missing.err;
  auto file = kajaIn({"abilities"}, {"KAJA_WORKSPACE=" + project_ + "/.mcp.json"});
  EXPECT_NE(file.err.find("which is not a folder"), std::string::npos) << file.err;
  auto empty = kajaIn({"abilities"}, {"KAJA_WORKSPACE=" + project_ + "/src"});
  EXPECT_NE(empty.err.find("which holds no .mcp.json"), std::string::npos) << empty.err;
}

}  // namespace
}  // namespace kaja::testing
