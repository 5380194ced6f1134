// `kaja find`: a fixture registry and a fixture npm search on 127.0.0.1 (nothing reaches the
// internet), with hostile, clashing, huge and malformed answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "marketplace/sync/verify.h"
#include "tests/cli/cli_edit_fixture.h"
#include "tests/core/mcp/http_test_servers.h"
#include "tests/support/build_paths.h"

namespace kaja::testing {
namespace {

using nlohmann::json;

// Nothing listens on port 1 of the loopback: a registry that cannot be reached.
constexpr const char* kDeadUrl = "http://127.0.0.1:1";

std::string suffixOf(const std::string& fullName) {
  return marketplace::sync::sha256Hex(fullName).substr(0, 6);
}

class FindCliTest : public ::testing::Test, public CliEditFixture {
 protected:
  void SetUp() override {
    server_ = ServerProcess::start(
        minimalPlan({nodePath(), std::string(kaja::test::sourceDir()) +
                                     "/tests/servers/registry_fixture_server.mjs"}));
    ASSERT_NE(server_, nullptr) << "the fixture registry did not start";
  }

  // Runs `kaja find ARGS` with the real shipped marketplace (so filesystem is taken) and
  // `extraEnv`; never with a default registry, which would be the internet.
  CommandResult find(const std::vector<std::string>& args,
                     const std::vector<std::string>& extraEnv = {}) {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja", "find"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> environment;
    for (const auto& entry : env()) {
      if (!entry.starts_with("KAJA_SHIPPED_MARKETPLACE=")) environment.push_back(entry);
    }
    environment.push_back("KAJA_SHIPPED_MARKETPLACE=" + std::string(kaja::test::sourceDir()) +
                          "/marketplace");
    environment.insert(environment.end(), extraEnv.begin(), extraEnv.end());
    bool registryGiven = false;
    bool npmGiven = false;
    for (const auto& entry : environment) {
      registryGiven = registryGiven || entry.starts_with("KAJA_REGISTRY_URL=");
      npmGiven = npmGiven || entry.starts_with("KAJA_NPM_REGISTRY_URL=");
    }
    if (!registryGiven) environment.push_back(std::string("KAJA_REGISTRY_URL=") + kDeadUrl);
    if (!npmGiven) environment.push_back(std::string("KAJA_NPM_REGISTRY_URL=") + kDeadUrl);
    RunOptions options;
    options.timeoutSeconds = 60;
    return runCommandWith(argv, environment, options);
  }

  // Returns the fixture's base URL for `mode` (ok, flat, fail, huge, malformed, moved).
  std::string at(const std::string& mode) const { return server_->url("/" + mode); }

  static json parseArray(const CommandResult& result) {
    json rows = json::parse(result.out, nullptr, false);
    EXPECT_TRUE(rows.is_array()) << result.out << result.err;
    return rows.is_array() ? rows : json::array();
  }

  static const json* byFullName(const json& rows, const std::string& fullName) {
    for (const auto& row : rows) {
      if (row.value("fullName", "") == fullName) return &row;
    }
    return nullptr;
  }

  static int countLines(const std::string& text) {
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  }

