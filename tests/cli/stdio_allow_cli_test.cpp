// The stdio allow-list end to end: config.toml's [stdio] allow for kaja abilities, doctor and
// call, and --allow-stdio for the sandbox worker, with the real binary and real servers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "tests/cli/serve_test_support.h"
#include "tests/core/server/http_client.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

class StdioAllowCliTest : public ::testing::Test {
 protected:
  StdioAllowCliTest() {
    script_ = std::string(kaja::test::sourceDir()) +
              "/tests/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
    tag_ = "kaja-stdio-allow-" + std::to_string(::getpid());
    // Both run the same server; only `allowed`'s command line is on the list.
    for (const std::string name : {"allowed", "blocked"}) {
      const std::string extra = name == "blocked" ? ", \"--evil-" + tag_ + "\"" : "";
      root_.write("market/abilities/" + name + "/mcp.toml",
                  "command = \"node\"\nargs = [\"" + script_ + "\", \"stdio\"" + extra +
                      "]\ntools = [\"echo\"]\nenv = { KAJA_TEST_TAG = \"" + tag_ + "\" }\n");
    }
    root_.write("market/personas/default.toml",
                "abilities = [{ name = \"allowed\" }, { name = \"blocked\" }]\n");
    configFile_ = root_.path() + "/config/kaja/config.toml";
  }
  ~StdioAllowCliTest() override {
    for (const pid_t pid : processesTagged(tag_)) ::kill(pid, SIGKILL);
  }
  StdioAllowCliTest(const StdioAllowCliTest&) = delete;
  StdioAllowCliTest& operator=(const StdioAllowCliTest&) = delete;

  void allow(const std::string& toml) { root_.write("config/kaja/config.toml", toml); }
  [[nodiscard]] std::vector<std::string> env() const {
    return {"HOME=" + root_.path() + "/home",
            "XDG_CONFIG_HOME=" + root_.path() + "/config",
            "XDG_DATA_HOME=" + root_.path() + "/data",
            "PATH=/usr/local/bin:/usr/bin:/bin",
            "KAJA_SHIPPED_MARKETPLACE=" + root_.path() + "/market",
            "NO_COLOR=1"};
  }
  [[nodiscard]] CommandResult kaja(std::vector<std::string> args) const {
    args.insert(args.begin(), std::string(kaja::test::binDir()) + "/kaja");
    return runCommand(args, env());
  }
  static json row(const json& rows, const std::string& name) {
    for (const auto& item : rows) {
      if (item["name"] == name) return item;
    }
    return json();
  }
  // The node kaja finds on the tests' PATH.
  static std::string node() {
    return std::filesystem::exists("/usr/local/bin/node") ? "/usr/local/bin/node" : "/usr/bin/node";
  }
  // The allowed ability's line, with the program by name as an operator writes it.
  [[nodiscard]] std::string allowedLine() const { return "node " + script_ + " stdio"; }

  TempDir root_;
  std::string script_;
  std::string tag_;
  std::string configFile_;
};

