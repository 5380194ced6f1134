// The sandbox worker over real HTTP on 127.0.0.1, with real server-everything processes
// (unconfined here: the confinement has tests of its own).
#include "sandbox/worker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <sstream>
#include <thread>

#include "sandbox/confine.h"
#include "tests/core/server/http_client.h"
#include "tests/sandbox/sandbox_support.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::sandbox {
namespace {

using core::mcp::Json;
using kaja::testing::HttpReply;
using kaja::testing::RawHttp;
using Headers = std::vector<std::pair<std::string, std::string>>;

const std::string kEverything = std::string(kaja::test::sourceDir()) +
                                "/tests/npm/node_modules/@modelcontextprotocol/"
                                "server-everything/dist/index.js";

core::Ability everything(const std::string& name) {
  core::Ability ability;
  ability.name = name;
  ability.command = "node";
  ability.args = {kEverything, "stdio"};
  ability.tools = std::vector<std::string>{"echo", "get-env", "trigger-long-running-operation"};
  return ability;
}

const std::string kFilesystem = std::string(kaja::test::sourceDir()) +
                                "/tests/npm/node_modules/@modelcontextprotocol/"
                                "server-filesystem/dist/index.js";

class WorkerHarness {
 public:
  explicit WorkerHarness(std::chrono::milliseconds idle = std::chrono::minutes(10),
                         bool shared = false, bool isolate = false) {
    WorkerOptions options;
    options.isolate = isolate;
    // A root worker's confined servers run as nobody, who must pass through to their homes.
    std::filesystem::permissions(
        dir.path(), std::filesystem::perms::owner_all | std::filesystem::perms::others_exec);
    options.kaja = std::string(kaja::test::binDir()) + "/kaja";
    options.keyFile = dir.write("key", std::string(32, 'k'));
    options.key.bytes = std::string(32, 'k');
    // A filesystem server given its own home as its one folder.
    core::Ability files;
    files.name = "files";
    files.command = "node";
    files.args = {kFilesystem, "/home/user"};
    files.tools = std::vector<std::string>{"write_file", "read_text_file", "list_directory"};
    options.abilities.push_back(files);
    core::Ability faulty;
    faulty.name = "faulty";
    faulty.command = std::string(kaja::test::binDir()) + "/kaja_fault_server";
    faulty.tools = std::vector<std::string>{"echo", "crash"};
    options.abilities.push_back(faulty);
    options.shared = shared;
    options.idle = idle;
    options.stateDir = dir.path() + "/state";
    options.abilities.push_back(everything("everything"));
    core::Ability noList = everything("nolist");
    noList.tools.reset();
    options.abilities.push_back(noList);
    core::Ability keyed = everything("keyed");
    keyed.auth = core::AuthSpec{core::KeyPlacement::kEnv, "API_KEY", "", false};
    options.abilities.push_back(keyed);
    core::Ability local = everything("local");
    local.localOnly = true;
    options.abilities.push_back(local);
    core::Ability trusted = everything("trusted");
    trusted.trustedSandbox = true;
    options.abilities.push_back(trusted);
    // The one ability whose servers may make user namespaces of their own (`--userns`).
    options.userNamespaces = {"trusted"};
    key = options.key;
    auto made = Worker::create(io_, std::move(options));
    if (!made) throw std::runtime_error(made.error().message);
    worker_ = std::move(*made);
    worker_->start();
    port = worker_->port();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~WorkerHarness() {
    boost::asio::post(io_, [this] { worker_->stop([this] { io_.stop(); }); });
    thread_.join();
  }
  WorkerHarness(const WorkerHarness&) = delete;
  WorkerHarness& operator=(const WorkerHarness&) = delete;

  [[nodiscard]] std::string token(const std::string& user, std::int64_t ttl = 600) const {
    return *makeToken(key, user, unixNow() + ttl);
  }

  [[nodiscard]] HttpReply send(const std::string& method, const std::string& path,
                               const std::string& body, Headers headers) const {
    RawHttp connection(port);
    headers.emplace_back("Connection", "close");
    connection.write(kaja::testing::httpRequest(method, body, headers, path));
    return connection.readAll(60);
  }

  [[nodiscard]] static Headers mcpHeaders(const std::string& token, const Headers& more = {}) {
    Headers headers{{"Accept", "application/json, text/event-stream"},
                    {"Content-Type", "application/json"},
                    {"Authorization", "Bearer " + token}};
    headers.insert(headers.end(), more.begin(), more.end());
    return headers;
  }

  /// Initializes a 2025-11-25 session at `path` and returns its id.
  [[nodiscard]] std::string initialize(const std::string& path, const std::string& token,
                                       const Headers& more = {}) const {
    const auto reply = send("POST", path,
                            R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":)"
                            R"({"protocolVersion":"2025-11-25","capabilities":{},)"
                            R"("clientInfo":{"name":"t","version":"1"}}})",
                            mcpHeaders(token, more));
    const std::string id = reply.header("mcp-session-id");
    (void)send("POST", path, R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
               mcpHeaders(token, with(more, {{"Mcp-Session-Id", id}})));
    return id;
  }

  /// Calls `tool` in session `session` and returns the response's result (or error).
  [[nodiscard]] Json call(const std::string& path, const std::string& token,
                          const std::string& session, const std::string& tool,
                          const Json& arguments, const Headers& more = {}) const {
    const Json request{{"jsonrpc", "2.0"},
                       {"id", 7},
                       {"method", "tools/call"},
                       {"params", {{"name", tool}, {"arguments", arguments}}}};
    const auto reply =
        send("POST", path, request.dump(),
             mcpHeaders(token, with(more, {{"Mcp-Session-Id", session},
                                           {"MCP-Protocol-Version", "2025-11-25"}})));
    for (const auto& event : reply.events) {
      if (event.contains("id")) return event;
    }
    return Json{{"status", reply.status}, {"body", reply.body}};
  }

  [[nodiscard]] std::vector<ServerStatus> status() {
    std::promise<std::vector<ServerStatus>> result;
    boost::asio::post(io_, [&] { result.set_value(worker_->status()); });
    return result.get_future().get();
  }

  static Headers with(Headers headers, const Headers& more) {
    headers.insert(headers.end(), more.begin(), more.end());
    return headers;
  }

  kaja::testing::TempDir dir;
  WorkerKey key;
  int port = 0;

 private:
  boost::asio::io_context io_;
  std::unique_ptr<Worker> worker_;
  std::thread thread_;
};

// Waits up to 10 s for `done`; returns whether it came true.
template <class Done>
bool eventually(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

// Whether `pid` is gone: not running and not left as a zombie.
bool gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  return !stat.good();
}

std::string path(const std::string& user, const std::string& ability = "everything") {
  return "/users/" + user + "/abilities/" + ability + "/mcp";
}

std::string text(const Json& response) {
  const auto& content = response["result"]["content"];
  return content.is_array() && !content.empty() ? content[0].value("text", "") : response.dump();
}

TEST(SandboxWorkerTest, ArgumentsShowOnlyRegularFilesAndTheirPackages) {
  kaja::testing::TempDir dir;
  const std::string module = dir.write("pkg/node_modules/srv/dist/index.js", "//");
  const std::string plain = dir.write("tools/run.sh", "#!/bin/sh");
  const std::string folder = dir.path() + "/tools";
  std::filesystem::create_symlink("/", dir.path() + "/root-link");
  std::filesystem::create_symlink(folder, dir.path() + "/folder-link");
  std::filesystem::create_symlink(module, dir.path() + "/module-link");
  core::LaunchPlan plan;
  plan.argv = {"/usr/bin/node",
               module,
               plain,
               folder,
               dir.path() + "/root-link",
               dir.path() + "/root-link/etc",
               dir.path() + "/folder-link",
               dir.path() + "/module-link",
               "/dev/null",
               "/proc/self/root",
               dir.path() + "/missing",
               "relative/path"};
  // A unix socket, as a hostile manifest would name the Docker or D-Bus socket.
  const std::string socketPath = dir.path() + "/s.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socketPath.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  plan.argv.push_back(socketPath);
  const auto shown = argumentPaths(plan);
  ::close(fd);
  const std::string modules = std::filesystem::canonical(dir.path()).string() + "/pkg/node_modules";
  // The package, twice (by its path and through a link); the plain script, the folders, the
  // links to / and /etc, the device, the socket and the missing path give nothing.
  EXPECT_EQ(shown, (std::vector<std::string>{modules, modules}));
}

TEST(SandboxWorkerTest, BadTokensNamesAndAbilitiesAreRefusedAndStartNothing) {
  WorkerHarness h;
  const std::string init = R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}})";
  const std::string alice = h.token("alice");
  // No token, a token under another key, an expired one, one for another user.
  Headers noToken = WorkerHarness::mcpHeaders("x");
  noToken.pop_back();
  EXPECT_EQ(h.send("POST", path("alice"), init, noToken).status, 401);
  WorkerKey other{std::string(32, 'o')};
  const std::string forged = *makeToken(other, "alice", unixNow() + 600);
  const auto forgedReply = h.send("POST", path("alice"), init, WorkerHarness::mcpHeaders(forged));
  EXPECT_EQ(forgedReply.status, 401);
  EXPECT_NE(forgedReply.header("www-authenticate").find("invalid_token"), std::string::npos);
  const std::string expired = *makeToken(h.key, "alice", unixNow() - 1);
  EXPECT_EQ(h.send("POST", path("alice"), init, WorkerHarness::mcpHeaders(expired)).status, 401);
  std::string tampered = alice;
  tampered[4] = tampered[4] == '9' ? '8' : '9';  // a later expiry, same signature
  EXPECT_EQ(h.send("POST", path("alice"), init, WorkerHarness::mcpHeaders(tampered)).status, 401);
  EXPECT_EQ(h.send("POST", path("bob"), init, WorkerHarness::mcpHeaders(alice)).status, 403);
  // Names outside [a-z0-9._-]{1,64}, and path tricks.
  for (const std::string& bad : std::vector<std::string>{
           "/users/Alice/abilities/everything/mcp", "/users/al%2fice/abilities/everything/mcp",
           "/users/../abilities/everything/mcp", "/users/alice/abilities/every thing/mcp",
           "/users/" + std::string(65, 'a') + "/abilities/everything/mcp"}) {
    EXPECT_EQ(h.send("POST", bad, init, WorkerHarness::mcpHeaders(alice)).status, 400) << bad;
  }
  EXPECT_EQ(h.send("POST", "/users/alice/abilities/everything/mcp/../mcp", init,
                   WorkerHarness::mcpHeaders(alice))
                .status,
            404);
  // Abilities the cloud may not run, and one that does not exist.
  for (const std::string refused : {"nolist", "keyed", "local", "missing"}) {
    const auto reply =
        h.send("POST", path("alice", refused), init, WorkerHarness::mcpHeaders(alice));
    EXPECT_EQ(reply.status, 404) << refused;
    EXPECT_NE(reply.body.find("does not run " + refused), std::string::npos) << reply.body;
  }
  EXPECT_TRUE(h.status().empty());
  EXPECT_EQ(h.send("GET", "/healthz", "", {}).status, 200);
}

