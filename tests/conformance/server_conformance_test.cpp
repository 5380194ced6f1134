// The official MCP conformance suite's server scenarios, both the 2025-11-25 and the 2026-07-28
// sets, against tests/servers/conformance_server.mjs: directly over Streamable HTTP, and
// through `kaja serve --http --names bare` fronting the same server as a stdio child. Every
// scenario that passes directly must pass through kaja; fronting a server that speaks only
// 2025-11-25, kaja must still pass the 2026-07-28 scenarios that server's tools, resources
// and prompts cover.
//
// One suite run covers every scenario of a spec version (a few seconds), in a fresh network
// namespace that has only loopback (unshare -n; skipped, saying so, where not permitted), with
// the server under test started in the same shell and killed after the run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/mcp/json_rpc.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::testing {
namespace {

const std::string kSource = kaja::test::sourceDir();
const std::string kSuiteDir = kSource + "/tests/conformance/node_modules";
const std::string kNode = kSuiteDir + "/.bin/node";
const std::string kSuite = kSuiteDir + "/@modelcontextprotocol/conformance/dist/index.js";
const std::string kServer = kSource + "/tests/servers/conformance_server.mjs";
const std::string kKaja = std::string(kaja::test::binDir()) + "/kaja";
const std::string kPath = "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
const std::vector<std::string> kEnv = {kPath, "HOME=/tmp", "NO_COLOR=1"};
// Inside a fresh namespace every port is free, so the servers use fixed ones.
constexpr int kServerPort = 3931;
constexpr int kGatewayPort = 3932;
// Where `kaja serve --http` answers MCP requests.
const std::string kGatewayPath = "/mcp";

// Every server scenario of each spec version (`--suite all`, which includes the suite's
// pending ones); the reference server passes all of them directly.
const std::vector<std::string> k2025Scenarios = {"server-initialize",
                                                 "server-session-lifecycle",
                                                 "logging-set-level",
                                                 "ping",
                                                 "completion-complete",
                                                 "tools-list",
                                                 "tools-call-simple-text",
                                                 "tools-call-image",
                                                 "tools-call-audio",
                                                 "tools-call-embedded-resource",
                                                 "tools-call-mixed-content",
                                                 "tools-call-with-logging",
                                                 "tools-call-error",
                                                 "tools-call-with-progress",
                                                 "tools-call-sampling",
                                                 "tools-call-elicitation",
                                                 "json-schema-2020-12",
                                                 "elicitation-sep1034-defaults",
                                                 "server-sse-polling",
                                                 "server-sse-multiple-streams",
                                                 "elicitation-sep1330-enums",
                                                 "resources-list",
                                                 "resources-read-text",
                                                 "resources-read-binary",
                                                 "resources-templates-read",
                                                 "resources-subscribe",
                                                 "resources-unsubscribe",
                                                 "prompts-list",
                                                 "prompts-get-simple",
                                                 "prompts-get-with-args",
                                                 "prompts-get-embedded-resource",
                                                 "prompts-get-with-image",
                                                 "dns-rebinding-protection"};

// The 2026-07-28 scenarios whose tools, resources and prompts a 2025-only server has too:
// all but server-stateless (it probes diagnostic tools that only a 2026-07-28 server offers)
// and the input-required-result ones (their tools return input_required, a 2026-07-28 result).
const std::vector<std::string> k2026CommonScenarios = {"completion-complete",
                                                       "tools-list",
                                                       "tools-call-simple-text",
                                                       "tools-call-image",
                                                       "tools-call-audio",
                                                       "tools-call-embedded-resource",
                                                       "tools-call-mixed-content",
                                                       "tools-call-error",
                                                       "tools-call-with-progress",
                                                       "json-schema-2020-12",
                                                       "server-sse-multiple-streams",
                                                       "resources-list",
                                                       "resources-read-text",
                                                       "resources-read-binary",
                                                       "resources-templates-read",
                                                       "sep-2164-resource-not-found",
                                                       "prompts-list",
                                                       "prompts-get-simple",
                                                       "prompts-get-with-args",
                                                       "prompts-get-embedded-resource",
                                                       "prompts-get-with-image",
                                                       "dns-rebinding-protection",
                                                       "caching",
                                                       "http-header-validation",
                                                       "http-custom-header-server-validation"};

std::vector<std::string> all2026Scenarios() {
  std::vector<std::string> all = {"server-stateless"};
  all.insert(all.end(), k2026CommonScenarios.begin(), k2026CommonScenarios.end());
  for (const char* name :
       {"basic-elicitation", "basic-sampling", "basic-list-roots", "request-state",
        "multiple-input-requests", "multi-round", "missing-input-response", "non-tool-request",
        "result-type", "unsupported-methods", "tampered-state", "capability-check",
        "ignore-extra-params", "validate-input"}) {
    all.push_back(std::string("input-required-result-") + name);
  }
  return all;
}

/// One scenario's line in the suite's summary.
struct ScenarioResult {
  bool passed = false;  ///< no check failed
  int checksPassed = 0;
  int checksFailed = 0;
};

/// What one run of the suite reported.
struct SuiteRun {
  std::map<std::string, ScenarioResult> scenarios;
  std::string output;  ///< the suite's and the shell's output, then the server's log
  int exitCode = -1;
  double seconds = 0;
};

std::string quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Reads the summary lines, "✓ tools-list: 3 passed, 0 failed" or "✗ ...: 1 passed, 2 failed".
std::map<std::string, ScenarioResult> parseSummary(const std::string& output) {
  std::map<std::string, ScenarioResult> scenarios;
  const auto summary = output.find("=== SUMMARY ===");
  if (summary == std::string::npos) return scenarios;
  const std::string pass = "\xE2\x9C\x93 ", fail = "\xE2\x9C\x97 ";
  size_t start = summary;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    const std::string line = output.substr(start, end - start);
    start = end + 1;
    const bool passed = line.starts_with(pass);
    if (!passed && !line.starts_with(fail)) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    ScenarioResult result{.passed = passed};
    std::sscanf(line.c_str() + colon + 1, " %d passed, %d failed", &result.checksPassed,
                &result.checksFailed);
    scenarios[line.substr(pass.size(), colon - pass.size())] = result;
  }
  return scenarios;
}

