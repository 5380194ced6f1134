// kaja's client under the official MCP conformance suite: each client scenario runs
// build/bin/kaja-conformance-client against the suite's own scenario server, at the
// scenario's wire version. The suite's servers listen on every interface, so each run
// happens in a fresh network namespace that has only loopback (unshare -n, needs root or
// user namespaces; the test is skipped, saying so, where that is not permitted).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"

namespace kaja::testing {
namespace {

struct Scenario {
  const char* name;
  const char* version;
};

const std::string kSuiteDir =
    std::string(kaja::test::sourceDir()) + "/tests/conformance/node_modules";
const std::string kNode = kSuiteDir + "/.bin/node";
const std::string kSuite = kSuiteDir + "/@modelcontextprotocol/conformance/dist/index.js";
const std::string kDriver = std::string(kaja::test::binDir()) + "/kaja-conformance-client";
const std::vector<std::string> kEnv = {"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
                                       "HOME=/tmp", "NO_COLOR=1"};

// Returns an empty string when `unshare -n` works here, else why it does not.
std::string namespaceProblem() {
  const auto result =
      runCommand({"/usr/bin/unshare", "-n", "/bin/sh", "-c", "ip link set lo up && exit 0"}, kEnv);
  if (result.exitCode == 0) return {};
  return "unshare -n is not permitted here (" + result.err.substr(0, 200) +
         "); the suite's servers would listen on every interface, so these scenarios are "
         "not run";
}

class ConformanceTest : public ::testing::TestWithParam<Scenario> {};

std::string testName(const ::testing::TestParamInfo<Scenario>& info) {
  std::string name = std::string(info.param.name) + "_" + info.param.version;
  for (char& c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0) c = '_';
  }
  return name;
}

TEST_P(ConformanceTest, ScenarioPasses) {
  if (const std::string problem = namespaceProblem(); !problem.empty()) GTEST_SKIP() << problem;
  const Scenario& scenario = GetParam();
  const std::string command = "ip link set lo up && exec '" + kNode + "' '" + kSuite +
                              "' client --command '" + kDriver + "' --scenario " + scenario.name +
                              // An extension is on no spec version: the suite runs it without.
                              (std::string(scenario.version) == "extension"
                                   ? std::string()
                                   : std::string(" --spec-version ") + scenario.version) +
                              " --timeout 20000";
  const auto result = runCommand({"/usr/bin/unshare", "-n", "/bin/sh", "-c", command}, kEnv);
  const std::string output = result.out + result.err;
  SCOPED_TRACE(output.size() > 6000 ? output.substr(output.size() - 6000) : output);
  EXPECT_EQ(output.find("SKIPPED: scenario"), std::string::npos) << "the suite skipped it";
  EXPECT_NE(output.find("OVERALL: PASSED"), std::string::npos);
  EXPECT_NE(output.find(" 0 failed, 0 warnings"), std::string::npos);
  EXPECT_EQ(result.exitCode, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Client, ConformanceTest,
    ::testing::Values(Scenario{"initialize", "2025-11-25"}, Scenario{"tools_call", "2025-11-25"},
                      Scenario{"elicitation-sep1034-client-defaults", "2025-11-25"},
                      Scenario{"sse-retry", "2025-11-25"}, Scenario{"tools_call", "2026-07-28"},
                      Scenario{"request-metadata", "2026-07-28"},
                      Scenario{"sep-2322-client-request-state", "2026-07-28"},
                      Scenario{"http-standard-headers", "2026-07-28"},
                      Scenario{"http-custom-headers", "2026-07-28"},
                      Scenario{"http-invalid-tool-headers", "2026-07-28"},
                      Scenario{"json-schema-ref-no-deref", "2026-07-28"}),
    testName);

// The client authorization scenarios (core/auth, signed in headlessly): every one the suite
// lists, at every version it lists it for.
std::vector<Scenario> authScenarios() {
  static const char* const kBoth[] = {"auth/metadata-default",
                                      "auth/metadata-var1",
                                      "auth/metadata-var2",
                                      "auth/metadata-var3",
                                      "auth/basic-cimd",
                                      "auth/scope-from-www-authenticate",
                                      "auth/scope-from-scopes-supported",
                                      "auth/scope-omitted-when-undefined",
                                      "auth/scope-step-up",
                                      "auth/scope-retry-limit",
                                      "auth/token-endpoint-auth-basic",
                                      "auth/token-endpoint-auth-post",
                                      "auth/token-endpoint-auth-none",
                                      "auth/pre-registration"};
  static const char* const kDraftOnly[] = {"auth/resource-mismatch",
                                           "auth/offline-access-scope",
                                           "auth/offline-access-not-supported",
                                           "auth/authorization-server-migration",
                                           "auth/iss-supported",
                                           "auth/iss-not-advertised",
                                           "auth/iss-supported-missing",
                                           "auth/iss-wrong-issuer",
                                           "auth/iss-unexpected",
                                           "auth/iss-normalized",
                                           "auth/metadata-issuer-mismatch"};
  std::vector<Scenario> out;
  for (const char* name : kBoth) {
    out.push_back({name, "2025-11-25"});
    out.push_back({name, "2026-07-28"});
  }
  for (const char* name : kDraftOnly) out.push_back({name, "2026-07-28"});
  for (const char* name : {"auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post",
                           "auth/token-endpoint-auth-none"}) {
    out.push_back({name, "2025-06-18"});
  }
  out.push_back({"auth/2025-03-26-oauth-metadata-backcompat", "2025-03-26"});
  out.push_back({"auth/2025-03-26-oauth-endpoint-fallback", "2025-03-26"});
  // Extensions kaja implements: client credentials (SEP-1046), workload identity (RFC 7523)
  // and enterprise-managed authorization (SEP-990). DPoP is not implemented.
  for (const char* name : {"auth/client-credentials-basic", "auth/client-credentials-jwt",
                           "auth/wif-jwt-bearer", "auth/enterprise-managed-authorization"}) {
    out.push_back({name, "extension"});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Auth, ConformanceTest, ::testing::ValuesIn(authScenarios()), testName);

}  // namespace
}  // namespace kaja::testing
