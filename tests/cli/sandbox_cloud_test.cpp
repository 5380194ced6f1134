// kaja's host with `[sandbox]` in config.toml, against a real `kaja sandbox serve` on
// 127.0.0.1 with a marketplace and state folder of its own: eligible stdio abilities run in
// the worker over Streamable HTTP, the others here, localOnlyArgs are hidden and refused,
// and a wrong token or a worker that is down is reported, naming the sandbox, within 5 s.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <thread>

#include "tests/cli/serve_test_support.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

const std::string kEverything = std::string(kaja::test::sourceDir()) +
                                "/tests/npm/node_modules/@modelcontextprotocol/"
                                "server-everything/dist/index.js";

std::string kajaBin() { return std::string(kaja::test::binDir()) + "/kaja"; }

// A listening TCP socket on 127.0.0.1 that never accepts: a connect succeeds, and then
// nothing answers, like a worker that hangs.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        ::listen(fd_, 64) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      return;
    }
    port = ntohs(address.sin_port);
  }
  ~SilentListener() {
    if (fd_ >= 0) ::close(fd_);
  }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;
  int port = 0;

 private:
  int fd_ = -1;
};

// Returns a port on 127.0.0.1 that nothing listens on (bound, then closed).
int closedPort() {
  int port = 0;
  {
    SilentListener listener;
    port = listener.port;
  }
  return port;
}

// One `kaja sandbox serve`, with a marketplace, HOME and state folder of its own, ended
// with SIGTERM (so it stops its servers) and, failing that, SIGKILL.
class WorkerProcess {
 public:
  WorkerProcess(const std::string& root, const std::string& keyFile, const std::string& state) {
    errPath_ = root + "/worker-err.txt";
    std::vector<std::string> argv = {kajaBin(),    "sandbox", "serve",   "--listen", "127.0.0.1:0",
                                     "--key-file", keyFile,   "--state", state};
    std::vector<std::string> env = {
        "HOME=" + root + "/worker-home", "XDG_CONFIG_HOME=" + root + "/worker-config",
        "XDG_DATA_HOME=" + root + "/worker-data", "PATH=/usr/local/bin:/usr/bin:/bin",
        "KAJA_SHIPPED_MARKETPLACE=" + root + "/worker-market"};
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      const int err = ::open(errPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
      ::dup2(null, 0);
      ::dup2(null, 1);
      ::dup2(err, 2);
      std::vector<char*> args;
      for (auto& arg : argv) args.push_back(arg.data());
      args.push_back(nullptr);
      std::vector<char*> envp;
      for (auto& var : env) envp.push_back(var.data());
      envp.push_back(nullptr);
      ::execve(args[0], args.data(), envp.data());
      ::_exit(127);
    }
    // "kaja: sandbox worker listening on http://127.0.0.1:PORT/users/…"
    const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)/");
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (Clock::now() < deadline && port == 0) {
      std::smatch match;
      const std::string text = testing::readFile(errPath_);
      if (std::regex_search(text, match, listening)) port = std::stoi(match[1]);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~WorkerProcess() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < deadline) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  [[nodiscard]] std::string errors() const { return testing::readFile(errPath_); }
  int port = 0;

 private:
  pid_t pid_ = -1;
  std::string errPath_;
};