// Returns an empty string when `unshare -n` works here, else why it does not.
std::string namespaceProblem() {
  const auto result = runCommand(
      {"/usr/bin/unshare", "-n", "/bin/sh", "-c", "ip link set lo up && exit 0"}, {kPath});
  if (result.exitCode == 0) return {};
  return "unshare -n is not permitted here (" + result.err.substr(0, 200) +
         "); the servers under test would need a private loopback, so these scenarios are "
         "not run";
}

// The shell that runs one suite run in a fresh network namespace. The run is its own process
// group, so `kill 0` ends the server under test and whatever it started.
constexpr const char* kRunScript = R"(ip link set lo up || exit 90
(@START@) >@LOG@ 2>&1 </dev/null &
up=0
for i in $(seq 1 600); do
  if (exec 3<>/dev/tcp/127.0.0.1/@PORT@) 2>/dev/null; then up=1; break; fi
  sleep 0.05
done
rc=91
if [ $up = 1 ]; then
  @SUITE@
  rc=$?
else
  echo 'the server under test never listened on port @PORT@'
fi
trap '' TERM
kill -TERM 0 2>/dev/null
wait
echo '--- server log (tail)'
tail -c 4000 @LOG@
exit $rc
)";

void replaceAll(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

/// Runs the suite's server scenarios selected by `suiteArgs` against `url`, in one shell in a
/// fresh network namespace: `startServer` (a shell command) is started in the background
/// with `env`, the run waits until `port` on 127.0.0.1 accepts connections, runs the suite,
/// then ends every process of the run. Results are written under `resultsDir`.
SuiteRun runServerSuite(const std::string& startServer, int port, const std::string& url,
                        const std::string& suiteArgs, const std::vector<std::string>& env,
                        const std::string& resultsDir) {
  std::string script = kRunScript;
  replaceAll(script, "@START@", startServer);
  replaceAll(script, "@PORT@", std::to_string(port));
  replaceAll(script, "@LOG@", quote(resultsDir + "/server.log"));
  replaceAll(script, "@SUITE@",
             quote(kNode) + " " + quote(kSuite) + " server --url " + quote(url) + " " + suiteArgs +
                 " --timeout 20000 -o " + quote(resultsDir + "/results"));
  RunOptions options;
  options.timeoutSeconds = 600;
  const auto result =
      runCommandWith({"/usr/bin/unshare", "-n", "/bin/bash", "-c", script}, env, options);
  SuiteRun run;
  run.output = result.out + result.err;
  run.exitCode = result.timedOut ? -2 : result.exitCode;
  run.seconds = result.seconds;
  run.scenarios = parseSummary(result.out);
  return run;
}

/// The shell command that serves the reference server over HTTP on kServerPort.
std::string directServer(bool legacyOnly) {
  return "exec " + quote(kNode) + " " + quote(kServer) + " http --port " +
         std::to_string(kServerPort) + (legacyOnly ? " --legacy-only" : "");
}

std::string directUrl() { return "http://127.0.0.1:" + std::to_string(kServerPort) + "/mcp"; }

// The end of a run's output, where the summary and the server's log are.
std::string tailOf(const std::string& output) {
  constexpr size_t kShown = 12000;
  return output.size() > kShown ? output.substr(output.size() - kShown) : output;
}

/// Expects each of `expected` to have run and passed, records every scenario's verdict as a
/// test property, and shows the run's output when anything is off.
void expectPassed(const SuiteRun& run, const std::vector<std::string>& expected) {
  SCOPED_TRACE(tailOf(run.output));
  ASSERT_FALSE(run.scenarios.empty())
      << "the suite printed no summary (exit " << run.exitCode << ")";
  for (const auto& [name, result] : run.scenarios) {
    ::testing::Test::RecordProperty(name, result.passed ? "passed" : "failed");
  }
  for (const std::string& name : expected) {
    const auto found = run.scenarios.find(name);
    if (found == run.scenarios.end()) {
      ADD_FAILURE() << name << " did not run";
      continue;
    }
    EXPECT_TRUE(found->second.passed)
        << name << ": " << found->second.checksFailed << " check(s) failed";
  }
}

class ServerConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string problem = namespaceProblem(); !problem.empty()) GTEST_SKIP() << problem;
  }

  std::string results() { return dir_.path(); }

  TempDir dir_;
};

