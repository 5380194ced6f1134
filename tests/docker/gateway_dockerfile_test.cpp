// docker/kaja.Dockerfile without a Docker engine: its instructions are checked against this
// Debian 12 machine, and its runtime stage is played outside Docker: kaja installed under a
// /usr prefix as the package installs it, started with the image's ENTRYPOINT and CMD as a
// non-root user, answering MCP over HTTP with the bearer token and refusing without it.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "tests/cli/serve_test_support.h"
#include "tests/docker/dockerfile.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::docker {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;

const std::string kSource = kaja::test::sourceDir();
const std::string kBuild = fs::path(kaja::test::binDir()).parent_path().string();
const std::vector<std::string> kPath = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};

class GatewayDockerfileTest : public ::testing::Test {
 protected:
  GatewayDockerfileTest()
      : stages_(parseDockerfile(testing::readFile(kSource + "/docker/kaja.Dockerfile"))) {}
  [[nodiscard]] const Stage& runtime() const { return stages_.back(); }
  // The runtime stage's command line: ENTRYPOINT then CMD, both in exec form.
  [[nodiscard]] std::vector<std::string> commandLine() const {
    std::vector<std::string> argv;
    for (const char* keyword : {"ENTRYPOINT", "CMD"}) {
      auto found = runtime().all(keyword);
      if (found.size() != 1) return {};
      json part = json::parse(found.front().rest, nullptr, false);
      if (!part.is_array()) return {};
      for (const auto& word : part) argv.push_back(word.get<std::string>());
    }
    return argv;
  }
  std::vector<Stage> stages_;
};

TEST_F(GatewayDockerfileTest, BuildsThePackageAndInstallsItAsAptWould) {
  ASSERT_EQ(stages_.size(), 2u);
  EXPECT_THAT(stages_[0].from, HasSubstr("debian:bookworm"));
  EXPECT_THAT(stages_[1].from, HasSubstr("debian:bookworm"));
  const std::string build = stages_[0].runs();
  EXPECT_THAT(build, HasSubstr("--target kaja kaja_docs"));
  EXPECT_THAT(build, HasSubstr("cpack -G DEB"));
  EXPECT_THAT(build, HasSubstr("cd marketplace/runtime && npm ci"));
  // The runtime stage installs the package built in the first one, and no compiler.
  auto copies = runtime().all("COPY");
  ASSERT_FALSE(copies.empty());
  EXPECT_THAT(copies.front().rest, HasSubstr("--from=build /kaja.deb /tmp/kaja.deb"));
  EXPECT_THAT(runtime().aptPackages(), ::testing::Contains("/tmp/kaja.deb"));
  for (const char* tool : {"g++", "cmake", "make"}) {
    EXPECT_FALSE(runtime().aptPackages().contains(tool)) << tool;
  }
  // Every package either stage asks apt for exists in this machine's Debian 12 lists: one
  // apt-cache run for all, and one each only to name the missing.
  std::vector<std::string> packages;
  for (const auto& stage : stages_) {
    for (const auto& package : stage.aptPackages()) {
      if (!package.starts_with("/")) packages.push_back(package);
    }
  }
  ASSERT_GE(packages.size(), 10u);
  std::vector<std::string> all = {"/usr/bin/apt-cache", "show", "--no-all-versions"};
  all.insert(all.end(), packages.begin(), packages.end());
  if (testing::runCommand(all, kPath).exitCode != 0) {
    for (const auto& package : packages) {
      auto shown =
          testing::runCommand({"/usr/bin/apt-cache", "show", "--no-all-versions", package}, kPath);
      EXPECT_EQ(shown.exitCode, 0) << package << " is not a Debian 12 package";
    }
  }
}

TEST_F(GatewayDockerfileTest, RunsTheGatewayAsAFixedNonRootUserBehindATokenOnItsExposedPort) {
  auto users = runtime().all("USER");
  ASSERT_EQ(users.size(), 1u);
  const std::string uid = users.front().rest.substr(0, users.front().rest.find(':'));
  ASSERT_TRUE(std::regex_match(uid, std::regex("[0-9]+"))) << users.front().rest;
  EXPECT_NE(std::stoi(uid), 0);
  auto argv = commandLine();
  ASSERT_GE(argv.size(), 6u);
  EXPECT_EQ(argv[0], "/usr/bin/tini");
  EXPECT_EQ(argv[2], "/usr/bin/kaja");
  EXPECT_EQ(argv[3], "serve");
  auto http = std::find(argv.begin(), argv.end(), "--http");
  ASSERT_NE(http, argv.end());
  ASSERT_NE(http + 1, argv.end());
  const std::string port = (http + 1)->substr((http + 1)->rfind(':') + 1);
  auto exposed = runtime().all("EXPOSE");
  ASSERT_EQ(exposed.size(), 1u);
  EXPECT_EQ(exposed.front().rest, port);
  // Reachable from outside the container, so the token is required.
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--token-file"), argv.end());
}