class SandboxCloudTest : public ::testing::Test {
 protected:
  SandboxCloudTest() {
    std::random_device random;
    tag_ = "kaja-cloud-tag-" + std::to_string(::getpid()) + "-" + std::to_string(random());
    home_ = root_.path() + "/home";
    state_ = root_.path() + "/worker-state";
    keyFile_ = root_.write("worker.key", std::string(48, 'w'));
    ::chmod(keyFile_.c_str(), 0600);
    // A root worker runs its servers as nobody, who must pass through to their homes.
    ::chmod(root_.path().c_str(), 0711);
    const std::string server =
        "command = \"node\"\nargs = [\"" + kEverything + "\", \"stdio\"]\napproval = \"never\"\n";
    const std::string listed = "tools = [\"echo\", \"get-env\", \"get-sum\"]\n";
    const std::string tagged = "\n[env]\nKAJA_CLOUD_TEST = \"" + tag_ + "\"\n";
    // The worker's marketplace: what it may run.
    root_.write("worker-market/abilities/everything/mcp.toml", server + listed + tagged);
    // The host's: `everything` may go to the sandbox; the others may not.
    root_.write("host-market/abilities/everything/mcp.toml",
                server + listed + "localOnlyArgs = [\"b\"]\n" + tagged);
    root_.write("host-market/abilities/nolist/mcp.toml",
                server + "localOnlyArgs = [\"b\"]\n" + tagged);
    root_.write("host-market/abilities/local/mcp.toml",
                server + listed + "localOnly = true\n" + tagged);
    root_.write("host-market/abilities/keyed/mcp.toml",
                server + listed +
                    "auth = { type = \"apiKey\", in = \"env\", name = \"DEMO_KEY\" }\n" + tagged);
    root_.write("host-market/personas/demo.toml",
                "abilities = [\"everything\", \"nolist\", \"local\", \"keyed\"]\n");
    const std::string secrets = root_.write("config/kaja/secrets.toml",
                                            "[abilities.keyed]\napi_key = \"not-a-real-key\"\n");
    ::chmod(secrets.c_str(), 0600);
  }
  ~SandboxCloudTest() override {
    // A failed test must not leave its servers to the next one.
    for (const pid_t pid : testing::processesTagged(tag_)) ::kill(pid, SIGKILL);
  }

  void configure(const std::string& sandboxTable) {
    root_.write("config/kaja/config.toml", sandboxTable);
  }
  void useWorker(int port, const std::string& credential) {
    configure("[sandbox]\nurl = \"http://127.0.0.1:" + std::to_string(port) +
              "/\"\nuser = \"alice\"\n" + credential + "\n");
  }

  testing::CommandResult kaja(const std::vector<std::string>& args, double timeout = 60) {
    std::vector<std::string> argv = {kajaBin()};
    argv.insert(argv.end(), args.begin(), args.end());
    testing::RunOptions options;
    options.timeoutSeconds = timeout;
    return testing::runCommandWith(
        argv,
        {"HOME=" + home_, "XDG_CONFIG_HOME=" + root_.path() + "/config",
         "XDG_DATA_HOME=" + root_.path() + "/data", "PATH=/usr/local/bin:/usr/bin:/bin",
         "KAJA_SHIPPED_MARKETPLACE=" + root_.path() + "/host-market"},
        options);
  }
  testing::CommandResult call(const std::string& ability, const std::string& tool,
                              const json& arguments) {
    return kaja({"call", "--persona", "demo", ability, tool, arguments.dump()});
  }

  // The worker's live servers, as `kaja sandbox status --json` lists them.
  json workerServers() {
    auto status = testing::runCommand(
        {kajaBin(), "sandbox", "status", "--state", state_, "--json"},
        {"HOME=" + root_.path() + "/worker-home", "PATH=/usr/local/bin:/usr/bin:/bin"});
    json servers = json::parse(status.out, nullptr, false);
    return servers.is_array() ? servers : json::array();
  }

  testing::TempDir root_;
  std::string tag_;
  std::string home_;
  std::string state_;
  std::string keyFile_;
};

bool listsServer(const json& servers, const std::string& user, const std::string& ability) {
  for (const auto& server : servers) {
    if (server.value("user", "") == user && server.value("ability", "") == ability) return true;
  }
  return false;
}

