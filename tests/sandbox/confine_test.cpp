// confine(): the command line it builds, and what a server run with it can and cannot do,
// with the real bubblewrap.
#include "sandbox/confine.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/process/child_process.h"
#include "core/util/unique_fd.h"
#include "tests/sandbox/sandbox_support.h"
#include "tests/support/build_paths.h"

namespace kaja::sandbox {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::SandboxTree;
using testing::shell;

std::string envValue(const core::LaunchPlan& plan, const std::string& name) {
  for (const auto& var : plan.env) {
    if (var.name == name) return var.value;
  }
  return "<unset>";
}

/// Returns the index of the first `value` in `argv` at or after `from`, or argv.size().
std::size_t indexOf(const std::vector<std::string>& argv, const std::string& value,
                    std::size_t from = 0) {
  const auto it = std::find(argv.begin() + static_cast<long>(from), argv.end(), value);
  return static_cast<std::size_t>(it - argv.begin());
}

TEST(ConfineTest, PutsEnterBeforeBwrapAndBridgeBeforeTheServer) {
  SandboxTree tree;
  auto where = tree.confinementOf("alice");
  where.cgroups = {"/sys/fs/cgroup/memory/k/s", "/sys/fs/cgroup/pids/k/s"};
  where.egressSocket = tree.root() + "/egress.sock";
  where.proxyPort = 3999;
  auto plan = confine(shell("echo hi"), where);
  if (!plan && plan.error().code == core::ErrorCode::kSpawn) GTEST_SKIP() << plan.error().message;
  ASSERT_TRUE(plan) << plan.error().message;
  const auto& argv = plan->argv;
  ASSERT_GE(argv.size(), 10u);
  EXPECT_THAT(std::vector(argv.begin(), argv.begin() + 8),
              ElementsAre(where.kaja, "sandbox", "enter", "--cgroup", where.cgroups[0], "--cgroup",
                          where.cgroups[1], "--"));
  EXPECT_THAT(argv[8], HasSubstr("bwrap"));
  for (const char* flag : {"--unshare-all", "--die-with-parent", "--new-session"}) {
    EXPECT_THAT(argv, Contains(flag));
  }
  const auto bridge = indexOf(argv, "bridge");
  ASSERT_LT(bridge, argv.size());
  EXPECT_THAT(std::vector(argv.begin() + static_cast<long>(bridge) - 2, argv.end()),
              ElementsAre(where.kaja, "sandbox", "bridge", "--listen", "127.0.0.1:3999", "--socket",
                          kInsideEgressSocket, "--", "/bin/sh", "-c", "echo hi"));
  const auto socket = indexOf(argv, kInsideEgressSocket);
  EXPECT_EQ(argv[socket - 1], where.egressSocket);
  EXPECT_EQ(argv[socket - 2], "--ro-bind");
}

TEST(ConfineTest, SetsHomeTmpAndProxiesAndKeepsLoaderVariablesInside) {
  SandboxTree tree;
  auto where = tree.confinementOf("alice");
  where.egressSocket = tree.root() + "/egress.sock";
  auto server = shell("true");
  server.env.push_back({"NO_PROXY", "10.0.0.5"});
  server.env.push_back({"no_proxy", "*"});
  server.env.push_back({"HOME", "/root"});
  server.env.push_back({"LD_PRELOAD", "/tmp/evil.so"});
  server.env.push_back({"API_TOKEN", "s3cret", true});
  auto plan = confine(server, where);
  if (!plan && plan.error().code == core::ErrorCode::kSpawn) GTEST_SKIP() << plan.error().message;
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(envValue(*plan, "HOME"), kDefaultInsideHome);
  EXPECT_EQ(envValue(*plan, "TMPDIR"), "/tmp");
  for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}) {
    EXPECT_EQ(envValue(*plan, name), "http://127.0.0.1:3128") << name;
  }
  // The server's own NO_PROXY is replaced: only its namespace's loopback skips the proxy.
  EXPECT_EQ(envValue(*plan, "NO_PROXY"), "localhost,127.0.0.1,::1");
  EXPECT_EQ(envValue(*plan, "no_proxy"), "localhost,127.0.0.1,::1");
  EXPECT_EQ(envValue(*plan, "LD_PRELOAD"), "<unset>");
  EXPECT_EQ(envValue(*plan, "API_TOKEN"), "s3cret");
  const auto setenv = indexOf(plan->argv, "LD_PRELOAD");
  ASSERT_LT(setenv, plan->argv.size());
  EXPECT_EQ(plan->argv[setenv - 1], "--setenv");
  EXPECT_THAT(plan->argv, Not(Contains("s3cret")));
}

