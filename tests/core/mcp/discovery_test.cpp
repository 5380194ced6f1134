// ClientOptions::discover against servers that predate 2026-07-28: server/discover fails
// (method not found, or a 4xx over HTTP) and the client falls back to the initialize
// handshake, ending up exactly where a client without discover would.
#include <gtest/gtest.h>

#include "core/mcp/blocking_client.h"
#include "tests/core/mcp/test_servers.h"

namespace kaja::core::mcp {
namespace {

using namespace std::chrono_literals;
using kaja::testing::everythingPlan;
using kaja::testing::faultPlan;
using kaja::testing::nodePath;

ClientOptions discovering() {
  ClientOptions options;
  options.discover = true;
  options.connectTimeout = 15s;
  return options;
}

StdioOptions named(const std::string& name) {
  StdioOptions options;
  options.serverName = name;
  return options;
}

TEST(DiscoveryTest, FallsBackToInitializeWithKajasFaultServer) {
  BlockingClient client(discovering());
  auto info = client.connect(faultPlan("normal"), named("fault"));
  ASSERT_TRUE(info) << info.error().describe();
  EXPECT_EQ(info->protocolVersion, kLatestProtocolVersion);
  auto tools = client.listTools();
  ASSERT_TRUE(tools) << tools.error().describe();
  EXPECT_FALSE(tools->empty());
  client.close();
}

TEST(DiscoveryTest, FallsBackToInitializeWithServerEverything) {
  if (nodePath().empty()) GTEST_SKIP() << "node is not installed";
  BlockingClient client(discovering());
  auto info = client.connect(everythingPlan(), named("everything"));
  ASSERT_TRUE(info) << info.error().describe();
  EXPECT_NE(info->protocolVersion, kStatelessProtocolVersion);
  EXPECT_TRUE(isSupportedProtocolVersion(info->protocolVersion));
  auto echo = client.callTool("echo", {{"message", "after fallback"}});
  ASSERT_TRUE(echo) << echo.error().describe();
  EXPECT_NE(echo->text().find("after fallback"), std::string::npos);
  client.close();
}

}  // namespace
}  // namespace kaja::core::mcp
