// A browser in the sandbox: chrome-devtools-mcp (pinned in tests/npm) drives Debian's
// chromium, confined by the real worker, in the worker lab (tests/sandbox/worker_lab.h).
// Chromium on Linux without a desktop session takes its proxy from HTTP_PROXY and
// HTTPS_PROXY, which the worker sets to its egress bridge: the public page loads, the
// private ones are refused by the worker's proxy, the metadata address (which Chrome will
// not send to a proxy) has no route, and nothing else is set up for Chrome.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "tests/sandbox/worker_lab.h"
#include "tests/support/build_paths.h"
#include "tests/support/temp_dir.h"

namespace kaja::sandbox {
namespace {

constexpr const char* kChromium = "/usr/bin/chromium";

TEST(SandboxWorkerChromeTest, ChromeDevtoolsMcpLoadsThePublicPageAndIsRefusedThePrivateOnes) {
  if (const std::string why = worker_lab::labUnavailable(); !why.empty()) GTEST_SKIP() << why;
  const std::string server = std::string(kaja::test::sourceDir()) +
                             "/tests/npm/node_modules/chrome-devtools-mcp/build/src/bin/"
                             "chrome-devtools-mcp.js";
  // .ci/setup installs both; a machine set up by hand may lack them.
  if (!std::filesystem::exists(kChromium)) GTEST_SKIP() << "Debian's chromium is not installed";
  if (!std::filesystem::exists(server)) GTEST_SKIP() << "tests/npm is not installed";
  kaja::testing::TempDir dir;
  // The root worker runs the server as nobody, so Chrome starts its own sandbox inside the
  // worker's confinement (as root it would refuse to without --no-sandbox), in a user
  // namespace of its own, which `--userns browser` allows this ability alone.
  // --no-page-id-routing lets each call act on the selected page.
  dir.write("market/abilities/browser/mcp.toml",
            "command = \"node\"\nargs = [\"" + server +
                "\", \"--headless\", \"--isolated\", \"--executablePath=" + kChromium +
                "\", \"--no-usage-statistics\", \"--no-performance-crux\", "
                "\"--no-page-id-routing\"]\n"
                "env = { CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS = \"1\" }\n"
                "tools = [\"navigate_page\", \"take_snapshot\"]\n");
  const std::string key = dir.write("key", std::string(32, 'c'));
  ::chmod(key.c_str(), 0600);
  const auto snapshot = [](const std::string& name) {
    return worker_lab::LabCall{name + "-snapshot", "take_snapshot", "{}"};
  };
  const auto go = [](const std::string& name, const std::string& url) {
    return worker_lab::LabCall{name, "navigate_page", R"({"type":"url","url":")" + url + R"("})"};
  };
  const auto result = worker_lab::runWorkerLab(
      dir, "browser",
      {go("public", "http://93.184.216.34/"), snapshot("public"), go("private", "http://10.0.0.5/"),
       snapshot("private"), go("metadata", "http://169.254.169.254/"), snapshot("metadata"),
       go("private-name", "http://private.example/"), snapshot("private-name"),
       go("public-name", "http://public.example/"), snapshot("public-name")},
      240, {"--userns", "browser"});
  ASSERT_EQ(result.exitCode, 0) << result.out << result.err;
  EXPECT_EQ(result.leftovers, 0) << "origins or the worker outlived the lab";
  auto replies = result.replies;
  ASSERT_EQ(replies.size(), 10U) << result.out << result.err;
  if (std::getenv("KAJA_SHOW")) std::fprintf(stderr, "%s", result.out.c_str());
  for (const char* loaded : {"public-snapshot", "public-name-snapshot"}) {
    EXPECT_NE(replies[loaded].find("page-of-93.184.216.34"), std::string::npos)
        << loaded << ": " << replies[loaded];
  }
  for (const char* refused : {"private", "private-name"}) {
    const std::string page = replies[std::string(refused) + "-snapshot"];
    EXPECT_EQ(page.find("page-of-"), std::string::npos) << refused << ": " << page;
    // The page Chrome shows is the proxy's refusal, naming the address it would not dial.
    EXPECT_NE(page.find("kaja's sandbox refused"), std::string::npos) << refused << ": " << page;
  }
  // Chrome never sends link-local addresses to a proxy (its implicit bypass rules); it
  // dials 169.254.169.254 itself, and the namespace has no route there.
  const std::string metadata = replies["metadata-snapshot"];
  EXPECT_EQ(metadata.find("page-of-"), std::string::npos) << metadata;
  EXPECT_NE(replies["metadata"].find("net::ERR_"), std::string::npos) << replies["metadata"];
}

}  // namespace
}  // namespace kaja::sandbox
