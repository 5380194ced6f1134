// 1,000 calls against a server that dies on every 10th, reconnecting each time: no
// zombie and no leaked descriptor may remain.
#include <gtest/gtest.h>

#include "core/mcp/blocking_client.h"
#include "tests/core/mcp/test_servers.h"

namespace kaja::core::mcp {
namespace {

using namespace std::chrono_literals;

TEST(SoakTest, ThousandCallsWithCrashesLeaveNoZombieOrFd) {
  const int fdsBefore = kaja::testing::openFdCount();
  int succeeded = 0;
  int failed = 0;
  int connects = 0;
  {
    BlockingClient client;
    StdioOptions options;
    options.serverName = "flaky";
    options.closeGrace = 200ms;
    for (int call = 0; call < 1000; ++call) {
      if (!client.isConnected()) {
        auto info = client.connect(kaja::testing::faultPlan("die-every", 10), options);
        ASSERT_TRUE(info) << info.error().describe();
        ++connects;
      }
      auto result = client.callTool("echo", {{"text", std::to_string(call)}}, 5s);
      if (result) {
        ASSERT_EQ(result->text(), std::to_string(call));
        ++succeeded;
      } else {
        ASSERT_NE(result.error().message.find("exited with status 5"), std::string::npos)
            << result.error().message;
        ++failed;
      }
    }
  }
  EXPECT_EQ(succeeded, 900);
  EXPECT_EQ(failed, 100);
  EXPECT_EQ(connects, 100);
  EXPECT_TRUE(kaja::testing::zombieChildren().empty());
  EXPECT_EQ(kaja::testing::openFdCount(), fdsBefore);
}

}  // namespace
}  // namespace kaja::core::mcp
