// `kaja import` end to end in a fresh home: each client's files, the secrets rules, names
// that are no ability names, and files that must not be imported at all (which leave every
// file byte for byte as it was). An imported server is started by `kaja doctor`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/manifest/ability_loader.h"
#include "tests/cli/cli_edit_fixture.h"
#include "tests/support/build_paths.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

class ImportCliTest : public ::testing::Test, public testing::CliEditFixture {
 protected:
  ImportCliTest() : project_(home_ + "/proj") { fs::create_directories(project_); }

  // Runs `kaja ARGS` with the project as the current folder (Claude Code keys its local
  // servers by that path).
  testing::CommandResult kajaHere(const std::vector<std::string>& args,
                                  std::vector<std::string> environment = {}) {
    std::vector<std::string> argv = {"/usr/bin/env", "-C", project_,
                                     std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    testing::RunOptions options;
    options.timeoutSeconds = 30;
    return testing::runCommandWith(argv, environment.empty() ? env() : environment, options);
  }

  // Runs `kaja import ARGS --json` in the project and returns its report.
  json imported(std::vector<std::string> args) {
    args.insert(args.begin(), "import");
    args.emplace_back("--json");
    auto result = kajaHere(args);
    EXPECT_EQ(result.exitCode, 0) << result.err;
    try {
      return json::parse(result.out);
    } catch (const json::exception&) {
      ADD_FAILURE() << "not JSON: " << result.out << result.err;
      return json::object();
    }
  }

  static std::vector<std::string> names(const json& rows) {
    std::vector<std::string> out;
    for (const auto& row : rows) out.push_back(row["name"].is_null() ? "" : row["name"]);
    return out;
  }

  static const json& row(const json& rows, const std::string& server) {
    static const json kNone;
    for (const auto& item : rows) {
      if (item["server"] == server) return item;
    }
    return kNone;
  }

  std::string put(const std::string& relative, const std::string& text) {
    return root_.write(relative, text);
  }

  std::string project_;
};

TEST_F(ImportCliTest, ClaudeTakesThisFoldersEntriesThenMcpJsonThenTheUsersOwn) {
  json claude = {
      {"numStartups", 12},
      {"mcpServers", {{"mine", {{"command", "/bin/cat"}}}, {"shared", {{"command", "/bin/echo"}}}}},
      {"projects",
       {{project_,
         {{"mcpServers",
           {{"local-one", {{"type", "stdio"}, {"command", "/bin/cat"}, {"args", {"-u"}}}},
            {"shared", {{"command", "/bin/cat"}, {"args", {"local"}}}}}}}},
        {"/somewhere/else", {{"mcpServers", {{"elsewhere", {{"command", "/bin/cat"}}}}}}}}}};
  put("home/.claude.json", claude.dump(2));
  put("home/proj/.mcp.json",
      R"({"mcpServers": {"from-project": {"type": "http", "url": "https://mcp.example.com/mcp"},
          "shared": {"command": "/bin/true"}}})");
  json report = imported({"claude"});
  EXPECT_THAT(names(report["imported"]),
              ::testing::UnorderedElementsAre("local-one", "shared", "from-project", "mine"));
  EXPECT_EQ(row(report["imported"], "shared")["scope"], "local");
  EXPECT_EQ(row(report["imported"], "from-project")["from"], "./.mcp.json");
  EXPECT_EQ(row(report["imported"], "mine")["from"], "~/.claude.json");
  ASSERT_EQ(report["skipped"].size(), 2u) << report.dump(2);
  for (const auto& skipped : report["skipped"]) {
    EXPECT_EQ(skipped["server"], "shared");
    EXPECT_THAT(skipped["reason"].get<std::string>(), HasSubstr("comes first"));
  }
  auto shared = core::loadAbility(userMarket() + "/abilities/shared");
  ASSERT_TRUE(shared) << shared.error().describe();
  EXPECT_EQ(shared->args, std::vector<std::string>{"local"});
  auto remote = core::loadAbility(userMarket() + "/abilities/from-project");
  ASSERT_TRUE(remote) << remote.error().describe();
  EXPECT_EQ(remote->url, "https://mcp.example.com/mcp");
  EXPECT_FALSE(fs::exists(userMarket() + "/abilities/elsewhere"));
  auto listed = kaja({"abilities", "--json"});
  EXPECT_THAT(listed.out, HasSubstr("\"local-one\""));
}