TEST(ConfineTest, RefusesWhatWouldLeaveItOpen) {
  SandboxTree tree;
  auto where = tree.confinementOf("alice");
  where.bwrap = "/nonexistent/bwrap";
  auto missing = confine(shell("true"), where);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, core::ErrorCode::kSpawn);
  EXPECT_THAT(missing.error().message, HasSubstr("bubblewrap"));

  where = tree.confinementOf("alice");
  if (!findBwrap(where)) GTEST_SKIP() << "bubblewrap is not installed";
  where.readOnly.push_back("/./");
  auto whole = confine(shell("true"), where);
  ASSERT_FALSE(whole);
  EXPECT_EQ(whole.error().code, core::ErrorCode::kInvalidConfig);

  where = tree.confinementOf("alice");
  where.home = tree.root() + "/no-such-home";
  EXPECT_FALSE(confine(shell("true"), where));

  where = tree.confinementOf("alice");
  where.insideHome = "/usr/local/home";
  auto overlap = confine(shell("true"), where);
  ASSERT_FALSE(overlap);
  EXPECT_THAT(overlap.error().message, HasSubstr("/usr"));

  where = tree.confinementOf("alice");
  auto relative = shell("true");
  relative.argv[0] = "sh";
  EXPECT_FALSE(confine(relative, where));
}

TEST(ConfineTest, HiddenFilesStayUnreadableInsideAReadOnlyFolder) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  const auto kaja = tree.kajaFolder();
  auto plan = confine(shell("cat " + kaja + "/visible.txt; echo; cat " + kaja +
                            "/key; echo; cat /etc/shadow; ls /etc; ls /; ls /root /work"),
                      tree.confinementOf("alice"));
  ASSERT_TRUE(plan) << plan.error().message;
  const auto ran = testing::run(*plan);
  EXPECT_THAT(ran.out, HasSubstr("visible-content"));  // the folder is shown...
  EXPECT_THAT(ran.out, Not(HasSubstr("worker-key")));  // ...but not the key in it
  EXPECT_THAT(ran.out, HasSubstr("passwd"));
  EXPECT_THAT(ran.out, Not(HasSubstr("shadow")));
  EXPECT_THAT(ran.out, Not(HasSubstr("resolv.conf")));
  EXPECT_THAT(ran.err, HasSubstr("/etc/shadow"));
  EXPECT_THAT(ran.err, HasSubstr("/root"));
  EXPECT_THAT(ran.err, HasSubstr("/work"));
}

TEST(ConfineTest, AServerCannotSeeAnotherUsersHome) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  const auto bobHome = tree.state() + "/bob/home";
  auto plan = confine(shell("cat " + bobHome + "/secret.txt; ls -a " + tree.state() +
                            "; grep -r bob-secret " + tree.root() + "; echo done"),
                      tree.confinementOf("alice"));
  ASSERT_TRUE(plan) << plan.error().message;
  const auto ran = testing::run(*plan, 60);
  EXPECT_THAT(ran.out, HasSubstr("done"));
  EXPECT_THAT(ran.out, Not(HasSubstr("bob-secret")));
  EXPECT_THAT(ran.out, Not(HasSubstr("bob")));
  EXPECT_THAT(ran.err, HasSubstr("secret.txt"));

  // Bob's own server does see it, in its home.
  auto bob = confine(shell("cat $HOME/secret.txt"), tree.confinementOf("bob"));
  ASSERT_TRUE(bob) << bob.error().message;
  EXPECT_THAT(testing::run(*bob).out, HasSubstr("bob-secret-4711"));
}