TEST(SandboxWorkerTest, EachUserGetsAServerOfTheirOwnWithAHomeOfTheirOwn) {
  WorkerHarness h;
  const std::string alice = h.token("alice");
  const std::string bob = h.token("bob");
  const std::string aliceSession = h.initialize(path("alice"), alice);
  const std::string bobSession = h.initialize(path("bob"), bob);
  ASSERT_FALSE(aliceSession.empty());
  ASSERT_FALSE(bobSession.empty());
  EXPECT_EQ(text(h.call(path("alice"), alice, aliceSession, "echo", {{"message", "a"}})),
            "Echo: a");
  const Json aliceEnv = h.call(path("alice"), alice, aliceSession, "get-env", Json::object());
  const Json bobEnv = h.call(path("bob"), bob, bobSession, "get-env", Json::object());
  EXPECT_NE(text(aliceEnv).find("/users/alice/everything/home"), std::string::npos)
      << text(aliceEnv);
  EXPECT_NE(text(bobEnv).find("/users/bob/everything/home"), std::string::npos) << text(bobEnv);
  // Alice's session is not Bob's, even with Bob's path and his own token.
  const Json crossed = h.call(path("bob"), bob, aliceSession, "echo", {{"message", "x"}});
  EXPECT_EQ(crossed.value("status", 0), 404) << crossed.dump();
  const auto servers = h.status();
  ASSERT_EQ(servers.size(), 2U);
  ASSERT_TRUE(servers[0].pid && servers[1].pid);
  EXPECT_NE(*servers[0].pid, *servers[1].pid);
  EXPECT_EQ(servers[0].key.user, "alice");
  EXPECT_EQ(servers[0].calls, 2U);
}

