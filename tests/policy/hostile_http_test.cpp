// A hostile MCP server over Streamable HTTP and legacy SSE, end to end: each attack of
// tests/tools/kaja_fault_http_server runs through `kaja call`, `kaja tools` and `kaja
// doctor` with a private marketplace whose one ability points at it. After each run the
// test checks the exit code, the one-line error, the time taken, kaja's peak memory, the
// connections the server saw and that no kaja process is left. Whatever may send traffic
// to a metadata or private address runs in a network namespace of its own (unshare -n).
#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/core/mcp/http_test_servers.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::testing {
namespace {

using ::testing::HasSubstr;

// Far above what kaja needs (tens of MB); the unbounded floods reached gigabytes.
constexpr long kMaxRssKb = 200L * 1024;

enum class Command { kCall, kTools, kDoctor };

const char* name(Command command) {
  switch (command) {
    case Command::kCall:
      return "call";
    case Command::kTools:
      return "tools";
    case Command::kDoctor:
      return "doctor";
  }
  return "?";
}

std::vector<std::string> argsFor(Command command) {
  switch (command) {
    case Command::kCall:
      return {"call", "--persona", "p", "--yes", "h", "echo", R"({"message":"hi"})"};
    case Command::kTools:
      return {"tools", "--persona", "p"};
    case Command::kDoctor:
      return {"doctor", "--timeout", "5"};
  }
  return {};
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

// Returns the lines of `text` that start with `prefix`.
std::vector<std::string> linesStarting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  for (auto& line : linesOf(text)) {
    if (line.starts_with(prefix)) out.push_back(std::move(line));
  }
  return out;
}

// Returns the pids of processes whose environment holds `marker` (the test's own folder).
std::vector<int> processesWith(const std::string& marker) {
  std::vector<int> pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (const dirent* entry = ::readdir(proc)) {
    const int pid = std::atoi(entry->d_name);
    if (pid <= 0 || pid == ::getpid()) continue;
    const std::string environ = readFile("/proc/" + std::string(entry->d_name) + "/environ");
    if (environ.find(marker) != std::string::npos) pids.push_back(pid);
  }
  ::closedir(proc);
  return pids;
}

// Returns an empty string when `unshare -n` works here, else why not.
std::string namespaceProblem() {
  const auto result = runCommand({"/usr/bin/unshare", "-n", "/bin/sh", "-c", "ip link set lo up"},
                                 {"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"});
  if (result.exitCode == 0) return {};
  return "unshare -n is not permitted here (" + result.err.substr(0, 200) +
         "); tests that may reach a metadata or private address are not run";
}

class HostileHttpTest : public ::testing::Test {
 protected:
  HostileHttpTest() { root_.write("market/personas/p.toml", "abilities = [\"h\"]\n"); }

  void ability(const std::string& url, bool sse) {
    root_.write(
        "market/abilities/h/mcp.toml",
        std::string("transport = \"") + (sse ? "sse" : "http") + "\"\nurl = \"" + url + "\"\n");
  }

  std::vector<std::string> env() const {
    return {"HOME=" + root_.path() + "/home",
            "XDG_CONFIG_HOME=" + root_.path() + "/config",
            "XDG_DATA_HOME=" + root_.path() + "/data",
            "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "KAJA_SHIPPED_MARKETPLACE=" + root_.path() + "/market",
            "NO_COLOR=1"};
  }

  CommandResult kaja(Command command, double timeoutSeconds) {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja"};
    for (auto& arg : argsFor(command)) argv.push_back(std::move(arg));
    RunOptions options;
    options.timeoutSeconds = timeoutSeconds;
    return runCommandWith(argv, env(), options);
  }

  // Runs `command` against a fresh fault server in `mode`, serving at `path`.
  CommandResult against(const std::string& mode, Command command, double timeoutSeconds = 60) {
    server_ = ServerProcess::start(faultHttpPlan(mode));
    EXPECT_NE(server_, nullptr) << mode;
    if (!server_) return {};
    const bool sse = mode.starts_with("legacy");
    ability(server_->url(sse ? "/sse" : "/mcp"), sse);
    auto result = kaja(command, timeoutSeconds);
    expectSound(result, mode + " / " + name(command));
    // No mode may get a control character, a space or a non-ASCII byte back in a header.
    EXPECT_EQ(server_->count("BAD-ECHO"), 0) << mode << " / " << name(command);
    return result;
  }

