// A root worker's confined servers run as an unprivileged user: the real worker over HTTP
// on 127.0.0.1, a real (Python) stdio server that runs shell commands, the real bubblewrap,
// and the processes checked from outside.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "sandbox/confine.h"
#include "sandbox/worker.h"
#include "tests/core/server/http_client.h"
#include "tests/sandbox/sandbox_support.h"
#include "tests/support/build_paths.h"

namespace kaja::sandbox {
namespace {

namespace fs = std::filesystem;
using core::mcp::Json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr uid_t kNobody = 65534;

// A stdio MCP server with one tool, "sh", that runs its command and returns what it printed.
constexpr const char* kShellServer = R"(import json, subprocess, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, result = msg.get("method"), {}
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "sh", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "sh", "inputSchema": {"type": "object",
                  "properties": {"command": {"type": "string"}}}}]}
    elif method == "tools/call":
        ran = subprocess.run(["/bin/sh", "-c", msg["params"]["arguments"]["command"]],
                             capture_output=True, text=True)
        result = {"content": [{"type": "text", "text": ran.stdout + ran.stderr}]}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
)";

/// A real worker (confined servers, egress off) serving the shell server as "sh".
class RunAsWorker {
 public:
  explicit RunAsWorker(std::chrono::milliseconds idle) {
    // The worker's tree as an operator lays it out as root: passable, the key 0600.
    fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::others_exec);
    keyFile = dir.write("key", std::string(32, 'k'));
    fs::permissions(keyFile, fs::perms::owner_read | fs::perms::owner_write);
    const std::string script = dir.write("market/sh/server.py", kShellServer);
    secret = dir.write("market/root-only.txt", "root-only-secret-77");
    fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write);
    WorkerOptions options;
    options.kaja = std::string(kaja::test::binDir()) + "/kaja";
    options.keyFile = keyFile;
    options.key.bytes = std::string(32, 'k');
    options.stateDir = dir.path() + "/state";
    options.idle = idle;
    options.egress = false;
    // Limits, where cgroups are writable: enter joins the server's groups, then drops to
    // nobody, and removing the groups at the end kills what is left.
    options.pids = 256;
    options.memoryBytes = std::uint64_t{512} << 20;
    // The whole tree is visible, so the key and the state folder must be covered inside it.
    options.readOnly = {dir.path()};
    core::Ability shell;
    shell.name = "sh";
    shell.command = "/usr/bin/python3";
    shell.args = {script};
    shell.tools = std::vector<std::string>{"sh"};
    options.abilities.push_back(shell);
    key = options.key;
    auto made = Worker::create(io_, std::move(options));
    if (!made) throw std::runtime_error(made.error().message);
    worker_ = std::move(*made);
    limited = worker_->limitsOff().empty();
    worker_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~RunAsWorker() {
    boost::asio::post(io_, [this] { worker_->stop([this] { io_.stop(); }); });
    thread_.join();
  }
  RunAsWorker(const RunAsWorker&) = delete;
  RunAsWorker& operator=(const RunAsWorker&) = delete;

  /// Runs `command` in alice's server and returns what it printed.
  std::string sh(const std::string& command) {
    if (session_.empty()) {
      const auto reply = post(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":)"
                              R"({"protocolVersion":"2025-11-25","capabilities":{},)"
                              R"("clientInfo":{"name":"t","version":"1"}}})");
      session_ = reply.header("mcp-session-id");
      (void)post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    }
    const Json request{{"jsonrpc", "2.0"},
                       {"id", 7},
                       {"method", "tools/call"},
                       {"params", {{"name", "sh"}, {"arguments", {{"command", command}}}}}};
    const auto reply = post(request.dump());
    for (const auto& event : reply.events) {
      if (event.contains("result")) return event["result"]["content"][0].value("text", "");
    }
    return "no result: " + reply.body;
  }

  [[nodiscard]] std::vector<ServerStatus> status() {
    std::promise<std::vector<ServerStatus>> result;
    boost::asio::post(io_, [&] { result.set_value(worker_->status()); });
    return result.get_future().get();
  }

  kaja::testing::TempDir dir;
  std::string keyFile;
  std::string secret;
  WorkerKey key;
  bool limited = false;  ///< whether the servers run in cgroups of their own

 private:
  kaja::testing::HttpReply post(const std::string& body) {
    kaja::testing::RawHttp connection(worker_->port());
    std::vector<std::pair<std::string, std::string>> headers{
        {"Accept", "application/json, text/event-stream"},
        {"Content-Type", "application/json"},
        {"Authorization", "Bearer " + *makeToken(key, "alice", unixNow() + 600)},
        {"Connection", "close"}};
    if (!session_.empty()) {
      headers.emplace_back("Mcp-Session-Id", session_);
      headers.emplace_back("MCP-Protocol-Version", "2025-11-25");
    }
    connection.write(
        kaja::testing::httpRequest("POST", body, headers, "/users/alice/abilities/sh/mcp"));
    return connection.readAll(60);
  }

  boost::asio::io_context io_;
  std::unique_ptr<Worker> worker_;
  std::thread thread_;
  std::string session_;
};

/// Returns the "Uid:" line of /proc/<pid>/status (real, effective, saved, filesystem).
std::string uidLine(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("Uid:")) return line;
  }
  return "";
}

/// Runs `command` as nobody on the host (not confined) and returns its exit code.
int asNobodyOnTheHost(const std::string& command) {
  return kaja::testing::runCommand({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                                    "--clear-groups", "/bin/sh", "-c", command},
                                   {"PATH=/usr/bin:/bin"})
      .exitCode;
}

bool gone(pid_t pid) { return !fs::exists("/proc/" + std::to_string(pid)); }

