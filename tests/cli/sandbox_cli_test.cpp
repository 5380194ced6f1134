// `kaja sandbox serve`, `token` and `status` as a user runs them: the real binary, a
// private marketplace, real confined servers, real HTTP on 127.0.0.1.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "tests/cli/serve_test_support.h"
#include "tests/core/server/http_client.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::testing {
namespace {

using nlohmann::json;

class SandboxCli {
 public:
  SandboxCli() {
    const std::string npm =
        std::string(kaja::test::sourceDir()) + "/tests/npm/node_modules/@modelcontextprotocol/";
    tag = "kaja-sandbox-cli-" + std::to_string(::getpid());
    root.write("market/abilities/everything/mcp.toml",
               "command = \"node\"\nargs = [\"" + npm +
                   "server-everything/dist/index.js\", \"stdio\"]\ntools = [\"echo\", "
                   "\"get-env\"]\nenv = { KAJA_TEST_TAG = \"" +
                   tag + "\" }\n");
    root.write("market/abilities/keyed/mcp.toml",
               "command = \"node\"\nargs = [\"x.js\"]\ntools = [\"a\"]\n"
               "auth = { type = \"apiKey\", in = \"env\", name = \"API_KEY\" }\n");
    key = root.write("worker.key", std::string(32, 'q'));
    ::chmod(key.c_str(), 0600);
    // A root worker runs its servers as nobody, who must pass through to their homes.
    ::chmod(root.path().c_str(), 0711);
  }
  ~SandboxCli() {
    for (const pid_t pid : processesTagged(tag)) ::kill(pid, SIGKILL);
  }
  SandboxCli(const SandboxCli&) = delete;
  SandboxCli& operator=(const SandboxCli&) = delete;

  [[nodiscard]] std::vector<std::string> env() const {
    return {"HOME=" + root.path() + "/home", "XDG_CONFIG_HOME=" + root.path() + "/config",
            "XDG_DATA_HOME=" + root.path() + "/data", "PATH=/usr/local/bin:/usr/bin:/bin",
            "KAJA_SHIPPED_MARKETPLACE=" + root.path() + "/market"};
  }
  [[nodiscard]] CommandResult kaja(std::vector<std::string> args) const {
    args.insert(args.begin(), std::string(kaja::test::binDir()) + "/kaja");
    return runCommand(args, env());
  }
  // Starts the worker; returns its port, or 0 (with its stderr in `log`).
  int start(std::unique_ptr<ServeProcess>& worker, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv{std::string(kaja::test::binDir()) + "/kaja",
                                  "sandbox",
                                  "serve",
                                  "--listen",
                                  "127.0.0.1:0",
                                  "--key-file",
                                  key};
    argv.insert(argv.end(), extra.begin(), extra.end());
    // A log left by an earlier worker would show its port before the new one truncates it.
    std::filesystem::remove(root.path() + "/worker.err");
    worker = std::make_unique<ServeProcess>(argv, env(), root.path() + "/worker.err");
    const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)/");
    for (int i = 0; i < 300; ++i) {
      std::ifstream in(root.path() + "/worker.err");
      log.assign(std::istreambuf_iterator<char>(in), {});
      std::smatch match;
      if (std::regex_search(log, match, listening)) return std::stoi(match[1]);
      if (worker->waitExit(0)) return 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return 0;
  }