TEST(SandboxWorkerTest, ConfinedServersSeeOnlyTheirOwnHome) {
  if (!findBwrap({})) GTEST_SKIP() << "bubblewrap is not installed";
  WorkerHarness h(std::chrono::minutes(10), false, true);
  const std::string alice = h.token("alice");
  const std::string bob = h.token("bob");
  const std::string aliceSession = h.initialize(path("alice", "files"), alice);
  const std::string bobSession = h.initialize(path("bob", "files"), bob);
  const Json wrote = h.call(path("alice", "files"), alice, aliceSession, "write_file",
                            {{"path", "/home/user/note.txt"}, {"content", "alice's"}});
  EXPECT_NE(text(wrote).find("Successfully wrote"), std::string::npos) << wrote.dump();
  // On the worker's side the note is in Alice's home and nowhere else.
  const std::string aliceHome = h.dir.path() + "/state/users/alice/files/home";
  EXPECT_TRUE(std::filesystem::exists(aliceHome + "/note.txt"));
  const Json listed =
      h.call(path("bob", "files"), bob, bobSession, "list_directory", {{"path", "/home/user"}});
  EXPECT_EQ(text(listed).find("note.txt"), std::string::npos) << listed.dump();
  for (const std::string& attempt :
       {aliceHome + "/note.txt", std::string("/home/user/../../") + aliceHome + "/note.txt",
        h.dir.path() + "/key"}) {
    const Json read =
        h.call(path("bob", "files"), bob, bobSession, "read_text_file", {{"path", attempt}});
    EXPECT_EQ(text(read).find("alice's"), std::string::npos) << read.dump();
    EXPECT_EQ(text(read).find("kkkk"), std::string::npos) << read.dump();
  }
  const auto servers = h.status();
  ASSERT_EQ(servers.size(), 2U);
  ASSERT_TRUE(servers[0].pid && servers[1].pid);
  EXPECT_NE(*servers[0].pid, *servers[1].pid);
}