TEST_F(StdioAllowCliTest, AbilitiesDoctorAndCallShowTheRefusalAndTheRestWorks) {
  allow("[stdio]\nallow = [\"" + allowedLine() + "\"]\n");

  const auto abilities = kaja({"abilities", "--json"});
  ASSERT_EQ(abilities.exitCode, 0) << abilities.err;
  const json rows = json::parse(abilities.out);
  EXPECT_EQ(row(rows, "allowed")["state"], "on");
  const json blocked = row(rows, "blocked");
  EXPECT_EQ(blocked["state"], "refused");
  const std::string reason = blocked["reason"];
  EXPECT_THAT(reason, HasSubstr("ability blocked's command line `" + node() + " " + script_ +
                                " stdio --evil-" + tag_ + "`"));
  EXPECT_THAT(reason, HasSubstr("allow under [stdio] in " + configFile_));

  const auto doctor = kaja({"doctor", "--json", "--timeout", "20"});
  const json report = json::parse(doctor.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << doctor.err;
  EXPECT_EQ(row(report["abilities"], "allowed")["state"], "ok") << doctor.out;
  const json refused = row(report["abilities"], "blocked");
  EXPECT_EQ(refused["state"], "refused");
  EXPECT_THAT(refused["error"].get<std::string>(), HasSubstr("stdio allow-list does not allow"));
  EXPECT_EQ(doctor.exitCode, 0) << doctor.out;
  const auto table = kaja({"doctor", "blocked"});
  EXPECT_THAT(table.out, HasSubstr("refused"));
  EXPECT_THAT(table.out, HasSubstr("allow-list"));

  const auto call = kaja({"call", "allowed", "echo", R"({"message":"through"})"});
  EXPECT_EQ(call.exitCode, 0) << call.err;
  EXPECT_THAT(call.out, HasSubstr("through"));
  const auto refusedCall =
      kaja({"call", "blocked", "echo", json{{"message", "unsaid-" + tag_}}.dump()});
  EXPECT_EQ(refusedCall.exitCode, 3) << "a refusal, as a rule refusing a call is";
  EXPECT_THAT(refusedCall.err, HasSubstr("blocked is refused: the stdio allow-list"));
  EXPECT_THAT(refusedCall.out, Not(HasSubstr("unsaid-")));
  // Nothing of `blocked` ever ran.
  EXPECT_TRUE(processesTagged("--evil-" + tag_).empty());
}

TEST_F(StdioAllowCliTest, WithoutTheListEverythingRunsAndAnEmptyListRunsNothing) {
  const auto open = kaja({"abilities", "--json"});
  ASSERT_EQ(open.exitCode, 0) << open.err;
  EXPECT_EQ(row(json::parse(open.out), "blocked")["state"], "on");

  allow("[stdio]\nallow = []\n");
  const auto closed = kaja({"abilities", "--json"});
  ASSERT_EQ(closed.exitCode, 0) << closed.err;
  EXPECT_EQ(row(json::parse(closed.out), "allowed")["state"], "refused");
  EXPECT_EQ(row(json::parse(closed.out), "blocked")["state"], "refused");
}

TEST_F(StdioAllowCliTest, AMistakeInTheListStopsEveryCommandWithItsLine) {
  allow("[stdio]\nallow = [\n  \"" + allowedLine() + "\",\n  \"npx -y pkg*\",\n]\n");
  const auto abilities = kaja({"abilities"});
  EXPECT_EQ(abilities.exitCode, 2) << abilities.err;
  EXPECT_THAT(abilities.err, HasSubstr(configFile_ + ":4"));
  EXPECT_THAT(abilities.err, HasSubstr("stdio.allow[1]"));
  EXPECT_EQ(abilities.err.find('\n'), abilities.err.size() - 1) << abilities.err;
}

TEST_F(StdioAllowCliTest, TheWorkerServesOnlyWhatItsOperatorAllows) {
  root_.write("home/.keep", "");
  const std::string key = root_.write("worker.key", std::string(32, 'q'));
  ::chmod(key.c_str(), 0600);
  // A root worker runs its servers as nobody, who must pass through to their homes.
  ::chmod(root_.path().c_str(), 0711);

  const std::string bin = std::string(kaja::test::binDir()) + "/kaja";
  const auto bad = kaja({"sandbox", "serve", "--listen", "127.0.0.1:0", "--key-file", key,
                         "--allow-stdio", "node * stdio"});
  EXPECT_EQ(bad.exitCode, 2) << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("--allow-stdio \"node * stdio\" has a '*' before its last word"));

  const std::string log = root_.path() + "/worker.err";
  ServeProcess worker({bin, "sandbox", "serve", "--listen", "127.0.0.1:0", "--key-file", key,
                       "--allow-stdio", allowedLine()},
                      env(), log);
  const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)/");
  std::string text;
  std::smatch match;
  ASSERT_TRUE(eventually(
      [&] {
        std::ifstream in(log);
        text.assign(std::istreambuf_iterator<char>(in), {});
        return std::regex_search(text, match, listening);
      },
      15))
      << text;
  const int port = std::stoi(match[1]);
  EXPECT_THAT(text, HasSubstr("serving allowed"));
  EXPECT_THAT(text, Not(HasSubstr("serving blocked")));
  EXPECT_THAT(text, HasSubstr("not served: the stdio allow-list does not allow ability blocked's"));
  EXPECT_THAT(text, HasSubstr("--allow-stdio"));

  const auto token = kaja({"sandbox", "token", "alice", "--key-file", key});
  ASSERT_EQ(token.exitCode, 0) << token.err;
  const std::string bearer = token.out.substr(0, token.out.find('\n'));
  RawHttp connection(port);
  connection.write(httpRequest(
      "POST",
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
      R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
      {{"Authorization", "Bearer " + bearer},
       {"Content-Type", "application/json"},
       {"Accept", "application/json, text/event-stream"},
       {"Connection", "close"}},
      "/users/alice/abilities/blocked/mcp"));
  const auto reply = connection.readAll(30);
  EXPECT_EQ(reply.status, 404);
  EXPECT_THAT(reply.body, HasSubstr("stdio allow-list"));
  EXPECT_TRUE(processesTagged("--evil-" + tag_).empty());

  ::kill(worker.pid(), SIGTERM);
  EXPECT_EQ(worker.waitExit(20), std::optional<int>(0));
}

}  // namespace
}  // namespace kaja::testing