TEST_F(ServerConformanceTest, ReferenceServerPasses2025ScenariosDirectly) {
  const auto run = runServerSuite(directServer(false), kServerPort, directUrl(),
                                  "--suite all --spec-version 2025-11-25", kEnv, results());
  expectPassed(run, k2025Scenarios);
  EXPECT_EQ(run.scenarios.size(), k2025Scenarios.size()) << "the suite's 2025-11-25 set changed";
  EXPECT_EQ(run.exitCode, 0);
  EXPECT_LT(run.seconds, 120);
}

TEST_F(ServerConformanceTest, ReferenceServerPasses2026ScenariosDirectly) {
  const auto run = runServerSuite(directServer(false), kServerPort, directUrl(),
                                  "--suite all --spec-version 2026-07-28", kEnv, results());
  const auto all = all2026Scenarios();
  expectPassed(run, all);
  EXPECT_EQ(run.scenarios.size(), all.size()) << "the suite's 2026-07-28 set changed";
  EXPECT_EQ(run.exitCode, 0);
  EXPECT_LT(run.seconds, 120);
}

// The 2025-only variant is what the gateway must upgrade: it passes the 2025-11-25 set and
// turns a 2026-07-28 client away.
TEST_F(ServerConformanceTest, LegacyOnlyServerSpeaksOnly2025) {
  const auto run = runServerSuite(directServer(true), kServerPort, directUrl(),
                                  "--suite all --spec-version 2025-11-25", kEnv, results());
  expectPassed(run, k2025Scenarios);
  EXPECT_EQ(run.exitCode, 0);

  const auto modern = runServerSuite(directServer(true), kServerPort, directUrl(),
                                     "--suite all --spec-version 2026-07-28", kEnv, results());
  SCOPED_TRACE(tailOf(modern.output));
  for (const char* name : {"server-stateless", "tools-list", "tools-call-simple-text"}) {
    ASSERT_TRUE(modern.scenarios.contains(name)) << name;
    EXPECT_FALSE(modern.scenarios.at(name).passed) << name;
  }
  EXPECT_NE(modern.exitCode, 0);
}

// Through the gateway: `kaja serve --http 127.0.0.1:PORT --names bare` with a private
// marketplace whose one ability runs the reference server as a stdio child.
class GatewayConformanceTest : public ServerConformanceTest {
 protected:
  void SetUp() override {
    ServerConformanceTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_TRUE(std::filesystem::exists(kKaja)) << "build kaja first";
  }