TEST(ConfineTest, HomeIsWritableTmpIsPrivateAndTheSystemIsReadOnly) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  kaja::testing::TempDir hostTmp;  // a file in the host's /tmp the server must not see
  const auto marker = hostTmp.write("host-marker", "x");
  auto plan = confine(shell("echo mine > $HOME/note && cat $HOME/note; echo t > /tmp/t; "
                            "echo $TMPDIR; test -e " +
                            marker +
                            " && echo SAW-HOST-TMP; "
                            "touch /usr/kaja-probe || echo usr-refused; "
                            "mkdir /newdir || echo root-refused; "
                            "touch /etc/passwd || echo etc-refused; pwd"),
                      tree.confinementOf("alice"));
  ASSERT_TRUE(plan) << plan.error().message;
  const auto ran = testing::run(*plan);
  EXPECT_THAT(ran.out, AllOf(HasSubstr("mine"), HasSubstr("usr-refused"), HasSubstr("root-refused"),
                             HasSubstr("etc-refused")));
  EXPECT_THAT(ran.out, Not(HasSubstr("SAW-HOST-TMP")));
  EXPECT_THAT(ran.out, HasSubstr(std::string(kDefaultInsideHome) + "\n"));  // pwd
  EXPECT_EQ(kaja::testing::readFile(tree.state() + "/alice/home/note"), "mine\n");
  EXPECT_EQ(kaja::testing::readFile(tree.state() + "/alice/tmp/t"), "t\n");
  EXPECT_FALSE(std::filesystem::exists("/usr/kaja-probe"));
}

/// A listening TCP socket on the host's 127.0.0.1, on a port the kernel picks.
struct HostListener {
  core::UniqueFd fd{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  int port = 0;
  HostListener() {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(fd.get(), 8) != 0 ||
        ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return;
    }
    port = ntohs(addr.sin_port);
  }
};

TEST(ConfineTest, HasItsOwnNetworkWithoutTheHostsLoopback) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  HostListener listener;
  ASSERT_GT(listener.port, 0);
  const std::string connect = "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(listener.port) +
                              " && echo CONNECTED; ip -o link; echo end";
  core::LaunchPlan bash;
  bash.argv = {"/bin/bash", "-c", connect};
  bash.env = {{"PATH", "/usr/bin:/bin:/usr/sbin:/sbin"}};

  const auto direct = testing::run(bash);  // the same attempt from the host reaches it
  ASSERT_THAT(direct.out, HasSubstr("CONNECTED"));

  auto plan = confine(bash, tree.confinementOf("alice"));
  ASSERT_TRUE(plan) << plan.error().message;
  const auto ran = testing::run(*plan);
  EXPECT_THAT(ran.out, HasSubstr("end"));
  EXPECT_THAT(ran.out, Not(HasSubstr("CONNECTED")));
  EXPECT_THAT(ran.err, HasSubstr("refused"));
  EXPECT_THAT(ran.out, HasSubstr("lo:"));
  EXPECT_THAT(ran.out, Not(HasSubstr("eth")));
}

TEST(ConfineTest, CannotReachTheHostsAbstractUnixSockets) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs /usr/bin/python3";
  // Abstract sockets (D-Bus, X11 and the like) belong to the network namespace.
  const std::string name = "kaja-test-abstract-" + std::to_string(::getpid());
  core::UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(::listen(listener.get(), 8), 0);
  core::LaunchPlan python;
  python.argv = {"/usr/bin/python3", "-c",
                 "import socket; c = socket.socket(socket.AF_UNIX); c.connect('\\0" + name +
                     "'); print('CONNECTED')"};
  ASSERT_THAT(testing::run(python).out, HasSubstr("CONNECTED"));  // from the host it works
  auto plan = confine(python, tree.confinementOf("alice"));
  ASSERT_TRUE(plan) << plan.error().message;
  const auto ran = testing::run(*plan);
  EXPECT_THAT(ran.out, Not(HasSubstr("CONNECTED")));
  EXPECT_THAT(ran.err, HasSubstr("ConnectionRefusedError"));
}

TEST(ConfineTest, SeesOnlyItsOwnProcesses) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  auto plan = confine(shell("echo pid=$$; ls /proc | grep -c '^[0-9]'; cat /proc/1/cmdline"),
                      tree.confinementOf("alice"));
  ASSERT_TRUE(plan) << plan.error().message;
  const auto ran = testing::run(*plan);
  int pid = 0;
  int count = 0;
  ASSERT_EQ(std::sscanf(ran.out.c_str(), "pid=%d\n%d", &pid, &count), 2) << ran.out;
  EXPECT_LE(pid, 3);
  EXPECT_LE(count, 4);  // bwrap's init, the shell, ls, grep
  EXPECT_THAT(ran.out, Not(HasSubstr("kaja_tests")));
}