TEST(SandboxWorkerRunAsTest, ARootWorkersServerIsNobodyAndCannotReachRootsThings) {
  if (::geteuid() != 0) GTEST_SKIP() << "the worker is not root here";
  if (!findBwrap({}) || ::access("/usr/bin/python3", X_OK) != 0 ||
      ::access("/usr/bin/setpriv", X_OK) != 0) {
    GTEST_SKIP() << "needs bubblewrap, /usr/bin/python3 and setpriv";
  }
  RunAsWorker worker(std::chrono::milliseconds(1500));
  const std::string who = worker.sh("id -u; id -g; id -G");
  ASSERT_EQ(who, "65534\n65534\n65534\n") << who;

  // From outside: every process of the server's tree, bwrap included, is nobody.
  const auto servers = worker.status();
  ASSERT_EQ(servers.size(), 1U);
  ASSERT_TRUE(servers[0].pid);
  const auto tree = sandbox::testing::treeOf(*servers[0].pid);
  ASSERT_GE(tree.size(), 2U);
  for (const pid_t pid : tree) {
    EXPECT_EQ(uidLine(pid), "Uid:\t65534\t65534\t65534\t65534") << "pid " << pid;
  }
  if (worker.limited) {
    const std::string groups =
        kaja::testing::readFile("/proc/" + std::to_string(tree.back()) + "/cgroup");
    EXPECT_THAT(groups, HasSubstr("kaja-sandbox-")) << groups;
  }

  const std::string swappiness = kaja::testing::readFile("/proc/sys/vm/swappiness");
  ASSERT_FALSE(swappiness.empty());
  const std::string k = worker.dir.path();
  const std::string tried = worker.sh(
      "v=$(cat /proc/sys/vm/swappiness); echo read=$v; (echo \"$v\" > "
      "/proc/sys/vm/swappiness) && echo SYSCTL-WRITTEN; cat " +
      worker.secret + " " + worker.keyFile + "; ls " + k +
      "/state; echo mine > $HOME/note; "
      "cp /bin/true $HOME/t && chmod 4755 $HOME/t; chown 0:0 $HOME/t && echo CHOWNED; echo end");
  EXPECT_THAT(tried, HasSubstr("read=" + swappiness.substr(0, swappiness.find('\n'))));
  EXPECT_THAT(tried, HasSubstr("end"));
  EXPECT_THAT(tried, Not(HasSubstr("SYSCTL-WRITTEN")));
  EXPECT_THAT(tried, Not(HasSubstr("root-only-secret")));
  EXPECT_THAT(tried, Not(HasSubstr("kkkk")));
  EXPECT_THAT(tried, Not(HasSubstr("users")));  // the state folder is covered, empty
  EXPECT_THAT(tried, Not(HasSubstr("CHOWNED")));
  EXPECT_EQ(kaja::testing::readFile("/proc/sys/vm/swappiness"), swappiness);

  // On the host: what it made is nobody's, and a set-user-ID bit gives nobody's rights only.
  const std::string home = k + "/state/users/alice/sh/home";
  struct stat made {};
  ASSERT_EQ(::stat((home + "/note").c_str(), &made), 0);
  EXPECT_EQ(made.st_uid, kNobody);
  ASSERT_EQ(::stat((home + "/t").c_str(), &made), 0);
  EXPECT_EQ(made.st_uid, kNobody);
  ASSERT_EQ(::stat(home.c_str(), &made), 0);
  EXPECT_EQ(made.st_uid, kNobody);
  EXPECT_EQ(made.st_mode & 07777, 0700U);

  // Nobody outside any sandbox may pass through the state folder, never list or read it.
  EXPECT_EQ(asNobodyOnTheHost("test -x " + k + "/state"), 0);
  EXPECT_NE(asNobodyOnTheHost("ls " + k + "/state"), 0);
  EXPECT_NE(asNobodyOnTheHost("ls " + k + "/state/users"), 0);
  EXPECT_NE(asNobodyOnTheHost("cat " + k + "/state/status.json"), 0);
  EXPECT_NE(asNobodyOnTheHost("cat " + worker.keyFile), 0);

  // Idle reaping still ends the whole tree, though it is another user's.
  ASSERT_TRUE(
      testing::eventually([&] { return worker.status().empty(); }, std::chrono::seconds(20)));
  EXPECT_TRUE(testing::eventually(
      [&] { return std::ranges::all_of(tree, [](pid_t pid) { return gone(pid); }); }));
}

TEST(SandboxWorkerRunAsTest, ServeRefusesToRunServersAsRoot) {
  kaja::testing::TempDir dir;
  const std::string key = dir.write("key", std::string(32, 'k'));
  fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write);
  for (const char* root : {"root", "0", "0:0"}) {
    const auto ran = kaja::testing::runCommandWith(
        {std::string(kaja::test::binDir()) + "/kaja", "sandbox", "serve", "--listen", "127.0.0.1:0",
         "--key-file", key, "--state", dir.path() + "/state", "--run-as", root},
        {"HOME=" + dir.path(), "XDG_CONFIG_HOME=" + dir.path() + "/config",
         "XDG_DATA_HOME=" + dir.path() + "/data", "PATH=/usr/bin:/bin",
         "KAJA_SHIPPED_MARKETPLACE=" + dir.path() + "/market"},
        {.timeoutSeconds = 20});
    EXPECT_NE(ran.exitCode, 0) << root;
    EXPECT_THAT(ran.err, HasSubstr("will not run sandboxed servers as root")) << ran.err;
    EXPECT_THAT(ran.err, Not(HasSubstr("listening"))) << ran.err;
  }
}

}  // namespace
}  // namespace kaja::sandbox