TEST_F(SandboxCloudTest, EligibleAbilityRunsInTheWorkerAndTheOthersHere) {
  WorkerProcess worker(root_.path(), keyFile_, state_);
  ASSERT_GT(worker.port, 0) << worker.errors();
  useWorker(worker.port, "key_file = \"" + keyFile_ + "\"");

  auto echoed = call("everything", "echo", {{"message", "hi from the cloud"}});
  ASSERT_EQ(echoed.exitCode, 0) << echoed.err;
  EXPECT_THAT(echoed.out, HasSubstr("hi from the cloud"));

  // The worker's status lists alice's server (it writes its status once a second).
  bool listed = false;
  for (auto deadline = Clock::now() + std::chrono::seconds(5); !listed && Clock::now() < deadline;
       std::this_thread::sleep_for(std::chrono::milliseconds(200))) {
    listed = listsServer(workerServers(), "alice", "everything");
  }
  EXPECT_TRUE(listed);

  // Its environment is the worker's confined one: the private home inside and the proxy.
  auto env = call("everything", "get-env", json::object());
  ASSERT_EQ(env.exitCode, 0) << env.err;
  EXPECT_THAT(env.out, HasSubstr("\"HOME\": \"/home/user\""));
  EXPECT_THAT(env.out, HasSubstr("HTTP_PROXY"));
  EXPECT_THAT(env.out, Not(HasSubstr(home_)));
  EXPECT_TRUE(std::filesystem::exists(state_ + "/users/alice/everything/home"));

  // An ability without a tools list runs here, with the host's HOME.
  auto local = call("nolist", "get-env", json::object());
  ASSERT_EQ(local.exitCode, 0) << local.err;
  EXPECT_THAT(local.out, HasSubstr(home_));
  EXPECT_THAT(local.out, Not(HasSubstr(state_)));
  EXPECT_FALSE(listsServer(workerServers(), "alice", "nolist"));

  // `kaja abilities` says where each runs, and why the others stay here; no token shown.
  auto abilities = kaja({"abilities", "--json"});
  ASSERT_EQ(abilities.exitCode, 0) << abilities.err;
  EXPECT_THAT(abilities.out, Not(HasSubstr("kj1_")));
  std::map<std::string, json> rows;
  for (const auto& row : json::parse(abilities.out)) rows[row["name"]] = row;
  EXPECT_EQ(rows["everything"]["runner"], "sandbox");
  EXPECT_EQ(rows["everything"]["runs"], "http://127.0.0.1:" + std::to_string(worker.port) +
                                            "/users/alice/abilities/everything/mcp");
  EXPECT_EQ(rows["everything"]["sandbox"]["runsThere"], true);
  EXPECT_EQ(rows["nolist"]["runner"], "command");
  EXPECT_EQ(rows["nolist"]["sandbox"]["runsThere"], false);
  EXPECT_THAT(rows["nolist"]["sandbox"]["reason"].get<std::string>(), HasSubstr("tools"));
  EXPECT_EQ(rows["local"]["runner"], "command");
  EXPECT_THAT(rows["local"]["sandbox"]["reason"].get<std::string>(), HasSubstr("localOnly"));
  EXPECT_EQ(rows["keyed"]["runner"], "command");
  EXPECT_THAT(rows["keyed"]["sandbox"]["reason"].get<std::string>(), HasSubstr("key"));
  auto table = kaja({"abilities"});
  EXPECT_THAT(table.out, HasSubstr("sandbox"));
  EXPECT_THAT(table.out, HasSubstr("local: ability nolist"));

  // The keyed and local-only abilities run here too.
  auto keyed = call("keyed", "get-env", json::object());
  ASSERT_EQ(keyed.exitCode, 0) << keyed.err;
  EXPECT_THAT(keyed.out, HasSubstr(home_));
  EXPECT_FALSE(listsServer(workerServers(), "alice", "keyed"));
  EXPECT_FALSE(listsServer(workerServers(), "alice", "local"));

  // Doctor connects it over HTTP and says so.
  auto doctor = kaja({"doctor", "--json", "everything", "nolist"});
  json report = json::parse(doctor.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << doctor.out << doctor.err;
  for (const auto& row : report["abilities"]) {
    EXPECT_EQ(row["state"], "ok") << row.dump();
    if (row["name"] == "everything") {
      EXPECT_EQ(row["runner"], "sandbox");
      EXPECT_THAT(row["hint"].get<std::string>(), HasSubstr("runs in the sandbox at"));
    }
  }
}

TEST_F(SandboxCloudTest, LocalOnlyArgsAreHiddenAndRefusedInTheSandboxOnly) {
  WorkerProcess worker(root_.path(), keyFile_, state_);
  ASSERT_GT(worker.port, 0) << worker.errors();
  // A token made ahead, in a file.
  auto token = testing::runCommand(
      {kajaBin(), "sandbox", "token", "alice", "--key-file", keyFile_, "--ttl", "600"},
      {"HOME=" + home_, "PATH=/usr/local/bin:/usr/bin:/bin"});
  ASSERT_EQ(token.exitCode, 0) << token.err;
  root_.write("config/kaja/alice.token", token.out);
  useWorker(worker.port, "token_file = \"alice.token\"");

  auto tools = kaja({"tools", "--persona", "demo", "--json"});
  ASSERT_EQ(tools.exitCode, 0) << tools.err;
  json listed = json::parse(tools.out);
  json sandboxed;
  json local;
  for (const auto& tool : listed["tools"]) {
    if (tool["name"] == "mcp__everything__get-sum") sandboxed = tool["inputSchema"];
    if (tool["name"] == "mcp__nolist__get-sum") local = tool["inputSchema"];
  }
  ASSERT_TRUE(sandboxed.is_object()) << tools.out;
  ASSERT_TRUE(local.is_object()) << tools.out;
  EXPECT_TRUE(sandboxed["properties"].contains("a"));
  EXPECT_FALSE(sandboxed["properties"].contains("b"));
  EXPECT_THAT(sandboxed.value("required", json::array()).dump(), Not(HasSubstr("\"b\"")));
  // Here the argument acts on the user's own machine, so it stays.
  EXPECT_TRUE(local["properties"].contains("b"));

  auto refused = call("everything", "get-sum", {{"a", 1}, {"b", 2}});
  EXPECT_EQ(refused.exitCode, 3) << refused.out << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("local-only"));
  EXPECT_THAT(refused.err, HasSubstr("\"b\""));
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;

  auto allowed = call("nolist", "get-sum", {{"a", 1}, {"b", 2}});
  ASSERT_EQ(allowed.exitCode, 0) << allowed.err;
  EXPECT_THAT(allowed.out, HasSubstr("3"));
}

