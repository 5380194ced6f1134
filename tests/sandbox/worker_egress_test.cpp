// The whole way out of a confined server, through the real worker, in the worker lab
// (tests/sandbox/worker_lab.h): the worker runs a small MCP server
// (tests/servers/egress_probe_server.mjs) that fetches through $HTTP_PROXY or connects
// directly.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "tests/sandbox/worker_lab.h"
#include "tests/support/build_paths.h"
#include "tests/support/temp_dir.h"

namespace kaja::sandbox {
namespace {

// Writes the probe ability and the worker's key into `dir`. The server's script lives
// beside its manifest, where a confined server may read it.
void writeProbe(const kaja::testing::TempDir& dir) {
  std::ifstream script(std::string(kaja::test::sourceDir()) +
                       "/tests/servers/egress_probe_server.mjs");
  const std::string probe = dir.write("market/abilities/probe/server.mjs",
                                      std::string(std::istreambuf_iterator<char>(script), {}));
  dir.write("market/abilities/probe/mcp.toml",
            "command = \"node\"\nargs = [\"" + probe + "\"]\ntools = [\"fetch\", \"connect\"]\n");
  const std::string key = dir.write("key", std::string(32, 'e'));
  ::chmod(key.c_str(), 0600);
}

TEST(SandboxWorkerEgressTest, ServersReachPublicAddressesOnlyAndOnlyThroughTheProxy) {
  if (const std::string why = worker_lab::labUnavailable(); !why.empty()) GTEST_SKIP() << why;
  kaja::testing::TempDir dir;
  writeProbe(dir);
  const auto result =
      worker_lab::runWorkerLab(dir, "probe",
                               {{"public", "fetch", R"({"url":"http://93.184.216.34/"})"},
                                {"public-name", "fetch", R"({"url":"http://public.example/"})"},
                                {"private", "fetch", R"({"url":"http://10.0.0.5/"})"},
                                {"metadata", "fetch", R"({"url":"http://169.254.169.254/"})"},
                                {"private-name", "fetch", R"({"url":"http://private.example/"})"},
                                {"mixed-name", "fetch", R"({"url":"http://mixed.example/"})"},
                                {"mapped", "fetch", R"({"url":"http://[::ffff:10.0.0.5]/"})"},
                                {"loopback", "fetch", R"({"url":"http://127.0.0.1:80/"})"},
                                {"raw-public", "connect", R"({"host":"93.184.216.34","port":80})"},
                                {"raw-private", "connect", R"({"host":"10.0.0.5","port":80})"}},
                               180);
  ASSERT_EQ(result.exitCode, 0) << result.out << result.err;
  EXPECT_EQ(result.leftovers, 0) << "origins or the worker outlived the lab";
  auto replies = result.replies;
  ASSERT_EQ(replies.size(), 10U) << result.out << result.err;
  if (std::getenv("KAJA_SHOW")) std::fprintf(stderr, "%s", result.out.c_str());
  EXPECT_NE(replies["public"].find("200 page-of-93.184.216.34"), std::string::npos)
      << replies["public"];
  EXPECT_NE(replies["public-name"].find("200 page-of-93.184.216.34"), std::string::npos)
      << replies["public-name"];
  for (const char* refused :
       {"private", "metadata", "private-name", "mixed-name", "mapped", "loopback"}) {
    EXPECT_NE(replies[refused].find("403"), std::string::npos)
        << refused << ": " << replies[refused];
    EXPECT_EQ(replies[refused].find("page-of-"), std::string::npos)
        << refused << ": " << replies[refused];
  }
  // Without the proxy there is no way out at all, even to the public address.
  for (const char* raw : {"raw-public", "raw-private"}) {
    EXPECT_EQ(replies[raw].find("connected"), std::string::npos) << raw << ": " << replies[raw];
    EXPECT_NE(replies[raw].find("error"), std::string::npos) << raw << ": " << replies[raw];
  }
}

TEST(SandboxWorkerEgressTest, AllowPrivateOpensItsRangeOnlyThroughTheProxy) {
  if (const std::string why = worker_lab::labUnavailable(); !why.empty()) GTEST_SKIP() << why;
  kaja::testing::TempDir dir;
  writeProbe(dir);
  const auto result = worker_lab::runWorkerLab(
      dir, "probe",
      {{"private", "fetch", R"({"url":"http://10.0.0.5/"})"},
       {"private-name", "fetch", R"({"url":"http://private.example/"})"},
       {"mapped", "fetch", R"({"url":"http://[::ffff:10.0.0.5]/"})"},
       {"public", "fetch", R"({"url":"http://93.184.216.34/"})"},
       {"metadata", "fetch", R"({"url":"http://169.254.169.254/"})"},
       {"loopback", "fetch", R"({"url":"http://127.0.0.1:80/"})"},
       {"raw-private", "connect", R"({"host":"10.0.0.5","port":80})"}},
      180, {"--allow-private", "10.0.0.0/8", "--allow-private=192.168.77.0/24"});
  ASSERT_EQ(result.exitCode, 0) << result.out << result.err;
  EXPECT_EQ(result.leftovers, 0) << "origins or the worker outlived the lab";
  auto replies = result.replies;
  ASSERT_EQ(replies.size(), 7U) << result.out << result.err;
  std::ifstream errFile(dir.path() + "/worker.err");
  const std::string workerErr(std::istreambuf_iterator<char>(errFile), {});
  EXPECT_NE(workerErr.find("may also reach 10.0.0.0/8, 192.168.77.0/24"), std::string::npos)
      << workerErr;
  for (const char* reached : {"private", "private-name", "mapped"}) {
    EXPECT_NE(replies[reached].find("200 page-of-10.0.0.5"), std::string::npos)
        << reached << ": " << replies[reached];
  }
  EXPECT_NE(replies["public"].find("200 page-of-93.184.216.34"), std::string::npos)
      << replies["public"];
  for (const char* refused : {"metadata", "loopback"}) {
    EXPECT_NE(replies[refused].find("403"), std::string::npos)
        << refused << ": " << replies[refused];
    EXPECT_EQ(replies[refused].find("page-of-"), std::string::npos)
        << refused << ": " << replies[refused];
  }
  // The range opens the proxy, not the namespace: a direct connection still has no route.
  EXPECT_EQ(replies["raw-private"].find("connected"), std::string::npos) << replies["raw-private"];
  EXPECT_NE(replies["raw-private"].find("error"), std::string::npos) << replies["raw-private"];
}

}  // namespace
}  // namespace kaja::sandbox