TEST(ConfineTest, KillingTheTopProcessLeavesNothingBehind) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  const std::string marker = "907." + std::to_string(::getpid());
  // setsid puts the sleepers outside the top process's group as well.
  auto plan = confine(shell("sleep " + marker + " & setsid sleep " + marker + " & wait"),
                      tree.confinementOf("alice"));
  ASSERT_TRUE(plan) << plan.error().message;
  auto child = core::ChildProcess::start(*plan);
  ASSERT_TRUE(child) << child.error().message;
  const std::string sleeper = std::string("sleep\0", 6) + marker;
  ASSERT_TRUE(testing::eventually([&] { return testing::processesWith(sleeper).size() == 2; }))
      << "the confined sleepers did not start";
  ::kill((*child)->pid(), SIGKILL);
  EXPECT_TRUE((*child)->waitFor(std::chrono::seconds(5)));
  EXPECT_TRUE(testing::eventually([&] { return testing::processesWith(marker).empty(); }))
      << testing::processesWith(marker).size() << " processes outlived the top one";
}

// A server in a user namespace of its own holds every capability there: `unshare -Urn` then
// gives it CAP_NET_ADMIN and CAP_SYS_ADMIN over namespaces it made, the kernel code most
// container escapes go through. Only a server allowed them (Chromium's) may make one.
TEST(ConfineTest, NestedUserNamespacesAreRefusedUnlessAllowed) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  auto where = tree.confinementOf("alice");
  const auto script =
      shell("unshare -U true && echo NESTED-OK; unshare -Ur grep CapEff /proc/self/status 2>&1");
  where.nestedUserNamespaces = true;
  auto allowed = confine(script, where);
  ASSERT_TRUE(allowed) << allowed.error().message;
  const auto open = testing::run(*allowed);
  if (open.out.find("NESTED-OK") == std::string::npos) {
    GTEST_SKIP() << "user namespaces cannot be nested here: " << open.err;
  }
  where.nestedUserNamespaces = false;
  auto refused = confine(script, where);
  ASSERT_TRUE(refused) << refused.error().message;
  const auto closed = testing::run(*refused);
  EXPECT_THAT(closed.out, Not(HasSubstr("NESTED-OK"))) << closed.err;
  EXPECT_THAT(closed.out, Not(HasSubstr("CapEff"))) << closed.err;
  // And by default.
  auto byDefault = confine(script, tree.confinementOf("alice"));
  ASSERT_TRUE(byDefault) << byDefault.error().message;
  EXPECT_THAT(testing::run(*byDefault).out, Not(HasSubstr("NESTED-OK")));
}

TEST(ConfineTest, ConfinesTheSameWayForAWorkerThatIsNotRoot) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0) {
    GTEST_SKIP() << "needs root and setpriv to become another user";
  }
  std::filesystem::permissions(tree.root(), std::filesystem::perms::owner_all |
                                                std::filesystem::perms::others_read |
                                                std::filesystem::perms::others_exec);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(tree.root())) {
    ::chown(entry.path().c_str(), 65534, 65534);
  }
  ::chown(tree.root().c_str(), 65534, 65534);
  auto plan = confine(
      shell("id -u; cat " + tree.kajaFolder() + "/visible.txt " + tree.kajaFolder() + "/key " +
            tree.state() + "/bob/home/secret.txt; echo mine > $HOME/note && cat $HOME/note"),
      tree.confinementOf("alice"));
  ASSERT_TRUE(plan) << plan.error().message;
  plan->argv.insert(plan->argv.begin(),
                    {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  const auto ran = testing::run(*plan);
  if (ran.out.find("65534") == std::string::npos) {
    GTEST_SKIP() << "bubblewrap cannot run unprivileged here: " << ran.err;
  }
  EXPECT_THAT(ran.out, AllOf(HasSubstr("visible-content"), HasSubstr("mine")));
  EXPECT_THAT(ran.out, Not(HasSubstr("worker-key")));
  EXPECT_THAT(ran.out, Not(HasSubstr("bob-secret")));
}

TEST(ConfineTest, RunsTheRealFilesystemServerInItsHome) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  const std::string modules = std::string(kaja::test::sourceDir()) + "/tests/npm/node_modules";
  const std::string script = modules + "/@modelcontextprotocol/server-filesystem/dist/index.js";
  if (!std::filesystem::exists(script) || ::access("/usr/bin/node", X_OK) != 0) {
    GTEST_SKIP() << "needs /usr/bin/node and the npm test servers";
  }
  std::filesystem::create_directories(tree.state() + "/alice/home/docs");
  std::ofstream(tree.state() + "/alice/home/docs/note.txt") << "alice-note";
  core::LaunchPlan server;
  server.argv = {"/usr/bin/node", script, std::string(kDefaultInsideHome) + "/docs"};
  server.env = {{"PATH", "/usr/bin:/bin"}};
  auto where = tree.confinementOf("alice");
  where.readOnly.push_back(modules);
  auto plan = confine(server, where);
  ASSERT_TRUE(plan) << plan.error().message;
  const std::string docs = std::string(kDefaultInsideHome) + "/docs";
  const std::string input =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
      "\n"
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
      "\n"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":")" +
      docs +
      R"(/note.txt"}}})"
      "\n" +
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_file","arguments":{"path":")" +
      docs +
      R"(/out.txt","content":"written inside"}}})"
      "\n";
  kaja::testing::RunOptions options;
  options.input = input;
  options.timeoutSeconds = 60;
  const auto ran = kaja::testing::runCommandWith(plan->argv, testing::envStrings(*plan), options);
  EXPECT_THAT(ran.out, HasSubstr("alice-note")) << ran.err;
  EXPECT_EQ(kaja::testing::readFile(tree.state() + "/alice/home/docs/out.txt"), "written inside");
}