TEST_F(SandboxCloudTest, WrongTokenNamesTheSandbox) {
  WorkerProcess worker(root_.path(), keyFile_, state_);
  ASSERT_GT(worker.port, 0) << worker.errors();
  // Signed under another key.
  const std::string otherKey = root_.write("other.key", std::string(48, 'o'));
  ::chmod(otherKey.c_str(), 0600);
  useWorker(worker.port, "key_file = \"" + otherKey + "\"");

  auto result = call("everything", "echo", {{"message", "hi"}});
  EXPECT_NE(result.exitCode, 0);
  EXPECT_THAT(result.err,
              HasSubstr("the sandbox at http://127.0.0.1:" + std::to_string(worker.port)));
  EXPECT_THAT(result.err, HasSubstr("token"));
  EXPECT_THAT(result.err, HasSubstr("config.toml"));
  EXPECT_THAT(result.err, Not(HasSubstr("kaja key set")));
  EXPECT_THAT(result.err, Not(HasSubstr("kj1_")));
  EXPECT_FALSE(listsServer(workerServers(), "alice", "everything"));
}

TEST_F(SandboxCloudTest, WorkerThatHangsOrIsDownFailsWithinFiveSeconds) {
  SilentListener silent;
  ASSERT_GT(silent.port, 0);
  useWorker(silent.port, "key_file = \"" + keyFile_ + "\"");
  auto started = Clock::now();
  // Doctor's own limit is 10 s; a sandboxed ability gets 5 s.
  auto hung = kaja({"doctor", "--json", "everything", "nolist"}, 30);
  double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  json report = json::parse(hung.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << hung.out << hung.err;
  EXPECT_LT(seconds, 9.0);
  for (const auto& row : report["abilities"]) {
    if (row["name"] == "nolist") {
      EXPECT_EQ(row["state"], "ok") << row.dump();
      continue;
    }
    EXPECT_EQ(row["state"], "failed");
    EXPECT_THAT(row["error"].get<std::string>(), HasSubstr("the sandbox at"));
    EXPECT_THAT(row["error"].get<std::string>(), HasSubstr("5 s"));
    EXPECT_GE(row["ms"].get<long>(), 4500);
    EXPECT_LT(row["ms"].get<long>(), 7000);
  }

  useWorker(closedPort(), "key_file = \"" + keyFile_ + "\"");
  started = Clock::now();
  auto down = kaja({"doctor", "--json", "everything"}, 30);
  seconds = std::chrono::duration<double>(Clock::now() - started).count();
  EXPECT_LT(seconds, 7.0);
  EXPECT_NE(down.exitCode, 0);
  json downReport = json::parse(down.out, nullptr, false);
  ASSERT_TRUE(downReport.is_object()) << down.out << down.err;
  EXPECT_EQ(downReport["abilities"][0]["state"], "failed");
  EXPECT_THAT(downReport["abilities"][0]["error"].get<std::string>(), HasSubstr("the sandbox at"));
}

TEST_F(SandboxCloudTest, ConfigMistakesNameFileAndLine) {
  const std::string file = root_.path() + "/config/kaja/config.toml";
  struct Case {
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"[sandbox]\nurl = \"http://127.0.0.1:1\"\nuser = \"alice\"\ntokn_file = \"t\"\n",
       file + ":4: \"sandbox.tokn_file\" is not a known key; did you mean \"sandbox.token_file\"?"},
      {"[sandbox]\nurl = \"http://127.0.0.1:1\"\nuser = \"Alice\"\nkey_file = \"k\"\n",
       file + ":3: \"sandbox.user\" must be 1 to 64 characters"},
      {"[sandbox]\nurl = \"ftp://example\"\nuser = \"alice\"\nkey_file = \"k\"\n",
       file + ":2: \"sandbox.url\" must start with http:// or https://"},
      {"[sandbox]\nurl = \"http://127.0.0.1:1\"\nuser = \"alice\"\n",
       file + ":1: \"sandbox\" needs exactly one of token_file"},
      {"[sandbox]\nurl = \"http://127.0.0.1:1\"\nuser = \"alice\"\nkey_file = \"k\"\n"
       "token_file = \"t\"\n",
       file + ":1: \"sandbox\" needs exactly one of token_file"},
      {"[sandbox]\nurl = \"http://127.0.0.1:1\"\nuser = \"alice\"\nshared = \"yes\"\n"
       "key_file = \"k\"\n",
       file + ":4: \"sandbox.shared\""},
      {"[sandbx]\n", file + ":1: \"sandbx\" is not a known key; did you mean \"sandbox\"?"},
      // The key file itself is checked when a command needs the worker.
      {"[sandbox]\nurl = \"http://127.0.0.1:1\"\nuser = \"alice\"\nkey_file = \"missing.key\"\n",
       file + ":4: "},
  };
  for (const auto& item : cases) {
    configure(item.text);
    auto result = kaja({"abilities"});
    EXPECT_NE(result.exitCode, 0) << item.text;
    EXPECT_THAT(result.err, HasSubstr(item.expected)) << item.text;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  }
}