  std::unique_ptr<ServerProcess> server_;
};

TEST_F(FindCliTest, ShowsRegistryHitsQuotedOnOneLineWithTheirSecrets) {
  // Narrow searches, so that each row's cells fit their columns whole.
  auto acme = find({"forecasts", "--registry", at("ok")});
  ASSERT_EQ(acme.exitCode, 0) << acme.err;
  for (const char* header : {"NAME", "SOURCE", "RUNS", "NEEDS", "DESCRIPTION"}) {
    EXPECT_NE(acme.out.find(header), std::string::npos) << header << "\n" << acme.out;
  }
  EXPECT_NE(acme.out.find("weather-mcp "), std::string::npos) << acme.out;
  EXPECT_NE(acme.out.find("registry"), std::string::npos) << acme.out;
  EXPECT_NE(acme.out.find("npm:@acme/weather-mcp@1.2.3"), std::string::npos) << acme.out;
  EXPECT_NE(acme.out.find("secret: WEATHER_API_KEY"), std::string::npos) << acme.out;
  EXPECT_NE(acme.out.find("says: \"Forecasts"), std::string::npos) << acme.out;
  // UNITS is not secret, and the version that is not the latest is not shown.
  EXPECT_EQ(acme.out.find("UNITS"), std::string::npos) << acme.out;
  EXPECT_EQ(acme.out.find("Old forecasts"), std::string::npos) << acme.out;
  // weatherly is found too: "Forecasts." is a word of its description.
  EXPECT_NE(acme.out.find("weatherly"), std::string::npos) << acme.out;

  auto evil = find({"lookups", "--registry", at("ok")});
  ASSERT_EQ(evil.exitCode, 0) << evil.err;
  EXPECT_NE(evil.out.find("weather-helper"), std::string::npos) << evil.out;
  EXPECT_NE(evil.out.find("(withheld: it looked like"), std::string::npos) << evil.out;
  EXPECT_EQ(evil.out.find("Ignore"), std::string::npos) << evil.out;
  EXPECT_EQ(evil.out.find(".ssh"), std::string::npos) << evil.out;

  auto remote = find({"hosted", "--registry", at("ok")});
  ASSERT_EQ(remote.exitCode, 0) << remote.err;
  EXPECT_NE(remote.out.find("secret: Authorization"), std::string::npos) << remote.out;
  EXPECT_NE(remote.out.find("remote:https://weather."), std::string::npos) << remote.out;

  // Every hit at once: no escape, control character or injected text reaches the terminal,
  // and the text of one description stays on its row.
  auto all = find({"weather", "--registry", at("ok")});
  ASSERT_EQ(all.exitCode, 0) << all.err;
  EXPECT_NE(all.out.find("weather-term"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("pypi:weather-py==0.3.0"), std::string::npos) << all.out;
  for (char c : {'\x1b', '\r', '\a'}) {
    EXPECT_EQ(all.out.find(c), std::string::npos) << static_cast<int>(c) << "\n" << all.out;
  }
  EXPECT_EQ(all.out.find("\nSECOND"), std::string::npos) << all.out;
  EXPECT_EQ(all.out.find("Ignore all"), std::string::npos) << all.out;
  // Matched by token: weatherly holds "weather" only as a part; the deleted one is gone.
  EXPECT_EQ(all.out.find("weatherly"), std::string::npos) << all.out;
  EXPECT_EQ(all.out.find("weather-old"), std::string::npos) << all.out;
  server_->waitForLine("GET /ok/v0/servers?search=weather&", std::chrono::seconds(5));
  EXPECT_EQ(server_->count("GET /ok/v0/servers?search=weather&"), 1);
  EXPECT_EQ(all.err.find("NOT verified"), std::string::npos) << all.err;
}

TEST_F(FindCliTest, JsonNamesEachHitStablyAndWithholdsInjections) {
  auto first = find({"weather", "--json", "--registry", at("ok")});
  ASSERT_EQ(first.exitCode, 0) << first.err;
  json rows = parseArray(first);
  ASSERT_EQ(rows.size(), 10U) << rows.dump(2);

  const json* acme = byFullName(rows, "io.github.acme/weather-mcp");
  ASSERT_NE(acme, nullptr);
  EXPECT_EQ((*acme)["name"], "weather-mcp");
  EXPECT_EQ((*acme)["source"], "registry");
  EXPECT_EQ((*acme)["verified"], true);
  EXPECT_EQ((*acme)["version"], "1.2.3");
  EXPECT_EQ((*acme)["secrets"], json::array({"WEATHER_API_KEY"}));
  EXPECT_EQ((*acme)["runs"][0]["kind"], "npm");
  EXPECT_EQ((*acme)["runs"][0]["identifier"], "@acme/weather-mcp");
  EXPECT_EQ((*acme)["description"], "Forecasts and alerts for any city.");
  EXPECT_EQ(std::count_if(
                rows.begin(), rows.end(),
                [](const json& row) { return row["fullName"] == "io.github.acme/weather-mcp"; }),
            1);

  const json* evil = byFullName(rows, "io.github.evil/weather-helper");
  ASSERT_NE(evil, nullptr);
  EXPECT_TRUE((*evil)["description"].is_null());
  EXPECT_EQ((*evil)["withheld"], "it looked like instructions to a model");
  EXPECT_NE(
      std::find((*evil)["findings"].begin(), (*evil)["findings"].end(), "ignore-instructions"),
      (*evil)["findings"].end())
      << (*evil).dump();

  const json* ansi = byFullName(rows, "io.github.ansi/weather-term");
  ASSERT_NE(ansi, nullptr);
  std::string flattened = (*ansi)["description"];
  EXPECT_EQ(flattened.find('\x1b'), std::string::npos) << flattened;
  EXPECT_EQ(flattened.find('\n'), std::string::npos) << flattened;
  EXPECT_NE(flattened.find("SECOND LINE"), std::string::npos) << flattened;

  const json* remote = byFullName(rows, "io.github.cloud/weather-remote");
  ASSERT_NE(remote, nullptr);
  EXPECT_EQ((*remote)["runs"][0]["kind"], "remote");
  EXPECT_EQ((*remote)["runs"][0]["identifier"], "https://weather.example/mcp");
  EXPECT_EQ((*remote)["secrets"], json::array({"Authorization"}));

  const json* longOne = byFullName(rows, "io.github.long/weather-long");
  ASSERT_NE(longOne, nullptr);
  EXPECT_TRUE((*longOne)["description"].is_null());
  EXPECT_NE((*longOne)["withheld"].get<std::string>().find("over 4000"), std::string::npos);

  // Reserved, shipped and shared names get the SHA-256 suffix of the full name.
  const std::vector<std::pair<std::string, std::string>> suffixed = {
      {"io.github.z/kaja", "kaja-"},
      {"io.github.x/filesystem", "filesystem-"},
      {"io.github.dup1/weather-tools", "weather-tools-"},
      {"io.github.dup2/weather-tools", "weather-tools-"}};
  for (const auto& [fullName, prefix] : suffixed) {
    const json* row = byFullName(rows, fullName);
    ASSERT_NE(row, nullptr) << fullName;
    EXPECT_EQ((*row)["name"], prefix + suffixOf(fullName)) << fullName;
  }
  EXPECT_EQ(byFullName(rows, "io.github.y/weatherly"), nullptr);
  EXPECT_EQ(byFullName(rows, "io.github.gone/weather-old"), nullptr);

  // The same names on the next run.
  auto second = find({"weather", "--json", "--registry", at("ok")});
  ASSERT_EQ(second.exitCode, 0) << second.err;
  EXPECT_EQ(parseArray(second), rows);
}

TEST_F(FindCliTest, ReadsTheRegistrysOlderShapes) {
  auto result = find({"weather", "--json", "--registry", at("flat")});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  json rows = parseArray(result);
  ASSERT_EQ(rows.size(), 2U) << rows.dump(2);
  const json* classic = byFullName(rows, "io.github.old/weather-classic");
  ASSERT_NE(classic, nullptr);
  EXPECT_EQ((*classic)["version"], "0.9.0");
  EXPECT_EQ((*classic)["runs"][0]["identifier"], "weather-classic");
  EXPECT_EQ((*classic)["secrets"], json::array({"CLASSIC_TOKEN"}));
  const json* mid = byFullName(rows, "io.github.mid/weather-mid");
  ASSERT_NE(mid, nullptr);
  EXPECT_EQ((*mid)["runs"][0]["kind"], "oci");
  EXPECT_EQ((*mid)["description"], "Mid weather.");
}

TEST_F(FindCliTest, FallsBackToNpmWithALoudNotVerifiedWarning) {
  // Through the environment variables, as a user who set them once would.
  auto result = find({"weather", "--json"},
                     {"KAJA_REGISTRY_URL=" + at("fail"), "KAJA_NPM_REGISTRY_URL=" + at("ok")});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_NE(result.err.find("kaja: warning:"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("NOT verified"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("HTTP 500"), std::string::npos) << result.err;
  json rows = parseArray(result);
  ASSERT_EQ(rows.size(), 2U) << rows.dump(2);
  for (const auto& row : rows) {
    EXPECT_EQ(row["verified"], false) << row.dump();
    EXPECT_EQ(row["source"], "npm") << row.dump();
  }
  const json* server = byFullName(rows, "@acme/weather-mcp-server");
  ASSERT_NE(server, nullptr);
  EXPECT_EQ((*server)["name"], "weather-mcp-server");
  EXPECT_EQ((*server)["runs"][0]["version"], "0.4.0");
  // A package that does not call itself MCP is no server; an injection is withheld.
  EXPECT_EQ(byFullName(rows, "weather-js"), nullptr);
  const json* injector = byFullName(rows, "weather-injector-mcp");
  ASSERT_NE(injector, nullptr);
  EXPECT_TRUE((*injector)["description"].is_null());
  EXPECT_EQ(server_->count("GET /fail/v0/servers?search=weather&"), 1);
  server_->waitForLine("GET /ok/-/v1/search?text=weather&size=20 ", std::chrono::seconds(5));
  EXPECT_EQ(server_->count("GET /ok/-/v1/search?text=weather&size=20 "), 1);

  auto table = find({"weather", "--registry", at("fail"), "--npm-registry", at("ok")});
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_NE(table.out.find("npm (unverified)"), std::string::npos) << table.out;
  EXPECT_NE(table.err.find("NOT verified"), std::string::npos) << table.err;
}

TEST_F(FindCliTest, RefusesAFiftyMegabyteAnswerInOneSentence) {
  auto alone = find({"weather", "--registry", at("huge")});
  EXPECT_EQ(alone.exitCode, 1) << alone.err;
  EXPECT_NE(alone.err.find("larger than 4 MB"), std::string::npos) << alone.err;
  EXPECT_EQ(countLines(alone.err), 1) << alone.err;
  EXPECT_EQ(alone.err.rfind("kaja: error: ", 0), 0U) << alone.err;
  EXPECT_LT(alone.seconds, 15.0);
  EXPECT_TRUE(alone.out.empty()) << alone.out;

  auto fallback = find({"weather", "--json", "--registry", at("huge"), "--npm-registry", at("ok")});
  ASSERT_EQ(fallback.exitCode, 0) << fallback.err;
  EXPECT_NE(fallback.err.find("larger than 4 MB"), std::string::npos) << fallback.err;
  EXPECT_EQ(parseArray(fallback).size(), 2U);
}

TEST_F(FindCliTest, MalformedAnswersFromBothExitOne) {
  auto result = find({"weather", "--registry", at("malformed"), "--npm-registry", at("malformed")});
  EXPECT_EQ(result.exitCode, 1) << result.err;
  EXPECT_NE(result.err.find("not JSON"), std::string::npos) << result.err;
  EXPECT_EQ(countLines(result.err), 1) << result.err;
  EXPECT_TRUE(result.out.empty()) << result.out;
}

TEST_F(FindCliTest, NeitherRegistryReachableExitsFour) {
  auto result = find({"weather"});
  EXPECT_EQ(result.exitCode, 4) << result.err;
  EXPECT_NE(result.err.find("neither the MCP registry nor npm could be searched"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(countLines(result.err), 1) << result.err;
}

TEST_F(FindCliTest, FollowsARedirectAndHonoursTheLimit) {
  auto result = find({"weather", "--json", "--limit", "2", "--registry", at("moved")});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  json rows = parseArray(result);
  ASSERT_EQ(rows.size(), 2U) << rows.dump(2);
  EXPECT_EQ(rows[0]["fullName"], "io.github.acme/weather-mcp");
  // The server notes a request on its stdout, which may reach the test after kaja is done.
  EXPECT_TRUE(server_->waitForLine("GET /ok/v0/servers", std::chrono::seconds(5)));
  EXPECT_EQ(server_->count("GET /moved/v0/servers"), 1);
  EXPECT_EQ(server_->count("GET /ok/v0/servers"), 1);
}

TEST_F(FindCliTest, NoHitIsANoteAndExitsZero) {
  auto table = find({"zzyzx", "--registry", at("ok")});
  EXPECT_EQ(table.exitCode, 0) << table.err;
  EXPECT_TRUE(table.out.empty()) << table.out;
  EXPECT_NE(table.err.find("kaja: no server in the MCP registry has the word \"zzyzx\""),
            std::string::npos)
      << table.err;
  auto asJson = find({"zzyzx", "--json", "--registry", at("ok")});
  EXPECT_EQ(asJson.exitCode, 0) << asJson.err;
  EXPECT_EQ(parseArray(asJson), json::array());
}

TEST_F(FindCliTest, RefusesBadUsageBeforeAnyRequest) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"weather", "forecast", "--registry", at("ok")}, "searches for one word, and got 2"},
      {{"spotify-mcp", "--registry", at("ok")}, "holds the words spotify, mcp"},
      {{"--registry", at("ok")}, "needs one WORD"},
      {{"weather", "--limit", "0", "--registry", at("ok")}, "--limit"},
      {{"weather", "--limit", "500", "--registry", at("ok")}, "at most 100"},
      {{"weather", "--registry", "http://registry.example"}, "https"},
      {{"weather", "--registry", "ftp://127.0.0.1/x"}, "--registry takes an http(s) URL"},
      {{"weather", "--registry", at("ok"), "--npm-registry", "http://npm.example"}, "https"},
  };
  for (const auto& c : cases) {
    auto result = find(c.args);
    EXPECT_EQ(result.exitCode, 2) << c.says << ": " << result.err;
    EXPECT_NE(result.err.find(c.says), std::string::npos) << result.err;
    EXPECT_EQ(countLines(result.err), 1) << result.err;
  }
  EXPECT_EQ(server_->count("GET "), 0);
}

}  // namespace
}  // namespace kaja::testing