// Whether a process in the user namespace of the server itself (node, the tree's leaf) can make
// a user namespace: "yes", "no: <why>", or why that could not be tried.
std::string makesUserNamespaces(pid_t top) {
  for (pid_t pid : sandbox::testing::treeOf(top)) {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    if (!std::getline(comm, name) || name != "node") continue;
    std::vector<std::string> argv = {"/usr/bin/unshare", "-U", "/bin/true"};
    // nsenter refuses to enter the namespace it is in already (a root worker's server may
    // share this process's); the server's ids may not be mapped there, so it keeps these.
    if (std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/ns/user") !=
        std::filesystem::read_symlink("/proc/self/ns/user")) {
      std::ifstream status("/proc/" + std::to_string(pid) + "/status");
      std::string line;
      std::string uid = "0";
      std::string gid = "0";
      while (std::getline(status, line)) {
        std::istringstream fields(line);
        std::string field;
        fields >> field;
        if (field == "Uid:") fields >> uid;
        if (field == "Gid:") fields >> gid;
      }
      argv.insert(argv.begin(),
                  {"/usr/bin/nsenter", "-S", uid, "-G", gid, "-t", std::to_string(pid), "-U"});
    }
    const auto ran = kaja::testing::runCommand(argv, {});
    return ran.exitCode == 0 ? "yes" : "no: " + ran.err;
  }
  return "no node process under " + std::to_string(top);
}