  /// Writes the marketplace, persona and home, and returns the environment kaja runs with.
  /// The ability asks no approval: what is measured is the gateway's transparency, not its
  /// policy.
  /// `protocol`, when not empty, is the ability's `protocol`: the version kaja speaks to it.
  std::vector<std::string> gatewayEnv(bool legacyOnly, const std::string& protocol = {}) {
    const std::string root = market_.path();
    std::string args = "\"" + kServer + "\", \"stdio\"";
    if (legacyOnly) args += ", \"--legacy-only\"";
    market_.write("market/abilities/reference/mcp.toml",
                  "command = \"node\"\nargs = [" + args + "]\napproval = \"never\"\n" +
                      (protocol.empty() ? "" : "protocol = \"" + protocol + "\"\n"));
    market_.write("market/personas/conformance.toml", "abilities = [\"reference\"]\n");
    std::filesystem::create_directories(root + "/home");
    return {"HOME=" + root + "/home",
            "XDG_CONFIG_HOME=" + root + "/config",
            "XDG_DATA_HOME=" + root + "/data",
            kPath,
            "KAJA_SHIPPED_MARKETPLACE=" + root + "/market",
            "NO_COLOR=1"};
  }

  SuiteRun runThroughGateway(bool legacyOnly, const std::string& suiteArgs,
                             const std::string& protocol = {}) {
    const auto env = gatewayEnv(legacyOnly, protocol);
    const std::string serve = "exec " + quote(kKaja) +
                              " serve --http 127.0.0.1:" + std::to_string(kGatewayPort) +
                              " --names bare --persona conformance";
    const std::string url = "http://127.0.0.1:" + std::to_string(kGatewayPort) + kGatewayPath;
    return runServerSuite(serve, kGatewayPort, url, suiteArgs, env, results());
  }

  TempDir market_;
};

TEST_F(GatewayConformanceTest, Passes2025ScenariosThroughKaja) {
  const auto run = runThroughGateway(false, "--suite all --spec-version 2025-11-25");
  expectPassed(run, k2025Scenarios);
}

// kaja speaks 2026-07-28 to a server that can, so the reference server offers its
// input_required tools through kaja: their rounds reach the client with the server's own keys,
// under kaja's requestState, and each call tells the server the capabilities of kaja's
// client. The two scenarios that do not pass are kaja's rule, not gaps: they expect a
// server's roots/list to reach the client, and kaja never passes the client's roots to a
// server (it answers with the persona's folders, and this ability has no `roots = true`).
const std::vector<std::string> kAskForClientRoots = {
    "input-required-result-basic-list-roots", "input-required-result-multiple-input-requests"};

void expectAllBut(const SuiteRun& run, const std::vector<std::string>& refused) {
  auto expected = all2026Scenarios();
  for (const auto& name : refused) std::erase(expected, name);
  expectPassed(run, expected);
  for (const auto& name : refused) {
    const auto found = run.scenarios.find(name);
    ASSERT_NE(found, run.scenarios.end()) << name;
    EXPECT_FALSE(found->second.passed) << name << ": kaja passed a roots/list on to its client";
  }
}

TEST_F(GatewayConformanceTest, Passes2026ScenariosThroughKaja) {
  const auto run = runThroughGateway(false, "--suite all --spec-version 2026-07-28");
  expectAllBut(run, kAskForClientRoots);
}

// The same with the ability's `protocol = "2026-07-28"`, which also takes away the fallback.
TEST_F(GatewayConformanceTest, Passes2026ScenariosSpeaking2026ToTheServer) {
  const auto run = runThroughGateway(false, "--suite all --spec-version 2026-07-28", "2026-07-28");
  expectAllBut(run, kAskForClientRoots);
}

// With `protocol = "2025-11-25"` kaja speaks 2025 to the server, which then offers the tools
// and the prompt of these scenarios (test_input_required_result_*, and test_missing_capability
// for two checks of server-stateless) only to a client that speaks 2026-07-28 to it, so
// through kaja they are not there to call. A stateless client of kaja does get input rounds
// (kaja's approvals, and what a 2025 server asks mid-call, as input_required results):
// tests/cli/serve_input_required_test.cpp.
const std::vector<std::string> kGapsSpeaking2025 = {"input-required-result-basic-elicitation",
                                                    "input-required-result-basic-list-roots",
                                                    "input-required-result-basic-sampling",
                                                    "input-required-result-capability-check",
                                                    "input-required-result-multi-round",
                                                    "input-required-result-multiple-input-requests",
                                                    "input-required-result-non-tool-request",
                                                    "input-required-result-request-state",
                                                    "input-required-result-result-type",
                                                    "input-required-result-tampered-state",
                                                    "input-required-result-unsupported-methods",
                                                    "input-required-result-ignore-extra-params",
                                                    "server-stateless"};