TEST_F(ImportCliTest, ClaudeDesktopKeysGoToTheSecretsFileOnly) {
  put("config/Claude/claude_desktop_config.json",
      R"({"globalShortcut": "Ctrl+Space", "mcpServers": {"github": {
          "command": "/bin/cat",
          "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_desktop_secret_1", "LOG": "info"}}}})");
  json report = imported({"claude-desktop"});
  ASSERT_EQ(names(report["imported"]), std::vector<std::string>{"github"}) << report.dump(2);
  EXPECT_EQ(report["imported"][0]["key"], "stored");
  EXPECT_EQ(report["imported"][0]["keyName"], "GITHUB_PERSONAL_ACCESS_TOKEN");
  std::string text = testing::readFile(manifest("github"));
  EXPECT_THAT(text, Not(HasSubstr("ghp_desktop_secret_1")));
  EXPECT_THAT(text, HasSubstr("LOG = \"info\""));
  EXPECT_THAT(testing::readFile(secretsFile()), HasSubstr("ghp_desktop_secret_1"));
  EXPECT_EQ(modeOf(secretsFile()), 0600);
  auto got = kaja({"get", "github", "--json"});
  ASSERT_EQ(got.exitCode, 0) << got.err;
  EXPECT_EQ(json::parse(got.out)["keyStored"], true);
  EXPECT_THAT(got.out + got.err, Not(HasSubstr("ghp_desktop_secret_1")));
}

TEST_F(ImportCliTest, CursorProjectEntriesWinAndReferencesStayReferences) {
  put("home/.cursor/mcp.json",
      R"({"mcpServers": {"docs": {"url": "https://user.example.com/mcp"},
          "web": {"url": "https://api.example.com/mcp",
                  "headers": {"Authorization": "Bearer ${env:WEB_TOKEN}"}}}})");
  put("home/proj/.cursor/mcp.json",
      R"({"mcpServers": {"docs": {"url": "https://project.example.com/mcp"},
          "tool": {"command": "/bin/cat",
                   "args": ["--root", "${HOME}/data", "${workspaceFolder}/src"],
                   "env": {"MODE": "${MODE:-fast}", "API_KEY": "${API_KEY}"}}}})");
  json report = imported({"cursor"});
  EXPECT_THAT(names(report["imported"]), ::testing::UnorderedElementsAre("docs", "web", "tool"));
  EXPECT_EQ(row(report["imported"], "docs")["scope"], "project");
  EXPECT_EQ(row(report["imported"], "web")["key"], "reference");
  EXPECT_EQ(row(report["imported"], "tool")["key"], "reference");
  auto tool = core::loadAbility(userMarket() + "/abilities/tool");
  ASSERT_TRUE(tool) << tool.error().describe();
  EXPECT_EQ(tool->args, (std::vector<std::string>{"--root", "${HOME}/data", project_ + "/src"}));
  EXPECT_EQ(tool->env.at("MODE"), "${MODE:-fast}");
  EXPECT_FALSE(tool->env.contains("API_KEY"));
  EXPECT_EQ(core::loadAbility(userMarket() + "/abilities/docs")->url,
            "https://project.example.com/mcp");
  // A reference is no key: nothing reaches the secrets file, and the ability waits for one.
  EXPECT_THAT(testing::readFile(secretsFile()), Not(HasSubstr("${")));
  auto got = kaja({"get", "web", "--json"});
  EXPECT_EQ(json::parse(got.out)["state"], "off");
}

TEST_F(ImportCliTest, VsCodeServersWithCommentsInputsAndWorkspaceFolder) {
  put("home/proj/.vscode/mcp.json", R"(// the project's servers
{
  "inputs": [{"type": "promptString", "id": "api-key", "password": true}],
  "servers": {
    /* a local one */
    "workspace": {"type": "stdio", "command": "/bin/cat", "args": ["${workspaceFolder}"],
              "cwd": "${workspaceFolder}/sub",},
    "keyed": {"type": "stdio", "command": "/bin/cat", "env": {"API_KEY": "${input:api-key}"}},
    "asks": {"type": "stdio", "command": "/bin/cat", "args": ["${input:folder}"]},
    "relative": {"command": "/bin/cat", "cwd": "tools"},
  },
})");
  json report = imported({"vscode"});
  EXPECT_THAT(names(report["imported"]),
              ::testing::UnorderedElementsAre("workspace", "keyed", "relative"));
  ASSERT_EQ(report["skipped"].size(), 1u) << report.dump(2);
  EXPECT_EQ(report["skipped"][0]["server"], "asks");
  EXPECT_THAT(report["skipped"][0]["reason"].get<std::string>(), HasSubstr("${input:"));
  EXPECT_EQ(row(report["imported"], "keyed")["key"], "reference");
  auto workspace = core::loadAbility(userMarket() + "/abilities/workspace");
  ASSERT_TRUE(workspace) << workspace.error().describe();
  EXPECT_EQ(workspace->args, std::vector<std::string>{project_});
  EXPECT_EQ(workspace->cwd, project_ + "/sub");
  // A relative cwd in a project's file means the project's folder, as the client runs it.
  EXPECT_EQ(core::loadAbility(userMarket() + "/abilities/relative")->cwd, project_ + "/tools");
}