  // What holds after every run: it ended by itself, within its memory, printed no control
  // character and left no process behind.
  void expectSound(const CommandResult& result, const std::string& what) {
    EXPECT_FALSE(result.timedOut) << what << " did not finish";
    EXPECT_GE(result.exitCode, 0) << what << " died of a signal\n" << result.err;
    if (kaja::testing::kMemoryIsMeasured) {
      EXPECT_LT(result.peakRssKb, kMaxRssKb) << what;
    }
    for (const auto& line : linesOf(result.err)) {
      EXPECT_TRUE(std::none_of(line.begin(), line.end(),
                               [](unsigned char c) { return c < 0x20 && c != '\t'; }))
          << what << ": " << line;
    }
    EXPECT_THAT(processesWith(root_.path()), ::testing::IsEmpty()) << what;
  }

  // The one error line of a failed `kaja call`, or "" when there is not exactly one.
  static std::string errorLine(const CommandResult& result) {
    const auto errors = linesStarting(result.err, "kaja: error: ");
    return errors.size() == 1 ? errors.front() : "";
  }

  // Expects `kaja call` to fail with `exitCode` and one error line holding `phrase`; `kaja
  // tools` to warn with it (and exit 0, listing what it could); `kaja doctor` to show the
  // ability failed (exit 1).
  void expectFailsEverywhere(const std::string& mode, int exitCode, const std::string& phrase,
                             double maxSeconds) {
    auto call = against(mode, Command::kCall);
    EXPECT_EQ(call.exitCode, exitCode) << mode << "\n" << call.err;
    EXPECT_THAT(errorLine(call), HasSubstr(phrase)) << mode << "\n" << call.err;
    EXPECT_LT(call.seconds, maxSeconds) << mode;
    auto tools = against(mode, Command::kTools);
    EXPECT_EQ(tools.exitCode, 0) << mode << "\n" << tools.err;
    EXPECT_THAT(tools.err, HasSubstr(phrase)) << mode;
    EXPECT_LT(tools.seconds, maxSeconds) << mode;
    auto doctor = against(mode, Command::kDoctor);
    EXPECT_EQ(doctor.exitCode, 1) << mode << "\n" << doctor.out << doctor.err;
    EXPECT_THAT(doctor.out, HasSubstr("failed")) << mode;
    EXPECT_LT(doctor.seconds, maxSeconds) << mode;
  }