// A server in a user namespace of its own holds every capability there, over the kernel code
// most container escapes go through: only the abilities the worker was told (--userns) get one.
TEST(SandboxWorkerTest, OnlyTheAbilitiesAllowedThemMayMakeUserNamespaces) {
  if (!findBwrap({})) GTEST_SKIP() << "bubblewrap is not installed";
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to look into a server's user namespace";
  WorkerHarness h(std::chrono::minutes(10), false, true);
  const std::string alice = h.token("alice");
  for (const char* ability : {"everything", "trusted"}) {
    const std::string session = h.initialize(path("alice", ability), alice);
    ASSERT_FALSE(session.empty()) << ability;
    EXPECT_EQ(text(h.call(path("alice", ability), alice, session, "echo", {{"message", "up"}})),
              "Echo: up");
  }
  std::map<std::string, std::string> made;
  for (const auto& server : h.status()) {
    ASSERT_TRUE(server.pid) << server.key.text();
    made[server.key.ability] = makesUserNamespaces(*server.pid);
  }
  EXPECT_THAT(made["everything"], ::testing::StartsWith("no: unshare: unshare failed"));
  EXPECT_EQ(made["trusted"], "yes");
}

TEST(SandboxWorkerTest, AnIdleServerIsStoppedAndTheSessionStartsItAgain) {
  WorkerHarness h(std::chrono::milliseconds(1500));
  const std::string alice = h.token("alice");
  const std::string session = h.initialize(path("alice"), alice);
  EXPECT_EQ(text(h.call(path("alice"), alice, session, "echo", {{"message", "1"}})), "Echo: 1");
  auto servers = h.status();
  ASSERT_EQ(servers.size(), 1U);
  ASSERT_TRUE(servers[0].pid);
  const pid_t first = *servers[0].pid;
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_EQ(h.status().size(), 1U) << "stopped before its idle deadline";
  // Generous: reaping is within 200 ms of the deadline (see the sandbox benchmark).
  EXPECT_TRUE(eventually([&] { return h.status().empty(); }));
  EXPECT_TRUE(eventually([&] { return gone(first); }))
      << "the reaped server's process is still there";
  // The same session goes on: kaja starts the server again and initializes it.
  EXPECT_EQ(text(h.call(path("alice"), alice, session, "echo", {{"message", "2"}})), "Echo: 2");
  servers = h.status();
  ASSERT_EQ(servers.size(), 1U);
  ASSERT_TRUE(servers[0].pid);
  EXPECT_NE(*servers[0].pid, first);
}

TEST(SandboxWorkerTest, ACrashedServerIsStartedAgainAndOthersKeepWorking) {
  WorkerHarness h;
  const std::string alice = h.token("alice");
  const std::string session = h.initialize(path("alice", "faulty"), alice);
  const std::string other = h.initialize(path("alice"), alice);
  EXPECT_EQ(text(h.call(path("alice", "faulty"), alice, session, "echo", {{"text", "1"}})), "1");
  const auto before = h.status();
  ASSERT_EQ(before.size(), 2U);
  ASSERT_TRUE(before[1].pid);
  const pid_t first = *before[1].pid;
  const Json crashed = h.call(path("alice", "faulty"), alice, session, "crash", Json::object());
  EXPECT_TRUE(crashed.contains("error") || crashed["result"].value("isError", false))
      << crashed.dump();
  // The other server of the same user is untouched.
  EXPECT_EQ(text(h.call(path("alice"), alice, other, "echo", {{"message", "still"}})),
            "Echo: still");
  // The crashed one comes back (after its backoff) in the same session.
  std::string answer;
  EXPECT_TRUE(eventually([&] {
    answer = text(h.call(path("alice", "faulty"), alice, session, "echo", {{"text", "2"}}));
    return answer == "2";
  })) << answer;
  const auto after = h.status();
  ASSERT_EQ(after.size(), 2U);
  ASSERT_TRUE(after[1].pid);
  EXPECT_NE(*after[1].pid, first);
}