TEST_F(ImportCliTest, APathIsReadForWhicheverKeyItHas) {
  const std::string claudeStyle = put("elsewhere/servers.json",
                                      R"({"mcpServers": {"one": {"command": "/bin/cat"},
                                          "rel": {"command": "/bin/cat", "cwd": "x"}}})");
  const std::string vscodeStyle =
      put("elsewhere/vs.json", R"({"servers": {"two": {"type": "stdio", "command": "/bin/cat"}}})");
  json first = imported({claudeStyle});
  EXPECT_EQ(names(first["imported"]), std::vector<std::string>{"one"});
  EXPECT_EQ(first["imported"][0]["scope"], "file");
  // Outside a project's own file a relative cwd has no folder to mean.
  EXPECT_THAT(row(first["skipped"], "rel")["reason"].get<std::string>(),
              HasSubstr("cannot tell what it is relative to"));
  EXPECT_EQ(names(imported({vscodeStyle})["imported"]), std::vector<std::string>{"two"});
}

TEST_F(ImportCliTest, ABadEntryIsSkippedWithItsReasonAndTheOthersImported) {
  const std::string file = put("elsewhere/mixed.json", R"({"mcpServers": {
      "good": {"command": "/bin/cat"},
      "badargs": {"command": "/bin/cat", "args": 5},
      "envfile": {"command": "/bin/cat", "envFile": ".env"},
      "twokeys": {"command": "/bin/cat", "env": {"A_TOKEN": "a", "B_KEY": "b"}},
      "trace": {"url": "https://x.example.com/mcp", "headers": {"X-Trace": "1"}},
      "ws": {"type": "ws", "url": "wss://x.example.com"},
      "string": "not an object",
      "dots": {"command": "../bin/cat"},
      "refcwd": {"command": "/bin/cat", "cwd": "${HOME}/srv"},
      "preload": {"command": "/bin/cat", "env": {"LD_PRELOAD": "/tmp/evil.so"}}}})");
  json report = imported({file});
  EXPECT_THAT(names(report["imported"]), ::testing::UnorderedElementsAre("good", "preload"));
  EXPECT_EQ(report["skipped"].size(), 8u) << report.dump(2);
  // What the runner will drop is said at once.
  EXPECT_THAT(row(report["imported"], "preload")["notes"].dump(), HasSubstr("LD_PRELOAD"));
  auto reason = [&](const std::string& server) {
    return row(report["skipped"], server)["reason"].get<std::string>();
  };
  EXPECT_THAT(reason("badargs"), HasSubstr("\"args\" must be an array"));
  EXPECT_THAT(reason("envfile"), HasSubstr("\"envFile\" is not a key kaja takes"));
  EXPECT_THAT(reason("twokeys"), HasSubstr("one key per ability"));
  EXPECT_THAT(reason("trace"), HasSubstr("\"X-Trace\" is not a key"));
  EXPECT_THAT(reason("ws"), HasSubstr("\"type\" must be stdio, http or sse"));
  EXPECT_THAT(reason("string"), HasSubstr("must be an object"));
  EXPECT_THAT(reason("dots"), HasSubstr("must not contain \"..\""));
  EXPECT_THAT(reason("refcwd"), HasSubstr("\"cwd\" holds a ${…} reference"));
  for (const char* skipped :
       {"badargs", "envfile", "twokeys", "trace", "ws", "string", "dots", "refcwd"}) {
    EXPECT_FALSE(fs::exists(userMarket() + "/abilities/" + skipped)) << skipped;
  }
  EXPECT_THAT(testing::readFile(secretsFile()), Not(HasSubstr("\"a\"")));
}

