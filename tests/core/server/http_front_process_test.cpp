// The HTTP front as a program of its own (tests/tools/kaja_front_echo): driven by the
// official TypeScript SDK client, and measured while it refuses huge bodies.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "core/mcp/json_rpc.h"
#include "tests/core/mcp/test_servers.h"
#include "tests/core/server/echo_front_process.h"
#include "tests/core/server/http_client.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"

namespace kaja::core::server {
namespace {

using kaja::testing::RawHttp;
using mcp::Json;

using kaja::testing::EchoFrontProcess;
using kaja::testing::kFrontEchoHelper;
TEST(HttpFrontProcessTest, TheTypeScriptSdkClientTalksToTheFront) {
  const std::string node = kaja::testing::nodePath();
  ASSERT_FALSE(node.empty()) << "node is needed for this test";
  const std::string script =
      std::string(kaja::test::sourceDir()) + "/tests/core/server/sdk_http_client.mjs";
  kaja::testing::RunOptions options;
  options.timeoutSeconds = 60;
  const auto result = kaja::testing::runCommandWith({node, script, kFrontEchoHelper},
                                                    {"PATH=/usr/bin:/bin", "HOME=/tmp"}, options);
  ASSERT_EQ(result.exitCode, 0) << result.err;
  const Json seen = Json::parse(result.out);
  EXPECT_EQ(seen["sessionId"].get<std::string>().size(), 64U);
  EXPECT_EQ(seen["tools"], Json::array({"echo"}));
  ASSERT_EQ(seen["progress"].size(), 1U);
  EXPECT_EQ(seen["progress"][0]["progress"], 1);
  EXPECT_EQ(seen["text"], R"({"word":"hello"})");
  EXPECT_EQ(seen["elicitations"], 1);
  EXPECT_EQ(seen["elicited"], "accept");
  EXPECT_EQ(seen["terminated"], true);
}

TEST(HttpFrontProcessTest, TheSdk2ClientSpeaksBothEras) {
  const std::string node = kaja::testing::nodePath();
  ASSERT_FALSE(node.empty()) << "node is needed for this test";
  const std::string script =
      std::string(kaja::test::sourceDir()) + "/tests/core/server/sdk2_http_client.mjs";
  kaja::testing::RunOptions options;
  options.timeoutSeconds = 60;
  const auto result = kaja::testing::runCommandWith({node, script, kFrontEchoHelper},
                                                    {"PATH=/usr/bin:/bin", "HOME=/tmp"}, options);
  ASSERT_EQ(result.exitCode, 0) << result.err;
  std::istringstream lines(result.out);
  std::map<std::string, Json> byMode;
  for (std::string line; std::getline(lines, line);) {
    const Json seen = Json::parse(line);
    byMode[seen["mode"]] = seen;
  }
  ASSERT_EQ(byMode.size(), 3U) << result.out;
  EXPECT_EQ(byMode["auto"]["version"], "2026-07-28");
  EXPECT_EQ(byMode["pin"]["version"], "2026-07-28");
  EXPECT_EQ(byMode["legacy"]["version"], "2025-11-25");
  for (const auto& [mode, seen] : byMode) {
    EXPECT_EQ(seen["tools"], Json::array({"echo"})) << mode;
    EXPECT_EQ(seen["text"], R"({"word":"hi"})") << mode;
    EXPECT_EQ(seen["progress"], 1) << mode;
  }
}

TEST(HttpFrontProcessTest, HugeBodiesAreRefusedWithoutMemoryGrowing) {
  EchoFrontProcess front("http");
  ASSERT_GT(front.port(), 0);
  const std::string headers =
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n"
      "Content-Type: application/json\r\n";
  {
    RawHttp warm(front.port());
    warm.write(headers + "Content-Length: 2\r\nConnection: close\r\n\r\n{}");
    warm.readAll();
  }
  const long before = front.peakKb();
  ASSERT_GT(before, 0);
  // 10 MB announced: refused from its headers.
  const std::string body = R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"p":")" +
                           std::string(10 << 20, 'm') + "\"}}";
  RawHttp announced(front.port());
  announced.write(headers + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n");
  announced.write(body);
  EXPECT_EQ(announced.readAll().status, 413);
  // 40 MB chunked: refused once past the 4 MB limit.
  RawHttp chunked(front.port());
  chunked.write(headers + "Transfer-Encoding: chunked\r\n\r\n");
  const std::string piece(1 << 20, 'c');
  for (int i = 0; i < 40; ++i) {
    if (!chunked.write("100000\r\n" + piece + "\r\n")) break;
  }
  EXPECT_EQ(chunked.readAll().status, 413);
  // And the server goes on.
  RawHttp good(front.port());
  const std::string initialize = R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{}})";
  good.write(headers + "Content-Length: " + std::to_string(initialize.size()) +
             "\r\nConnection: close\r\n\r\n" + initialize);
  const auto answered = good.readAll();
  EXPECT_EQ(answered.status, 200);
  EXPECT_FALSE(answered.header("mcp-session-id").empty());
  const long after = front.peakKb();
  // At most one 4 MB body is held (with a string's growth); a server that read either body
  // whole would grow by 10 MB or 40 MB.
  if (kaja::testing::kMemoryIsMeasured) {
    EXPECT_LT(after - before, 10 * 1024) << "before " << before << " KB, after " << after << " KB";
  }
}

}  // namespace
}  // namespace kaja::core::server