std::vector<std::string> withoutGaps(std::vector<std::string> scenarios) {
  std::erase_if(scenarios, [](const std::string& name) {
    return std::find(kGapsSpeaking2025.begin(), kGapsSpeaking2025.end(), name) !=
           kGapsSpeaking2025.end();
  });
  return scenarios;
}

TEST_F(GatewayConformanceTest, Passes2026ScenariosSpeaking2025ToTheServer) {
  const auto run = runThroughGateway(false, "--suite all --spec-version 2026-07-28", "2025-11-25");
  const auto expected = withoutGaps(all2026Scenarios());
  ASSERT_GE(expected.size(), 20U);
  expectPassed(run, expected);
}

// A 2025 client of kaja in front of a server kaja speaks 2026-07-28 to: what the server asks
// within a call reaches the client as requests of kaja's own, and its subscriptions and log
// level become the server's listen filter and each request's _meta.
TEST_F(GatewayConformanceTest, Passes2025ScenariosSpeaking2026ToTheServer) {
  const auto run = runThroughGateway(false, "--suite all --spec-version 2025-11-25", "2026-07-28");
  expectPassed(run, k2025Scenarios);
}

/// Returns every check one scenario's run wrote under `resultsDir`, as id and status.
std::vector<std::pair<std::string, std::string>> checksOf(const std::string& resultsDir,
                                                          const std::string& scenario) {
  std::vector<std::pair<std::string, std::string>> checks;
  std::error_code ec;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(resultsDir, ec)) {
    const std::string path = entry.path().string();
    if (entry.path().filename() != "checks.json" ||
        path.find("server-" + scenario + "-") == std::string::npos)
      continue;
    std::ifstream in(entry.path());
    const auto parsed = core::mcp::Json::parse(in, nullptr, false);
    if (!parsed.is_array()) continue;
    for (const auto& check : parsed) {
      if (check.is_object()) checks.emplace_back(check.value("id", ""), check.value("status", ""));
    }
  }
  return checks;
}

// Every check of server-stateless passes through kaja: _meta validation, versions, 404 for
// removed methods, error ids, a capability the client did not declare, no log messages
// without a log level, and subscriptions/listen (acknowledgement, subscription ids, the
// filter).
TEST_F(GatewayConformanceTest, StatelessChecksPassThroughKaja) {
  const auto run =
      runThroughGateway(false, "--scenario server-stateless --spec-version 2026-07-28");
  SCOPED_TRACE(tailOf(run.output));
  const auto checks = checksOf(results() + "/results", "server-stateless");
  ASSERT_GE(checks.size(), 25U);
  std::set<std::string> passed;
  for (const auto& [id, status] : checks) {
    EXPECT_NE(status, "FAILURE") << id;
    if (status == "SUCCESS") passed.insert(id);
  }
  for (const char* id :
       {"sep-2575-request-meta-invalid-missing-meta", "sep-2575-http-server-meta-invalid-400",
        "sep-2575-http-server-unsupported-version-400", "sep-2575-http-server-header-mismatch-400",
        "sep-2575-http-server-method-not-found-404-ping",
        "sep-2575-http-server-method-not-found-404", "sep-2575-http-server-error-jsonrpc-id",
        "sep-2575-server-sends-subscription-ack", "sep-2575-server-tags-subscription-id",
        "sep-2575-server-honors-notification-filter",
        "sep-2575-server-rejects-undeclared-capability", "sep-2575-missing-capability-http-400",
        "sep-2575-server-no-log-without-loglevel"}) {
    EXPECT_TRUE(passed.contains(id)) << id;
  }
}

TEST_F(GatewayConformanceTest, Passes2025ScenariosFrontingA2025OnlyServer) {
  const auto run = runThroughGateway(true, "--suite all --spec-version 2025-11-25");
  expectPassed(run, k2025Scenarios);
}

// kaja speaks 2026-07-28 to its client whatever its servers speak.
TEST_F(GatewayConformanceTest, Upgrades2025OnlyServerTo2026) {
  const auto run = runThroughGateway(true, "--suite all --spec-version 2026-07-28");
  const auto expected = withoutGaps(k2026CommonScenarios);
  ASSERT_GE(expected.size(), 20U);
  expectPassed(run, expected);
}

}  // namespace
}  // namespace kaja::testing