TEST_F(ImportCliTest, NamesBecomeAbilityNamesAndAreShownEscaped) {
  json servers = {{"../x", {{"command", "/bin/cat"}}},
                  {"my server", {{"command", "/bin/cat"}}},
                  {"my-server", {{"command", "/bin/cat"}}},
                  {"new\nline", {{"command", "/bin/cat"}}},
                  {"\x1b[31mred\x1b[0m", {{"command", "/bin/cat"}}},
                  {"///", {{"command", "/bin/cat"}}},
                  {std::string(100, 'n'), {{"command", "/bin/cat"}}}};
  const std::string file = put("elsewhere/names.json", json{{"mcpServers", servers}}.dump());
  json report = imported({file});
  EXPECT_THAT(names(report["imported"]),
              ::testing::UnorderedElementsAre("x", "my-server", "new-line", "31mred-0m",
                                              std::string(64, 'n')));
  // Entries are taken in the order of their names: "my server" sorts first, so "my-server"
  // finds its ability name taken.
  EXPECT_THAT(row(report["skipped"], "my-server")["reason"].get<std::string>(),
              HasSubstr("rename one of them"));
  EXPECT_THAT(row(report["skipped"], "///")["reason"].get<std::string>(),
              HasSubstr("no letter, digit"));
  std::vector<std::string> made;
  for (const auto& entry : fs::directory_iterator(userMarket() + "/abilities")) {
    made.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(made.size(), 5u);
  EXPECT_FALSE(fs::exists(userMarket() + "/x"));
  EXPECT_FALSE(fs::exists(root_.path() + "/elsewhere/x"));

  auto text = kajaHere({"import", file, "--dry-run", "--force"});
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_EQ(text.out.find('\x1b'), std::string::npos) << text.out;
  EXPECT_THAT(text.out, HasSubstr("\"new\\nline\" as new-line"));
  EXPECT_THAT(text.out, HasSubstr("\\u001b[31mred"));
}

TEST_F(ImportCliTest, ExistingAbilitiesAreSkippedUnlessForced) {
  const std::string file = put("elsewhere/again.json",
                               R"({"mcpServers": {"echo": {"command": "/bin/echo"},
                                   "fresh": {"command": "/bin/cat"}}})");
  json first = imported({file});
  EXPECT_EQ(names(first["imported"]), std::vector<std::string>{"fresh"});
  EXPECT_EQ(row(first["skipped"], "echo")["reason"],
            "an ability named \"echo\" already exists; use --force to replace it.");
  auto before = snapshot();
  json second = imported({file});
  EXPECT_TRUE(second["imported"].empty());
  EXPECT_EQ(second["skipped"].size(), 2u);
  EXPECT_EQ(snapshot(), before);
  json forced = imported({file, "--force"});
  EXPECT_THAT(names(forced["imported"]), ::testing::UnorderedElementsAre("echo", "fresh"));
  EXPECT_EQ(json::parse(kaja({"get", "echo", "--json"}).out)["source"], "user");
}

TEST_F(ImportCliTest, DryRunWritesNothing) {
  const std::string file = put("elsewhere/dry.json",
                               R"({"mcpServers": {"dry": {"command": "/bin/cat",
                                   "env": {"SERVICE_TOKEN": "tok-dry-run"}}}})");
  auto before = snapshot();
  auto result = kajaHere({"import", file, "--dry-run", "--enable"});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("would import \"dry\" from"));
  EXPECT_THAT(result.out, HasSubstr("its key (SERVICE_TOKEN) would go to"));
  EXPECT_THAT(result.err, HasSubstr("nothing was written (--dry-run)"));
  EXPECT_EQ(snapshot(), before);
  EXPECT_THAT(result.out + result.err, Not(HasSubstr("tok-dry-run")));
}

// Each of these files is refused as a whole, with one sentence, and no file changes.
class ImportRefusalTest : public ImportCliTest {
 protected:
  void expectRefused(const std::vector<std::string>& args, const std::string& words,
                     std::vector<std::string> environment = {}) {
    auto before = snapshot();
    std::vector<std::string> full = {"import"};
    full.insert(full.end(), args.begin(), args.end());
    auto result = kajaHere(full, std::move(environment));
    EXPECT_FALSE(result.timedOut) << args.front();
    EXPECT_EQ(result.exitCode, 2) << args.front() << ": " << result.err;
    EXPECT_THAT(result.err, HasSubstr(words)) << args.front();
    EXPECT_THAT(result.err, ::testing::StartsWith("kaja: error: "));
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_TRUE(result.err.ends_with(".\n")) << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(snapshot(), before) << "files changed by: " << result.err;
  }
};

