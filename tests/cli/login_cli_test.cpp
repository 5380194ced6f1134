// `kaja login`, `kaja logout` and the tokens' use, against tests/servers/oauth_server.mjs (a
// protected MCP server with its own authorization server, on 127.0.0.1): doctor tells an
// OAuth server from one that wants a key, login signs in through a real loopback redirect
// (a stand-in browser follows the address with curl), calls carry the token and refresh it
// when it expires, a changed url drops the tokens, and no token ever shows in output.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli/cli_edit_fixture.h"
#include "tests/core/mcp/http_test_servers.h"
#include "tests/support/build_paths.h"

namespace kaja::testing {
namespace {

using nlohmann::json;

class LoginCliTest : public ::testing::Test, public CliEditFixture {
 protected:
  void startServer(const std::vector<std::string>& flags) {
    std::vector<std::string> argv{
        nodePath(), std::string(kaja::test::sourceDir()) + "/tests/servers/oauth_server.mjs"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    server_ = ServerProcess::start(minimalPlan(argv));
    ASSERT_NE(server_, nullptr) << "the OAuth test server did not start";
    root_.write("market/abilities/remote/mcp.toml",
                "transport = \"http\"\nurl = \"" + server_->url("/mcp") + "\"\n");
    root_.write("market/personas/online.toml", "abilities = [\"remote\"]\n");
    // The stand-in browser: follows the authorization address and its redirect, as a person
    // who approves at once would.
    root_.write("bin/browser", "#!/bin/sh\nexec curl -s -L -o /dev/null \"$1\"\n");
    std::filesystem::permissions(root_.path() + "/bin/browser", std::filesystem::perms::owner_all);
  }

  CommandResult kajaWithBrowser(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto environment = env();
    environment.push_back("BROWSER=" + root_.path() + "/bin/browser");
    RunOptions options;
    options.timeoutSeconds = 60;
    return runCommandWith(argv, environment, options);
  }

  // The access and refresh tokens stored now.
  std::vector<std::string> storedTokens() {
    std::vector<std::string> out;
    const std::string text = readFile(secretsFile());
    const std::regex token(R"re((access|refresh)_token = "([^"]+)")re");
    for (std::sregex_iterator it(text.begin(), text.end(), token), end; it != end; ++it) {
      out.push_back((*it)[2]);
    }
    return out;
  }

  static const json* row(const json& rows, const std::string& name) {
    for (const auto& item : rows) {
      if (item.value("name", "") == name) return &item;
    }
    return nullptr;
  }

  std::unique_ptr<ServerProcess> server_;
};

TEST_F(LoginCliTest, DoctorSaysTheServerWantsASignIn) {
  startServer({});
  auto doctor = kaja({"doctor", "--json", "remote"});
  auto report = json::parse(doctor.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << doctor.out << doctor.err;
  const json abilities = report.value("abilities", json::array());
  const json* remote = row(abilities, "remote");
  ASSERT_NE(remote, nullptr) << doctor.out;
  EXPECT_EQ(remote->value("state", ""), "failed");
  EXPECT_EQ(remote->value("access", ""), "oauth");
  EXPECT_NE(remote->value("hint", "").find("kaja login remote"), std::string::npos) << doctor.out;
}

TEST_F(LoginCliTest, DoctorSaysAKeyServerWantsAKey) {
  startServer({"--key-only"});
  auto doctor = kaja({"doctor", "--json", "remote"});
  auto report = json::parse(doctor.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << doctor.out << doctor.err;
  const json abilities = report.value("abilities", json::array());
  const json* remote = row(abilities, "remote");
  ASSERT_NE(remote, nullptr) << doctor.out;
  EXPECT_EQ(remote->value("access", ""), "key");
  EXPECT_NE(remote->value("hint", "").find("kaja key set remote"), std::string::npos);
  // And login refuses to sign in where there is nothing to sign in to.
  auto login = kajaWithBrowser({"login", "remote"});
  EXPECT_EQ(login.exitCode, 1) << login.err;
  EXPECT_NE(login.err.find("kaja key set remote"), std::string::npos) << login.err;
  EXPECT_FALSE(std::filesystem::exists(secretsFile()));
}

TEST_F(LoginCliTest, SignsInCallsRefreshesAndForgets) {
  startServer({"--token-ttl", "2"});
  auto login = kajaWithBrowser({"login", "remote"});
  ASSERT_EQ(login.exitCode, 0) << login.out << login.err;
  EXPECT_NE(login.err.find("signed in to remote"), std::string::npos) << login.err;
  EXPECT_EQ(server_->count("REGISTER "), 1);
  EXPECT_EQ(server_->count("TOKEN code"), 1);
  EXPECT_EQ(modeOf(secretsFile()), 0600);
  const auto first = storedTokens();
  ASSERT_EQ(first.size(), 2U) << readFile(secretsFile());
  for (const auto& token : first) {
    EXPECT_EQ(login.out.find(token), std::string::npos);
    EXPECT_EQ(login.err.find(token), std::string::npos);
  }

  auto call = kaja({"call", "--yes", "--persona", "online", "remote", "whoami"});
  EXPECT_EQ(call.exitCode, 0) << call.err;
  EXPECT_NE(call.out.find("token #"), std::string::npos) << call.out << call.err;

  // Past its lifetime the token is refreshed, the call goes through, and the new tokens are
  // saved for the next process.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  auto late = kaja({"call", "--yes", "--persona", "online", "remote", "whoami"});
  EXPECT_EQ(late.exitCode, 0) << late.err;
  // The first token had expired: the one the call carried came from a refresh.
  EXPECT_NE(late.out.find("token #"), std::string::npos) << late.out << late.err;
  EXPECT_FALSE(std::regex_search(late.out, std::regex("token #1([^0-9]|$)"))) << late.out;
  EXPECT_GE(server_->count("TOKEN refresh"), 1);
  EXPECT_EQ(server_->count("TOKEN code"), 1) << "a refresh must not need a new sign-in";
  const auto second = storedTokens();
  ASSERT_EQ(second.size(), 2U);
  EXPECT_NE(second[0], first[0]) << "the refreshed access token was not saved";

  auto status = kaja({"login", "--status", "--json"});
  auto rows = json::parse(status.out, nullptr, false);
  ASSERT_TRUE(rows.is_array()) << status.out;
  const json* remote = row(rows, "remote");
  ASSERT_NE(remote, nullptr);
  EXPECT_TRUE(remote->value("signedIn", false));
  EXPECT_TRUE(remote->value("refreshable", false));
  for (const auto& token : second) EXPECT_EQ(status.out.find(token), std::string::npos);

  auto logout = kaja({"logout", "remote"});
  EXPECT_EQ(logout.exitCode, 0) << logout.err;
  EXPECT_TRUE(storedTokens().empty()) << readFile(secretsFile());
  auto after = kaja({"call", "--yes", "--persona", "online", "remote", "whoami"});
  EXPECT_EQ(after.exitCode, 4) << after.out;
  EXPECT_NE(after.err.find("kaja login remote"), std::string::npos) << after.err;
}

TEST_F(LoginCliTest, ANewUrlDropsTheTokens) {
  startServer({});
  ASSERT_EQ(kajaWithBrowser({"login", "remote"}).exitCode, 0);
  const int before = server_->count("MCP initialize ok");
  // The same server under another name: a url the tokens were not given for.
  root_.write("market/abilities/remote/mcp.toml",
              "transport = \"http\"\nurl = \"http://localhost:" + std::to_string(server_->port()) +
                  "/mcp\"\n");
  auto status = kaja({"login", "--status", "--json"});
  auto rows = json::parse(status.out, nullptr, false);
  ASSERT_TRUE(rows.is_array()) << status.out;
  const json* remote = row(rows, "remote");
  ASSERT_NE(remote, nullptr);
  EXPECT_FALSE(remote->value("signedIn", true));
  EXPECT_TRUE(remote->value("urlChanged", false));
  auto call = kaja({"call", "--yes", "--persona", "online", "remote", "whoami"});
  EXPECT_EQ(call.exitCode, 4) << call.out;
  EXPECT_EQ(server_->count("MCP initialize ok"), before) << "a token went to the new url";
  EXPECT_GE(server_->count("MCP initialize 401"), 1);
}

// A server whose resource metadata sends kaja to a cloud metadata address: the address
// guard refuses the fetch before any packet leaves. Run inside a network namespace with only
// loopback, so that even a broken guard could reach nothing.
TEST_F(LoginCliTest, TheAddressGuardCoversEveryOAuthFetch) {
  const auto probe =
      runCommand({"/usr/bin/unshare", "-n", "/bin/sh", "-c", "ip link set lo up && exit 0"}, env());
  if (probe.exitCode != 0) GTEST_SKIP() << "unshare -n is not permitted here";
  root_.write("market/personas/online.toml", "abilities = [\"remote\"]\n");
  root_.write(
      "run.sh",
      "ip link set lo up\n"
      "'" +
          nodePath() + "' '" + std::string(kaja::test::sourceDir()) +
          "/tests/servers/oauth_server.mjs' --authorization-server "
          "https://169.254.169.254 > " +
          root_.path() +
          "/server.out &\n"
          "server=$!\n"
          "for i in $(seq 100); do grep -q PORT " +
          root_.path() +
          "/server.out && break; sleep 0.1; done\n"
          "port=$(sed -n 's/^PORT //p' " +
          root_.path() +
          "/server.out)\n"
          "mkdir -p " +
          root_.path() +
          "/market/abilities/remote\n"
          "printf 'transport = \"http\"\\nurl = \"http://127.0.0.1:%s/mcp\"\\n' \"$port\" > " +
          root_.path() +
          "/market/abilities/remote/mcp.toml\n"
          "'" +
          std::string(kaja::test::binDir()) +
          "/kaja' login --no-browser remote\n"
          // Ended and reaped here: nothing of the test outlives it.
          "status=$?\nkill $server\nwait $server\nexit $status\n");
  auto result = runCommand({"/usr/bin/unshare", "-n", "/bin/sh", root_.path() + "/run.sh"}, env());
  EXPECT_EQ(result.exitCode, 3) << result.out << result.err;
  EXPECT_NE(result.err.find("169.254.169.254"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("link-local"), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(secretsFile()));
}

TEST_F(LoginCliTest, RefusesStdioAbilitiesAndUnknownNames) {
  auto stdio = kaja({"login", "echo"});
  EXPECT_EQ(stdio.exitCode, 2);
  EXPECT_NE(stdio.err.find("stdio server"), std::string::npos) << stdio.err;
  auto unknown = kaja({"login", "nope"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_NE(unknown.err.find("no ability named"), std::string::npos) << unknown.err;
  auto usage = kaja({"login"});
  EXPECT_EQ(usage.exitCode, 2);
}

}  // namespace
}  // namespace kaja::testing