  TempDir root;
  std::string tag;
  std::string key;
  std::string log;
};

HttpReply post(int port, const std::string& path, const std::string& body,
               const std::vector<std::pair<std::string, std::string>>& headers) {
  RawHttp connection(port);
  auto all = headers;
  all.emplace_back("Connection", "close");
  connection.write(httpRequest("POST", body, all, path));
  return connection.readAll(60);
}

TEST(SandboxCliTest, TheWorkerServesAUserAndStatusListsTheServer) {
  SandboxCli cli;
  std::unique_ptr<ServeProcess> worker;
  const int port = cli.start(worker);
  ASSERT_GT(port, 0) << cli.log;
  EXPECT_NE(cli.log.find("serving everything"), std::string::npos) << cli.log;
  EXPECT_NE(cli.log.find("not served: ability keyed needs a key"), std::string::npos) << cli.log;
  const auto token = cli.kaja({"sandbox", "token", "alice", "--key-file", cli.key});
  ASSERT_EQ(token.exitCode, 0) << token.err;
  const std::string bearer = token.out.substr(0, token.out.find('\n'));
  const auto reply = post(port, "/users/alice/abilities/everything/mcp",
                          R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":)"
                          R"("get-env","arguments":{},"_meta":{"io.modelcontextprotocol/)"
                          R"(protocolVersion":"2026-07-28","io.modelcontextprotocol/)"
                          R"(clientCapabilities":{}}}})",
                          {{"Authorization", "Bearer " + bearer},
                           {"Content-Type", "application/json"},
                           {"Accept", "application/json, text/event-stream"},
                           {"MCP-Protocol-Version", "2026-07-28"},
                           {"Mcp-Method", "tools/call"},
                           {"Mcp-Name", "get-env"}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  ASSERT_FALSE(reply.events.empty()) << reply.body;
  const std::string env = reply.events.back()["result"]["content"][0].value("text", "");
  // Confined: its HOME is the private one inside, and no key of the worker's host leaks in.
  EXPECT_NE(env.find("\"HOME\": \"/home/user\""), std::string::npos) << env;
  EXPECT_NE(env.find("HTTP_PROXY"), std::string::npos) << env;
  // status reads what the worker writes each second.
  json servers;
  for (int i = 0; i < 40; ++i) {
    const auto status = cli.kaja(
        {"sandbox", "status", "--json", "--state", cli.root.path() + "/data/kaja/sandbox"});
    ASSERT_EQ(status.exitCode, 0) << status.err;
    servers = json::parse(status.out);
    if (!servers.empty() && servers[0].contains("pid") && servers[0].value("calls", 0) == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(servers.size(), 1U) << servers.dump();
  EXPECT_EQ(servers[0]["user"], "alice");
  EXPECT_EQ(servers[0]["ability"], "everything");
  EXPECT_GT(servers[0].value("rssKb", 0), 1000);
  EXPECT_FALSE(processesTagged(cli.tag).empty());
  // SIGTERM stops the worker and every server it ran.
  ::kill(worker->pid(), SIGTERM);
  EXPECT_EQ(worker->waitExit(20), std::optional<int>(0));
  for (int i = 0; i < 50 && !processesTagged(cli.tag).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(processesTagged(cli.tag).empty());
  const auto gone =
      cli.kaja({"sandbox", "status", "--state", cli.root.path() + "/data/kaja/sandbox"});
  EXPECT_EQ(gone.exitCode, 1);
  EXPECT_NE(gone.err.find("no sandbox worker is running"), std::string::npos) << gone.err;
}

TEST(SandboxCliTest, AllowPrivateTakesOneOrMoreRangesInEitherForm) {
  SandboxCli cli;
  {
    std::unique_ptr<ServeProcess> worker;
    ASSERT_GT(cli.start(worker, {"--allow-private", "10.0.0.0/8"}), 0) << cli.log;
    EXPECT_NE(cli.log.find("kaja: servers may also reach 10.0.0.0/8 through the egress proxy\n"),
              std::string::npos)
        << cli.log;
    ::kill(worker->pid(), SIGTERM);
    EXPECT_EQ(worker->waitExit(20), std::optional<int>(0));
  }
  {
    std::unique_ptr<ServeProcess> worker;
    ASSERT_GT(cli.start(worker, {"--allow-private=192.168.5.0/24", "--allow-private", "fd00::/8"}),
              0)
        << cli.log;
    EXPECT_NE(cli.log.find("reach 192.168.5.0/24, fd00::/8 through the egress proxy"),
              std::string::npos)
        << cli.log;
    ::kill(worker->pid(), SIGTERM);
    EXPECT_EQ(worker->waitExit(20), std::optional<int>(0));
  }
  // Without the option, nothing private is announced.
  std::unique_ptr<ServeProcess> worker;
  ASSERT_GT(cli.start(worker), 0) << cli.log;
  EXPECT_EQ(cli.log.find("may also reach"), std::string::npos) << cli.log;
  // A malformed range stops the worker before it listens, with one sentence naming the
  // option and the form to use.
  const auto bad = cli.kaja({"sandbox", "serve", "--listen", "127.0.0.1:0", "--key-file", cli.key,
                             "--allow-private", "10.0.0.0/8", "--allow-private", "10.0.0.0/33"});
  EXPECT_EQ(bad.exitCode, 2) << bad.err;
  EXPECT_EQ(bad.err,
            "kaja: error: --allow-private \"10.0.0.0/33\" is not a network (its prefix length is "
            "out of range); write it as 10.0.0.0/8 or fd00::/8.\n");
}

TEST(SandboxCliTest, BadSettingsAreRefusedWithOneSentence) {
  SandboxCli cli;
  const std::string open = cli.root.write("open.key", std::string(40, 'o'));
  ::chmod(open.c_str(), 0644);
  const std::string shortKey = cli.root.write("short.key", "abc");
  ::chmod(shortKey.c_str(), 0600);
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases{
      {{"serve", "--listen", "127.0.0.1:0", "--key-file", open}, "chmod 600"},
      {{"serve", "--listen", "127.0.0.1:0", "--key-file", shortKey}, "fewer than 32"},
      {{"serve", "--listen", "nowhere", "--key-file", cli.key}, "HOST:PORT"},
      {{"serve", "--listen", "127.0.0.1:99999", "--key-file", cli.key}, "0 to 65535"},
      {{"serve", "--listen", "127.0.0.1:0"}, "--key-file"},
      {{"serve", "--listen", "127.0.0.1:0", "--key-file", cli.key, "--idle", "-5"}, "--idle"},
      {{"serve", "--listen", "127.0.0.1:0", "--key-file", cli.key, "--memory", "lots"}, "512M"},
      {{"serve", "--listen", "127.0.0.1:0", "--key-file", cli.key, "--allow-private"},
       "--allow-private needs a value"},
      {{"serve", "--listen", "127.0.0.1:0", "--key-file", cli.key, "--allow-private",
        "10.0.0.300/8"},
       "--allow-private \"10.0.0.300/8\" is not a network"},
      {{"serve", "--listen", "127.0.0.1:0", "--key-file", cli.key, "--allow-private=10.0.0.5/8"},
       "--allow-private \"10.0.0.5/8\" is not a network (it has address bits set"},
      {{"token", "Alice", "--key-file", cli.key}, "a-z"},
      {{"token", "alice", "--key-file", cli.key, "--ttl", "0"}, "--ttl"},
      {{"token", "alice", "--key-file", cli.key, "--ttl", "31622401"}, "at most 366 days"},
      {{"serve", "--listen", "127.0.0.1:0", "--key-file", cli.key, "--userns", "nosuch"},
       "--userns nosuch: no ability of that name is installed here"},
      {{"frobnicate"}, "unknown sandbox subcommand"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"sandbox"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto result = cli.kaja(args);
    EXPECT_EQ(result.exitCode, 2) << c.args[0] << " " << result.err;
    EXPECT_NE(result.err.find(c.says), std::string::npos) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  }
}

}  // namespace
}  // namespace kaja::testing