TEST(ConfineTest, ReachesTheEgressSocketAndKajaInside) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs /usr/bin/python3";
  // A host unix socket that answers once, standing in for the worker's egress proxy.
  const std::string path = tree.root() + "/egress.sock";
  core::UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener.get(), 1), 0);
  std::thread proxy([&] {
    core::UniqueFd peer(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (peer.valid()) (void)!::write(peer.get(), "proxy-here", 10);
  });

  auto where = tree.confinementOf("alice");
  where.egressSocket = path;
  core::LaunchPlan python;
  python.argv = {"/usr/bin/python3", "-c",
                 "import socket; c = socket.socket(socket.AF_UNIX); "
                 "c.connect('" +
                     std::string(kInsideEgressSocket) + "'); print(c.recv(64))"};
  auto plan = confine(python, where);
  ASSERT_TRUE(plan) << plan.error().message;
  // Run kaja itself inside where the bridge would start, then the client without it.
  auto& argv = plan->argv;
  const auto bridge = indexOf(argv, "bridge") - 2;
  const auto server = indexOf(argv, "--", bridge) + 1;
  auto kajaInside = *plan;
  kajaInside.argv.resize(bridge + 1);
  kajaInside.argv.push_back("--version");
  EXPECT_THAT(testing::run(kajaInside).out, HasSubstr("kaja "));
  argv.erase(argv.begin() + static_cast<long>(bridge), argv.begin() + static_cast<long>(server));
  const auto ran = testing::run(*plan);
  ::shutdown(listener.get(), SHUT_RDWR);
  proxy.join();
  EXPECT_THAT(ran.out, HasSubstr("proxy-here")) << ran.err;
}

TEST(ConfineTest, StartingATrivialServerIsCheap) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  core::LaunchPlan trueProgram;
  trueProgram.argv = {"/bin/true"};
  constexpr int kRuns = 20;
  auto average = [&](bool confined) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kRuns; ++i) {
      auto plan = confined ? confine(trueProgram, tree.confinementOf("alice"))
                           : core::Result<core::LaunchPlan>(trueProgram);
      EXPECT_TRUE(plan) << plan.error().message;
      if (plan) {
        EXPECT_EQ(testing::run(*plan).exitCode, 0);
      }
    }
    const auto spent = std::chrono::steady_clock::now() - start;
    return std::chrono::duration<double, std::milli>(spent).count() / kRuns;
  };
  const double direct = average(false);
  const double confined = average(true);
  std::printf("run /bin/true: %.1f ms directly, %.1f ms confined (confine + bwrap)\n", direct,
              confined);
  EXPECT_LT(confined, 2000);  // generous: bwrap's set-up is tens of milliseconds
}

}  // namespace
}  // namespace kaja::sandbox
