// The host against real servers: good ones connect, bad ones are reported and skipped,
// and a persona switch changes a running server's roots without restarting it.
#include "core/host/host.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/core/mcp/http_test_servers.h"
#include "tests/core/mcp/test_servers.h"

namespace kaja::core {
namespace {

using ::testing::HasSubstr;

Activation stdioActivation(const std::string& name, LaunchPlan plan, bool roots = false) {
  Activation activation;
  activation.ability.name = name;
  activation.ability.roots = roots;
  activation.resolution.state = AbilityState::kOn;
  activation.resolution.runner = RunnerKind::kCommand;
  activation.resolution.launch = std::move(plan);
  return activation;
}

const ConnectReport& reportFor(const std::vector<ConnectReport>& reports, const std::string& name) {
  for (const auto& report : reports) {
    if (report.ability == name) return report;
  }
  static ConnectReport none;
  return none;
}

std::string allowedDirectories(Host& host) {
  auto result = host.callTool("filesystem", "list_allowed_directories", mcp::Json::object());
  return result ? result->text() : "error: " + result.error().describe();
}

// The server asks for roots on its own after initialize and after each change
// notification, so its answer catches up a moment later; wait for `expected`.
std::string waitForAllowed(Host& host, const std::string& expected) {
  std::string seen;
  for (int i = 0; i < 50; ++i) {
    seen = allowedDirectories(host);
    if (seen.find(expected) != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return seen;
}

TEST(HostTest, GoodServersConnectAndBadOnesAreSkipped) {
  std::vector<std::string> warnings;
  HostOptions options;
  options.connectTimeout = std::chrono::seconds(8);
  Host host(options);
  kaja::testing::ScopedTempDir dir;
  std::vector<Activation> wanted = {
      stdioActivation("everything", kaja::testing::everythingPlan()),
      stdioActivation("filesystem", kaja::testing::filesystemPlan(dir.path())),
      stdioActivation("thinking", kaja::testing::minimalPlan({kaja::testing::nodePath(),
                                                              kaja::testing::npmServerScript(
                                                                  "server-sequential-thinking")})),
      stdioActivation("missing", kaja::testing::minimalPlan({"/nonexistent/kaja-no-server"})),
      stdioActivation("silent", kaja::testing::minimalPlan({"/bin/sleep", "600"})),
  };
  auto started = std::chrono::steady_clock::now();
  auto reports = host.activate(wanted);
  auto took = std::chrono::steady_clock::now() - started;
  ASSERT_EQ(reports.size(), 5u);

  EXPECT_TRUE(reportFor(reports, "everything").ok);
  EXPECT_GT(reportFor(reports, "everything").tools.size(), 5u);
  EXPECT_TRUE(reportFor(reports, "filesystem").ok);
  EXPECT_GT(reportFor(reports, "filesystem").tools.size(), 5u);
  EXPECT_TRUE(reportFor(reports, "thinking").ok);
  EXPECT_EQ(reportFor(reports, "thinking").tools.size(), 1u);

  const auto& missing = reportFor(reports, "missing");
  ASSERT_FALSE(missing.ok);
  EXPECT_EQ(missing.error->code, ErrorCode::kSpawn);
  EXPECT_THAT(missing.error->describe(), HasSubstr("kaja-no-server"));

  const auto& silent = reportFor(reports, "silent");
  ASSERT_FALSE(silent.ok);
  EXPECT_EQ(silent.error->code, ErrorCode::kTimeout);
  EXPECT_THAT(silent.error->describe(), HasSubstr("did not answer within 8 s"));
  // The silent one was given up at its own deadline, not waited on past it.
  EXPECT_LT(took, std::chrono::seconds(20));

  // The host keeps serving the good ones.
  auto connected = host.connected();
  EXPECT_EQ(connected, (std::vector<std::string>{"everything", "filesystem", "thinking"}));
  auto echo = host.callTool("everything", "echo", {{"message", "still here"}});
  ASSERT_TRUE(echo.has_value()) << echo.error().describe();
  EXPECT_THAT(echo->text(), HasSubstr("still here"));
}

TEST(HostTest, AtMostFourStdioServersStartAtOnce) {
  HostOptions options;
  int starting = 0;
  int peak = 0;
  options.events.connecting = [&](const std::string&) { peak = std::max(peak, ++starting); };
  options.events.connected = [&](const ConnectReport&) { --starting; };
  Host host(options);
  std::vector<Activation> wanted;
  for (int i = 0; i < 7; ++i) {
    wanted.push_back(stdioActivation("fault" + std::to_string(i), kaja::testing::faultPlan()));
  }
  auto reports = host.activate(wanted);
  for (const auto& report : reports) {
    EXPECT_TRUE(report.ok) << report.ability << ": " << report.error->describe();
  }
  EXPECT_EQ(peak, 4);
}

TEST(HostTest, SwitchChangesRootsWithoutRestartAndClosesWhatIsNoLongerUsed) {
  kaja::testing::ScopedTempDir a;
  kaja::testing::ScopedTempDir b;
  std::filesystem::create_directories(a.path() + "/notes");
  std::filesystem::create_directories(b.path() + "/site");
  std::string notes = a.path() + "/notes";
  std::string site = b.path() + "/site";
  Host host;
  auto filesystem = [](std::vector<std::string> folders) {
    Activation activation = stdioActivation(
        "filesystem",
        kaja::testing::minimalPlan(
            {kaja::testing::nodePath(), kaja::testing::npmServerScript("server-filesystem")}),
        true);
    for (const auto& folder : folders) activation.roots.push_back({mcp::fileUri(folder), ""});
    return activation;
  };

  auto first = host.activate(
      {filesystem({notes}), stdioActivation("everything", kaja::testing::everythingPlan())});
  ASSERT_TRUE(first[0].ok) << first[0].error->describe();
  ASSERT_TRUE(first[1].ok) << first[1].error->describe();
  auto pid = host.serverPid("filesystem");
  ASSERT_TRUE(pid.has_value());
  std::string before = waitForAllowed(host, notes);
  EXPECT_THAT(before, HasSubstr(notes));
  EXPECT_THAT(before, Not(HasSubstr(site)));

  auto second = host.activate({filesystem({site})});
  ASSERT_EQ(second.size(), 1u);
  EXPECT_TRUE(second[0].reused);
  EXPECT_EQ(host.serverPid("filesystem"), pid);
  EXPECT_EQ(host.connected(), std::vector<std::string>{"filesystem"});
  std::string after = waitForAllowed(host, site);
  EXPECT_THAT(after, HasSubstr(site));
  EXPECT_THAT(after, Not(HasSubstr(notes)));
  EXPECT_EQ(host.serverPid("filesystem"), pid);
}

Activation remoteActivation(const std::string& name, const std::string& url, bool sse) {
  Activation activation;
  activation.ability.name = name;
  activation.ability.transport = sse ? Transport::kSse : Transport::kHttp;
  activation.resolution.state = AbilityState::kOn;
  activation.resolution.runner = RunnerKind::kRemote;
  activation.resolution.remote = RemotePlan{url, sse, {}};
  return activation;
}

TEST(HostTest, RemoteAbilitiesConnectAndADeadPortIsSkipped) {
  auto http =
      kaja::testing::ServerProcess::start(kaja::testing::everythingHttpPlan("streamableHttp"));
  auto sse = kaja::testing::ServerProcess::start(kaja::testing::everythingHttpPlan("sse"));
  ASSERT_TRUE(http && sse);
  // A port that was just free: bind, read the number, close.
  int probe = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t length = sizeof addr;
  ::getsockname(probe, reinterpret_cast<sockaddr*>(&addr), &length);
  int deadPort = ntohs(addr.sin_port);
  ::close(probe);

  HostOptions options;
  options.connectTimeout = std::chrono::seconds(5);
  Host host(options);
  auto reports = host.activate(
      {remoteActivation("streamable", http->url("/mcp"), false),
       remoteActivation("legacy", sse->url("/sse"), true),
       remoteActivation("dead", "http://127.0.0.1:" + std::to_string(deadPort) + "/mcp", false),
       stdioActivation("everything", kaja::testing::everythingPlan())});
  EXPECT_TRUE(reportFor(reports, "streamable").ok)
      << reportFor(reports, "streamable").error->describe();
  EXPECT_GT(reportFor(reports, "streamable").tools.size(), 5u);
  EXPECT_TRUE(reportFor(reports, "legacy").ok) << reportFor(reports, "legacy").error->describe();
  const auto& dead = reportFor(reports, "dead");
  ASSERT_FALSE(dead.ok);
  EXPECT_EQ(dead.error->code, ErrorCode::kConnect);
  EXPECT_LT(dead.elapsed, std::chrono::seconds(5));
  EXPECT_TRUE(reportFor(reports, "everything").ok);
  auto echo = host.callTool("streamable", "echo", {{"message", "over http"}});
  ASSERT_TRUE(echo.has_value()) << echo.error().describe();
  EXPECT_THAT(echo->text(), HasSubstr("over http"));
}

TEST(HostTest, AtMostSixteenConnectsOfAnyKindRunAtOnce) {
  auto http =
      kaja::testing::ServerProcess::start(kaja::testing::everythingHttpPlan("streamableHttp"));
  ASSERT_TRUE(http);
  HostOptions options;
  options.connectTimeout = std::chrono::seconds(20);
  int connecting = 0;
  int peak = 0;
  options.events.connecting = [&](const std::string&) { peak = std::max(peak, ++connecting); };
  options.events.connected = [&](const ConnectReport&) { --connecting; };
  Host host(options);
  std::vector<Activation> wanted;
  for (int i = 0; i < 20; ++i) {
    wanted.push_back(remoteActivation("remote" + std::to_string(i), http->url("/mcp"), false));
  }
  auto reports = host.activate(wanted);
  for (const auto& report : reports) {
    EXPECT_TRUE(report.ok) << report.ability << ": " << report.error->describe();
  }
  EXPECT_EQ(peak, 16);

  // The limit counts stdio servers too, below their own limit of four.
  HostOptions small;
  small.maxParallelConnects = 3;
  connecting = 0;
  peak = 0;
  small.events = options.events;
  Host other(small);
  wanted.clear();
  for (int i = 0; i < 5; ++i) {
    wanted.push_back(stdioActivation("fault" + std::to_string(i), kaja::testing::faultPlan()));
  }
  for (const auto& report : other.activate(wanted)) EXPECT_TRUE(report.ok) << report.ability;
  EXPECT_EQ(peak, 3);
}

TEST(HostTest, AServerThatHangsUpOnDiscoverIsStartedAgainWithInitialize) {
  // An old server that exits on any method it does not know, before initialize.
  kaja::testing::ScopedTempDir dir;
  std::string script = dir.path() + "/old_server.cjs";
  std::ofstream(script) << R"(
let buffered = '';
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  let newline;
  while ((newline = buffered.indexOf('\n')) >= 0) {
    const message = JSON.parse(buffered.slice(0, newline));
    buffered = buffered.slice(newline + 1);
    const reply = (result) =>
      process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }) + '\n');
    if (message.method === 'initialize') {
      reply({ protocolVersion: '2025-06-18', capabilities: { tools: {} },
              serverInfo: { name: 'old', version: '1' } });
    } else if (message.method === 'tools/list') {
      reply({ tools: [{ name: 'only', inputSchema: { type: 'object' } }] });
    } else if (message.id !== undefined) {
      process.exit(3);
    }
  }
});
)";
  std::vector<std::string> warnings;
  HostOptions options;
  options.events.warning = [&](const std::string& text) { warnings.push_back(text); };
  Host host(options);
  auto reports = host.activate(
      {stdioActivation("old", kaja::testing::minimalPlan({kaja::testing::nodePath(), script}))});
  ASSERT_TRUE(reports[0].ok) << reports[0].error->describe();
  EXPECT_EQ(reports[0].protocolVersion, "2025-06-18");
  ASSERT_EQ(reports[0].tools.size(), 1u);
  EXPECT_EQ(reports[0].tools[0].name, "only");
  ASSERT_FALSE(warnings.empty());
  EXPECT_THAT(warnings.front(), HasSubstr("initialize alone"));
}