TEST_F(GatewayDockerfileTest, ItsRuntimeStagePlayedOutsideDockerServesMcpWithTheToken) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run kaja as the image's user";
  testing::TempDir root;
  ::chmod(root.path().c_str(), 0755);
  // The package's files, at the package's paths under a /usr prefix.
  const std::string usr = root.path() + "/usr";
  auto installed =
      testing::runCommand({"/usr/bin/cmake", "--install", kBuild, "--prefix", usr}, kPath);
  ASSERT_EQ(installed.exitCode, 0) << installed.err;
  // The image's USER, home and token file.
  const std::string uid = runtime().all("USER").front().rest;
  const std::string home = root.path() + "/home";
  fs::create_directories(home);
  ::chown(home.c_str(), 10001, 10001);
  const std::string token = "0123456789abcdef0123456789abcdef";
  const std::string tokenFile = root.write("token", token + "\n");
  ::chown(tokenFile.c_str(), 10001, 10001);
  ::chmod(tokenFile.c_str(), 0600);

  auto argv = commandLine();
  ASSERT_FALSE(argv.empty());
  // tini is the container's PID 1 and not part of this play; the address is loopback here.
  argv.erase(argv.begin(), argv.begin() + 2);
  argv[0] = usr + "/bin/kaja";
  for (auto& word : argv) {
    if (word.starts_with("0.0.0.0:")) word = "127.0.0.1:0";
    if (word == "/run/secrets/kaja-token") word = tokenFile;
  }
  std::vector<std::string> command = {"/usr/bin/setpriv", "--reuid=" + uid.substr(0, uid.find(':')),
                                      "--regid=" + uid.substr(uid.find(':') + 1), "--clear-groups"};
  command.insert(command.end(), argv.begin(), argv.end());
  const std::string errPath = root.path() + "/serve.err";
  testing::ServeProcess serve(
      command,
      {"HOME=" + home, "XDG_DATA_HOME=" + home + "/data", "NO_COLOR=1", "PATH=/usr/bin:/bin"},
      errPath);
  std::string url;
  ASSERT_TRUE(testing::eventually(
      [&] {
        std::smatch found;
        const std::string err = testing::readFile(errPath);
        static const std::regex at("at (http://127\\.0\\.0\\.1:[0-9]+/mcp)");
        if (!std::regex_search(err, found, at)) return false;
        url = found[1].str();
        return true;
      },
      30))
      << testing::readFile(errPath);

  const std::string initialize =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
      R"("capabilities":{},"clientInfo":{"name":"docker-test","version":"1"}}})";
  auto post = [&](const std::vector<std::string>& headers) {
    std::vector<std::string> curl = {"/usr/bin/curl",
                                     "-sS",
                                     "-o",
                                     "-",
                                     "-w",
                                     "\n%{http_code}",
                                     "-H",
                                     "Content-Type: application/json",
                                     "-H",
                                     "Accept: application/json, text/event-stream",
                                     "--data",
                                     initialize,
                                     "--max-time",
                                     "20"};
    for (const auto& header : headers) {
      curl.push_back("-H");
      curl.push_back(header);
    }
    curl.push_back(url);
    return testing::runCommand(curl, kPath);
  };
  auto refused = post({});
  EXPECT_THAT(refused.out, ::testing::EndsWith("\n401")) << refused.out << refused.err;
  auto answered = post({"Authorization: Bearer " + token});
  EXPECT_THAT(answered.out, ::testing::EndsWith("\n200")) << answered.out << answered.err;
  EXPECT_THAT(answered.out, HasSubstr("\"serverInfo\"")) << answered.out;
  // It runs as the image's user, not root.
  const std::string status = testing::readFile("/proc/" + std::to_string(serve.pid()) + "/status");
  EXPECT_THAT(status, HasSubstr("Uid:\t10001\t10001"));
}

}  // namespace
}  // namespace kaja::docker