TEST_F(ImportRefusalTest, FilesThatAreNotServerListsChangeNothing) {
  put("elsewhere/good.json", R"({"mcpServers": {"good": {"command": "/bin/cat"}}})");
  ASSERT_EQ(kajaHere({"import", root_.path() + "/elsewhere/good.json"}).exitCode, 0);
  const std::string dir = root_.path() + "/elsewhere/";
  expectRefused({put("elsewhere/broken.json",
                     "{\"mcpServers\": {\"a\": {\"command\": \"/bin/cat\"},\n  \"b\": [1 2]}}")},
                "is not valid at line 2, column");
  expectRefused({put("elsewhere/text.json", "command = \"/bin/cat\"\n")}, "line 1, column 1");
  expectRefused({put("elsewhere/array.json", "[1, 2]")}, "holds JSON array, not an object");
  expectRefused({put("elsewhere/none.json", R"({"servers2": {}})")}, "has no \"mcpServers\"");
  expectRefused({put("elsewhere/shape.json", R"({"mcpServers": ["a"]})")},
                "\"mcpServers\" in " + dir + "shape.json is array, not an object of servers");
  expectRefused({put("elsewhere/deep.json", std::string(10000, '[') + std::string(10000, ']'))},
                "nests deeper than 256 levels");
  expectRefused({dir + "missing.json"}, "missing.json does not exist");
  expectRefused({dir}, "is a folder");
  // A secret in the text is never quoted back.
  auto leaked = kajaHere({"import", put("elsewhere/leak.json",
                                        R"({"mcpServers": {"a": {"env": {"K": "sk-leak-1"}}} x)")});
  EXPECT_EQ(leaked.exitCode, 2);
  EXPECT_THAT(leaked.err, Not(HasSubstr("sk-leak-1")));
  // A client's own file that is broken stops that client's import too.
  put("home/.cursor/mcp.json", R"({"mcpServers": {"fine": {"command": "/bin/cat"}}})");
  put("home/proj/.cursor/mcp.json", "{\"mcpServers\": {\n\n  \"x\": nope}}");
  expectRefused({"cursor"}, "./.cursor/mcp.json is not valid at line 3, column");
  expectRefused({"claude-desktop"}, "found no Claude Desktop file");
  expectRefused({"bogus", "extra"}, "usage: kaja import");
}

TEST_F(ImportRefusalTest, SpecialFilesAreNeverReadWithoutEnd) {
  const std::string dir = root_.path() + "/elsewhere";
  fs::create_directories(dir);
  const std::string fifo = dir + "/fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expectRefused({fifo}, "is not a regular file");
  fs::create_symlink("/dev/zero", dir + "/zero.json");
  expectRefused({dir + "/zero.json"}, "is not a regular file");
  // The same through a client's own name: a HOME whose ~/.claude.json is a FIFO.
  const std::string other = root_.path() + "/otherhome";
  fs::create_directories(other);
  ASSERT_EQ(::mkfifo((other + "/.claude.json").c_str(), 0600), 0);
  std::vector<std::string> environment = env();
  for (auto& var : environment) {
    if (var.starts_with("HOME=")) var = "HOME=" + other;
  }
  expectRefused({"claude"}, ".claude.json is not a regular file", environment);
  // Larger than any client's file: refused from its size, before it is read.
  const std::string huge = dir + "/huge.json";
  std::ofstream(huge).close();
  fs::resize_file(huge, (std::uintmax_t{64} << 20) + 1);
  expectRefused({huge}, "is larger than 64 MiB");
}

TEST_F(ImportRefusalTest, ATwentyMegabyteFileIsReadWithinItsBound) {
  // ~/.claude.json keeps history and grows: a large file with servers in it imports, and
  // 20 MB of something else is refused with its line and column.
  json claude = {{"history", std::string(20 << 20, 'h')},
                 {"mcpServers", {{"big", {{"command", "/bin/cat"}}}}}};
  put("home/.claude.json", claude.dump());
  auto result = kajaHere({"import", "claude", "--json"});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_LT(result.seconds, 20);
  EXPECT_EQ(names(json::parse(result.out)["imported"]), std::vector<std::string>{"big"});
  expectRefused({put("elsewhere/noise.json", "{\"a\": 1}" + std::string(20 << 20, 'x'))},
                "is not valid at line 1, column 9");
}