TEST(HostTest, ClosingEndsEveryServer) {
  pid_t pid = 0;
  {
    Host host;
    auto reports = host.activate({stdioActivation("everything", kaja::testing::everythingPlan())});
    ASSERT_TRUE(reports[0].ok);
    pid = host.serverPid("everything").value_or(0);
    ASSERT_GT(pid, 0);
    host.closeAll();
    EXPECT_TRUE(host.connected().empty());
  }
  // Reaped, so the pid no longer names a child of ours (or a zombie).
  EXPECT_NE(::kill(pid, 0), 0);
}

// At 2026-07-28 a server announces new tools only on a subscriptions/listen stream; the
// host opens one and its tool list follows the server's, over stdio and over HTTP.
TEST(HostTest, StatelessServersTellTheHostAboutNewTools) {
  auto http = kaja::testing::ServerProcess::start(kaja::testing::statelessPlan("http"));
  ASSERT_TRUE(http) << "the server never printed its port";
  Host host;
  auto reports = host.activate({stdioActivation("local", kaja::testing::statelessPlan("stdio")),
                                remoteActivation("remote", http->url("/"), false)});
  for (const auto& report : reports) {
    ASSERT_TRUE(report.ok) << report.ability << ": " << report.error->describe();
    EXPECT_EQ(report.protocolVersion, "2026-07-28");
  }
  for (const std::string ability : {"local", "remote"}) {
    auto hasExtra = [&] {
      auto tools = host.tools(ability);
      return tools && std::any_of(tools->begin(), tools->end(),
                                  [](const mcp::Tool& tool) { return tool.name == "extra"; });
    };
    EXPECT_FALSE(hasExtra()) << ability;
    auto grown = host.callTool(ability, "grow", mcp::Json::object());
    ASSERT_TRUE(grown) << grown.error().describe();
    for (int i = 0; i < 50 && !hasExtra(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(hasExtra()) << ability << " never announced its new tool";
    // The listen stream did not take the connection down: calls still work.
    auto echo = host.callTool(ability, "echo", {{"message", "still here"}});
    ASSERT_TRUE(echo) << echo.error().describe();
    EXPECT_EQ(echo->text(), "still here");
  }
}

// A 2026-07-28 server's listen stream that closes (a restart, a network blip) is opened
// again, and the tools are listed again then: what changed while nobody listened is seen.
TEST(HostTest, AClosedListenStreamIsReopenedAndTheToolsListedAgain) {
  auto http = kaja::testing::ServerProcess::start(kaja::testing::statelessPlan("http-drop-listen"));
  ASSERT_TRUE(http) << "the server never printed its port";
  {
    Host host;
    auto reports = host.activate({remoteActivation("remote", http->url("/"), false)});
    ASSERT_TRUE(reports[0].ok) << reports[0].error->describe();
    auto hasExtra = [&] {
      auto tools = host.tools("remote");
      return tools && std::any_of(tools->begin(), tools->end(),
                                  [](const mcp::Tool& tool) { return tool.name == "extra"; });
    };
    // The server adds "extra" silently as it drops the first stream; the first retry waits
    // about 0.5 s.
    for (int i = 0; i < 100 && !hasExtra(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_TRUE(hasExtra()) << "the tools were not listed again after the stream came back";
    EXPECT_EQ(http->count("LISTEN"), 2);
    EXPECT_GE(http->count("TOOLS-LIST"), 2);
    auto echo = host.callTool("remote", "echo", {{"message", "still here"}});
    ASSERT_TRUE(echo) << echo.error().describe();
    host.closeAll();
  }
  // Closed by kaja: no stream is opened again.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(http->count("LISTEN"), 2);
}

// A 2025-era roots server fetches its roots after connecting, and the host waits for that;
// at 2026-07-28 roots travel inside the requests that need them, so there is no wait.
TEST(HostTest, OnlyServersThatFetchRootsOnTheirOwnAreWaitedFor) {
  kaja::testing::ScopedTempDir dir;
  Host host;
  auto filesystem = stdioActivation("filesystem", kaja::testing::filesystemPlan(dir.path()), true);
  filesystem.roots = {{mcp::fileUri(dir.path()), ""}};
  auto stateless = stdioActivation("stateless", kaja::testing::statelessPlan("stdio"), true);
  stateless.roots = filesystem.roots;
  auto reports = host.activate({filesystem, stateless});
  ASSERT_TRUE(reports[0].ok) << reports[0].error->describe();
  ASSERT_TRUE(reports[1].ok) << reports[1].error->describe();
  EXPECT_GE(reports[0].rootsWait, std::chrono::milliseconds(150));
  EXPECT_EQ(reports[1].protocolVersion, "2026-07-28");
  EXPECT_EQ(reports[1].rootsWait, std::chrono::milliseconds(0));
}

}  // namespace
}  // namespace kaja::core