TEST(SandboxWorkerTest, ACallThatOutlivesTheIdleDeadlineIsNeverCut) {
  WorkerHarness h(std::chrono::milliseconds(800));
  const std::string alice = h.token("alice");
  const std::string session = h.initialize(path("alice"), alice);
  // Three seconds in flight, well past the 0.8 s idle deadline.
  const Json done = h.call(path("alice"), alice, session, "trigger-long-running-operation",
                           {{"duration", 3}, {"steps", 3}});
  EXPECT_NE(text(done).find("completed"), std::string::npos) << done.dump();
  // The clock starts again when the call ends.
  auto servers = h.status();
  ASSERT_EQ(servers.size(), 1U);
  EXPECT_LT(servers[0].idleSeconds, 0.8);
  EXPECT_EQ(servers[0].calls, 1U);
}

TEST(SandboxWorkerTest, ASharedWorkerNeedsATurnAndEndsItsServersWithIt) {
  WorkerHarness h(std::chrono::minutes(10), true);
  const std::string alice = h.token("alice");
  const std::string init = R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}})";
  EXPECT_EQ(h.send("POST", path("alice"), init, WorkerHarness::mcpHeaders(alice)).status, 400);
  // trustedSandbox runs only in the user's own sandbox.
  EXPECT_EQ(h.send("POST", path("alice", "trusted"), init,
                   WorkerHarness::mcpHeaders(alice, {{"Kaja-Turn", "t1"}}))
                .status,
            404);
  const Headers t1{{"Kaja-Turn", "t1"}};
  const Headers t2{{"Kaja-Turn", "t2"}};
  const std::string s1 = h.initialize(path("alice"), alice, t1);
  const std::string s2 = h.initialize(path("alice"), alice, t2);
  EXPECT_EQ(text(h.call(path("alice"), alice, s1, "echo", {{"message", "1"}}, t1)), "Echo: 1");
  EXPECT_EQ(text(h.call(path("alice"), alice, s2, "echo", {{"message", "2"}}, t2)), "Echo: 2");
  ASSERT_EQ(h.status().size(), 2U);
  const std::string turnHome = h.dir.path() + "/state/turns/alice/t1/everything/home";
  EXPECT_TRUE(std::filesystem::exists(turnHome));
  // Ending turn 1 by its DELETE stops its server and removes its folders.
  const auto deleted =
      h.send("DELETE", path("alice"), "",
             WorkerHarness::mcpHeaders(alice, {{"Kaja-Turn", "t1"}, {"Mcp-Session-Id", s1}}));
  EXPECT_EQ(deleted.status, 204);
  ASSERT_TRUE(eventually([&] { return h.status().size() == 1; }));
  EXPECT_EQ(h.status()[0].key.turn, "t2");
  EXPECT_TRUE(eventually([&] { return !std::filesystem::exists(turnHome); }));
  // Another user cannot end Alice's turn; Alice can.
  const auto notYours = h.send("POST", "/users/alice/turns/t2/end", "",
                               {{"Authorization", "Bearer " + h.token("bob")}});
  EXPECT_EQ(notYours.status, 403);
  const auto ended =
      h.send("POST", "/users/alice/turns/t2/end", "", {{"Authorization", "Bearer " + alice}});
  EXPECT_EQ(ended.status, 200);
  EXPECT_EQ(Json::parse(ended.body)["stopped"], 1);
  EXPECT_TRUE(eventually([&] { return h.status().empty(); }));
}

}  // namespace
}  // namespace kaja::sandbox