TEST_F(ImportCliTest, AnImportedServerRunsInItsFolderAndCanBeEnabled) {
  // The script is named relative to the server's folder, so it starts only where cwd says.
  const std::string servers = std::string(kaja::test::sourceDir()) + "/tests/servers";
  json entry = {
      {"command", "node"}, {"args", {"conformance_server.mjs", "stdio"}}, {"cwd", servers}};
  const std::string file =
      put("elsewhere/run.json", json{{"mcpServers", {{"conformance", entry}}}}.dump());
  auto result = kajaHere({"import", file, "--enable"});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("imported \"conformance\" from"));
  EXPECT_THAT(result.err, HasSubstr("conformance"));
  auto doctor = kaja({"doctor", "--json", "conformance"});
  json report = json::parse(doctor.out);
  ASSERT_EQ(report["abilities"].size(), 1u) << doctor.out;
  EXPECT_EQ(report["abilities"][0]["state"], "ok") << doctor.out << doctor.err;
  auto personas = kaja({"personas", "--json"});
  EXPECT_THAT(personas.out, HasSubstr("\"conformance\""));
  auto got = json::parse(kaja({"get", "conformance", "--json"}).out);
  EXPECT_EQ(got["state"], "on");
  EXPECT_THAT(got["text"].get<std::string>(), HasSubstr("cwd = \"" + servers + "\""));
}

}  // namespace
}  // namespace kaja::cli

namespace kaja::cli {
namespace {

// The outside review's attack: replace the shipped filesystem, whose persona keeps a
// read-only and a backed-up folder, with a Claude entry that names no path arguments.
TEST(ImportGuardTest, AForcedImportOverAGuardedAbilityLeavesItOffInsteadOfUnguarded) {
  testing::CliEditFixture fixture;
  const std::string home = fixture.env()[0].substr(5);
  const std::string server = std::string(kaja::test::sourceDir()) +
                             "/tests/npm/node_modules/@modelcontextprotocol/server-filesystem/"
                             "dist/index.js";
  testing::TempDir root;
  root.write("market/abilities/filesystem/mcp.toml",
             "command = \"node\"\nargs = [\"" + server +
                 "\"]\nroots = true\napproval = \"writes\"\npathArgs = [\"path\"]\n");
  root.write("market/personas/default.toml",
             "abilities = [{ name = \"filesystem\", roots = [{ path = \"~/ro\", readOnly = true "
             "}, { path = \"~/bk\", backup = true }] }]\n");
  fs::create_directories(home + "/ro");
  fs::create_directories(home + "/bk");
  std::ofstream(home + "/ro/keep.txt") << "keep";
  std::ofstream(home + "/c.json")
      << json({{"mcpServers", {{"filesystem", {{"command", "node"}, {"args", {server, home}}}}}}})
             .dump();
  std::vector<std::string> env = fixture.env();
  std::erase_if(env, [](const std::string& v) { return v.starts_with("KAJA_SHIPPED_"); });
  env.push_back("KAJA_SHIPPED_MARKETPLACE=" + root.path() + "/market");
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), std::string(kaja::test::binDir()) + "/kaja");
    return testing::runCommand(args, env);
  };
  auto imported = run({"import", home + "/c.json", "--force"});
  ASSERT_EQ(imported.exitCode, 0) << imported.err;

  auto write = run({"call", "--yes", "filesystem", "write_file",
                    json({{"path", home + "/ro/keep.txt"}, {"content", "OVERWRITTEN"}}).dump()});
  EXPECT_NE(write.exitCode, 0) << write.out;
  EXPECT_THAT(write.err, HasSubstr("names no pathArgs, so kaja could not keep it to them"));
  EXPECT_EQ(testing::readFile(home + "/ro/keep.txt"), "keep");

  auto tools = run({"tools", "--json"});
  EXPECT_THAT(tools.out, Not(HasSubstr("mcp__filesystem__write_file")));
  auto doctor = run({"doctor", "--json", "filesystem"});
  EXPECT_EQ(doctor.exitCode, 1) << doctor.out;
  EXPECT_THAT(doctor.out, HasSubstr("\"unguarded-folders\""));
}

}  // namespace
}  // namespace kaja::cli