TEST_F(SandboxCloudTest, ServeOffersTheSandboxedToolsWithoutLocalOnlyArgs) {
  WorkerProcess worker(root_.path(), keyFile_, state_);
  ASSERT_GT(worker.port, 0) << worker.errors();
  useWorker(worker.port, "key_file = \"" + keyFile_ + "\"");
  const std::string errPath = root_.path() + "/serve-err.txt";
  testing::ServeProcess serve(
      {kajaBin(), "serve", "--persona", "demo"},
      {"HOME=" + home_, "XDG_CONFIG_HOME=" + root_.path() + "/config",
       "XDG_DATA_HOME=" + root_.path() + "/data", "PATH=/usr/local/bin:/usr/bin:/bin",
       "KAJA_SHIPPED_MARKETPLACE=" + root_.path() + "/host-market"},
      errPath);
  ASSERT_FALSE(serve.initialize().is_null()) << testing::readFile(errPath);
  auto request = [](int id, const std::string& method, const json& params) {
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
  };
  serve.send(request(1, "tools/list", json::object()));
  auto listed = serve.answer(1, 30);
  ASSERT_TRUE(listed && listed->contains("result")) << testing::readFile(errPath);
  json sum;
  for (const auto& tool : (*listed)["result"]["tools"]) {
    if (tool["name"] == "everything__get-sum") sum = tool;
  }
  ASSERT_TRUE(sum.is_object()) << listed->dump();
  EXPECT_TRUE(sum["inputSchema"]["properties"].contains("a"));
  EXPECT_FALSE(sum["inputSchema"]["properties"].contains("b"));

  serve.send(request(2, "tools/call",
                     {{"name", "everything__get-sum"}, {"arguments", {{"a", 1}, {"b", 2}}}}));
  auto refused = serve.answer(2, 30);
  ASSERT_TRUE(refused) << testing::readFile(errPath);
  EXPECT_THAT(refused->dump(), HasSubstr("local-only"));

  serve.send(request(3, "tools/call",
                     {{"name", "everything__echo"}, {"arguments", {{"message", "via serve"}}}}));
  auto echoed = serve.answer(3, 30);
  ASSERT_TRUE(echoed && echoed->contains("result")) << testing::readFile(errPath);
  EXPECT_THAT((*echoed)["result"].dump(), HasSubstr("via serve"));
  EXPECT_TRUE(listsServer(workerServers(), "alice", "everything") || [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    return listsServer(workerServers(), "alice", "everything");
  }());
  serve.closeInput();
  EXPECT_TRUE(serve.waitExit(10).has_value());
}

}  // namespace
}  // namespace kaja::cli