  TempDir root_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(HostileHttpTest, TinyEventFloodOnAPostStaysSmallAndMeetsItsDeadline) {
  // tools/list (connect, 10 s) and tools/call answer with an endless stream of comments,
  // empty events, other event types, ids and retries: no message, ever.
  expectFailsEverywhere("flood-post", 4, "did not answer within", 30);
}

TEST_F(HostileHttpTest, TinyEventFloodOnACallMeetsTheCallDeadline) {
  auto call = against("flood-call", Command::kCall);
  EXPECT_EQ(call.exitCode, 4) << call.err;
  EXPECT_THAT(errorLine(call), HasSubstr("15")) << call.err;
  // The call's limit is 15 s; a flood used to keep the loop too busy to notice it.
  EXPECT_LT(call.seconds, 25);
}

TEST_F(HostileHttpTest, OneEndlessLineOrEventIsCutAt16Mb) {
  for (const std::string mode : {"flood-line", "flood-data"}) {
    expectFailsEverywhere(mode, 4, "event larger than 16 MB", 20);
  }
}

// A server that was reached and answered the call with an error status failed the call
// (exit 1); only a proxy's 502, 503 or 504 says the server itself was not reached (exit 4).
TEST_F(HostileHttpTest, AnErrorStatusOnTheCallExitsOneUnlessAProxySentIt) {
  for (const auto& [mode, exitCode] : std::vector<std::pair<std::string, int>>{{"status-500", 1},
                                                                               {"status-400", 1},
                                                                               {"status-429", 1},
                                                                               {"status-502", 4},
                                                                               {"status-503", 4},
                                                                               {"legacy-500", 1}}) {
    auto call = against(mode, Command::kCall);
    EXPECT_EQ(call.exitCode, exitCode) << mode << "\n" << call.err;
    const std::string status = "HTTP " + mode.substr(mode.size() - 3);
    EXPECT_THAT(errorLine(call), HasSubstr(status)) << mode << "\n" << call.err;
    EXPECT_THAT(errorLine(call), ::testing::Not(HasSubstr("could not"))) << mode;
    // initialize and tools/list went through; only the call met the status.
    auto tools = against(mode, Command::kTools);
    EXPECT_EQ(tools.exitCode, 0) << mode << "\n" << tools.err;
    EXPECT_THAT(tools.out, HasSubstr("echo")) << mode;
  }
}

TEST_F(HostileHttpTest, FloodOnTheListenStreamDoesNotStopTheCall) {
  for (const Command command : {Command::kCall, Command::kTools, Command::kDoctor}) {
    auto result = against("flood-listen", command);
    EXPECT_EQ(result.exitCode, 0) << name(command) << "\n" << result.out << result.err;
    EXPECT_LT(result.seconds, 20) << name(command);
    if (command == Command::kCall) {
      EXPECT_THAT(result.out, HasSubstr("hi"));
    }
  }
}

TEST_F(HostileHttpTest, LegacyStreamThatNeverAnnouncesItsEndpointFailsFast) {
  expectFailsEverywhere("legacy-flood", 4, "without announcing an endpoint", 15);
}

TEST_F(HostileHttpTest, LegacyFloodBetweenAnswersDoesNotStopTheCall) {
  auto call = against("legacy-flood-after", Command::kCall);
  EXPECT_EQ(call.exitCode, 0) << call.err;
  EXPECT_THAT(call.out, HasSubstr("hi"));
  // Junk events warn three times at most, however many arrive.
  EXPECT_LE(linesStarting(call.err, "kaja: warning:").size(), 3u) << call.err;
  EXPECT_LT(call.seconds, 20);
}

TEST_F(HostileHttpTest, DeleteAnsweredWithAKeepAliveStreamDoesNotHoldTheExit) {
  for (const Command command : {Command::kCall, Command::kTools, Command::kDoctor}) {
    auto result = against("delete-stream", command);
    EXPECT_EQ(result.exitCode, 0) << name(command) << "\n" << result.out << result.err;
    // The close limit is 2 s; it used to be never.
    EXPECT_LT(result.seconds, 10) << name(command);
    EXPECT_GE(server_->count("DELETE "), 1) << name(command);
  }
}

TEST_F(HostileHttpTest, PingFloodOpensFewConnectionsAndEndsTheConnection) {
  for (const std::string mode : {"ping-flood", "ping-flood-listen", "legacy-ping-flood"}) {
    for (const Command command : {Command::kCall, Command::kTools, Command::kDoctor}) {
      auto result = against(mode, command);
      const std::string what = mode + " / " + name(command);
      EXPECT_LT(result.seconds, 30) << what;
      int peak = 0;
      for (const auto& line : server_->lines()) {
        if (line.starts_with("CONNECTIONS ")) peak = std::max(peak, std::atoi(line.c_str() + 12));
      }
      // One stream, the GET stream and four replies in flight, with room to spare; one
      // connection per reply reached thousands.
      EXPECT_LE(peak, 10) << what;
      // On the listen stream the flood races the command: tools/list may be answered before
      // kaja has seen enough pings. Whenever the command fails, it names the flood.
      const bool racing = mode == "ping-flood-listen" && result.exitCode == 0;
      if (racing) continue;
      if (command != Command::kDoctor) {
        EXPECT_THAT(result.err, HasSubstr("faster than kaja could answer")) << what;
      } else {
        EXPECT_THAT(result.out, HasSubstr("failed")) << what;
      }
    }
  }
}

TEST_F(HostileHttpTest, RetryZeroOnTheListenStreamReconnectsAFewTimesOnly) {
  auto call = against("retry-zero", Command::kCall);
  EXPECT_EQ(call.exitCode, 0) << call.err;
  EXPECT_THAT(call.out, HasSubstr("hi"));
  // During the 3 s call: the first GET and three reconnects at 250, 500 and 1000 ms; it
  // used to be thousands.
  EXPECT_GE(server_->count("LISTEN"), 2);
  EXPECT_LE(server_->count("LISTEN"), 5);
}

TEST_F(HostileHttpTest, ServerValuesAreCheckedBeforeTheyAreSentBack) {
  for (const std::string mode :
       {"session-cr", "session-ctl", "session-long", "session-space", "session-utf8"}) {
    expectFailsEverywhere(mode, 4, "sent an Mcp-Session-Id that", 15);
  }
  expectFailsEverywhere("version-cr", 4, "MCP-Protocol-Version", 15);
  for (const std::string mode : {"event-id-ctl", "event-id-long", "event-id-utf8"}) {
    auto call = against(mode, Command::kCall);
    EXPECT_EQ(call.exitCode, 1) << mode << "\n" << call.err;
    EXPECT_THAT(errorLine(call), HasSubstr("event id that kaja cannot send back")) << call.err;
    EXPECT_LT(call.seconds, 15) << mode;
  }
}

TEST_F(HostileHttpTest, DeepNestingFailsWithAnErrorInsteadOfACrash) {
  // Needs the bounded depth of json_rpc's parser; until then kaja may die of SIGSEGV here.
  for (const std::string mode : {"deep-json", "deep-sse", "legacy-deep"}) {
    for (const Command command : {Command::kCall, Command::kTools, Command::kDoctor}) {
      auto result = against(mode, command, 40);
      const std::string what = mode + " / " + name(command);
      EXPECT_LT(result.seconds, 30) << what;
      if (command == Command::kCall) {
        EXPECT_NE(errorLine(result), "") << what << "\n" << result.err;
      }
    }
  }
  auto call = against("deep-call", Command::kCall, 40);
  EXPECT_NE(call.exitCode, 0) << call.out;
  EXPECT_NE(errorLine(call), "") << call.err;
}

// Runs `script` (sh) inside a new network namespace that has only loopback; the fault
// server, when the script starts one, lives and dies there too.
class HostileHttpNamespaceTest : public HostileHttpTest {
 protected:
  // Runs `command` against `url`, or against a fault server in `mode` started inside the
  // namespace when `mode` is not empty (then `url` is its path).
  CommandResult inNamespace(const std::string& mode, const std::string& url, bool sse,
                            Command command) {
    const std::string toml = root_.path() + "/market/abilities/h/mcp.toml";
    root_.write("market/abilities/h/mcp.toml", "");
    const std::string transport = sse ? "sse" : "http";
    std::string script = "ip link set lo up || exit 97\n";
    if (mode.empty()) {
      script += "printf 'transport = \"" + transport + "\"\\nurl = \"" + url + "\"\\n' > '" + toml +
                "'\n";
    } else {
      // The file goes first: the server's shell truncates it only once it has forked, so a
      // wait that ran before then would read the previous server's port.
      script += "rm -f '" + root_.path() + "/server.out'\n";
      script += "'" + std::string(kaja::test::binDir()) + "/kaja_fault_http_server' " + mode +
                " > '" + root_.path() + "/server.out' &\nserver=$!\n" +
                "for i in $(seq 100); do grep -qs '^PORT' '" + root_.path() +
                "/server.out' && break; sleep 0.1; done\n" + "port=$(sed -n 's/^PORT //p' '" +
                root_.path() + "/server.out')\n" + "printf 'transport = \"" + transport +
                "\"\\nurl = \"http://127.0.0.1:%s" + url + "\"\\n' \"$port\" > '" + toml + "'\n";
    }
    script += "'" + std::string(kaja::test::binDir()) + "/kaja'";
    for (const auto& arg : argsFor(command)) script += " '" + arg + "'";
    script += "\nstatus=$?\n";
    if (!mode.empty()) script += "kill $server; wait $server 2>/dev/null\n";
    script += "exit $status\n";
    RunOptions options;
    options.timeoutSeconds = 60;
    auto result =
        runCommandWith({"/usr/bin/unshare", "-n", "/bin/sh", "-c", script}, env(), options);
    expectSound(result, (mode.empty() ? url : mode) + " / " + name(command));
    return result;
  }

  void expectRefusedEverywhere(const std::string& mode, const std::string& url, bool sse,
                               const std::string& phrase) {
    const std::string what = mode.empty() ? url : mode;
    auto call = inNamespace(mode, url, sse, Command::kCall);
    EXPECT_EQ(call.exitCode, 3) << what << "\n" << call.err;
    EXPECT_THAT(errorLine(call), HasSubstr(phrase)) << what << "\n" << call.err;
    auto tools = inNamespace(mode, url, sse, Command::kTools);
    EXPECT_EQ(tools.exitCode, 0) << what << "\n" << tools.err;
    EXPECT_THAT(tools.err, HasSubstr(phrase)) << what;
    auto doctor = inNamespace(mode, url, sse, Command::kDoctor);
    EXPECT_EQ(doctor.exitCode, 1) << what << "\n" << doctor.out << doctor.err;
    EXPECT_THAT(doctor.out, HasSubstr("failed")) << what;
  }
};

TEST_F(HostileHttpNamespaceTest, MetadataAddressesAreRefusedWithExit3) {
  if (const std::string problem = namespaceProblem(); !problem.empty()) GTEST_SKIP() << problem;
  for (const std::string url :
       {"http://169.254.169.254/latest/meta-data/", "http://100.100.100.200/mcp",
        "http://[fd00:ec2::254]/mcp", "http://[::ffff:169.254.169.254]/mcp",
        "http://metadata.google.internal/mcp", "http://0.0.0.0/mcp"}) {
    expectRefusedEverywhere("", url, false, "refused");
  }
  expectRefusedEverywhere("", "http://169.254.169.254/sse", true, "refused");
}

TEST_F(HostileHttpNamespaceTest, RedirectsKajaDoesNotFollowAreRefusedWithExit3) {
  if (const std::string problem = namespaceProblem(); !problem.empty()) GTEST_SKIP() << problem;
  expectRefusedEverywhere("redirect-file", "/mcp", false, "not an http or https URL");
  expectRefusedEverywhere("redirect-metadata", "/mcp", false, "on another origin");
  expectRefusedEverywhere("redirect-307-cross", "/mcp", false, "on another origin");
  expectRefusedEverywhere("legacy-endpoint-file", "/sse", true, "not an http or https URL");
  expectRefusedEverywhere("legacy-cross", "/sse", true, "on another origin");
}

}  // namespace
}  // namespace kaja::testing
