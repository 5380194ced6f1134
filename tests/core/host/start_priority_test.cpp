#include "core/host/start_priority.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "tests/support/temp_dir.h"

namespace kaja::core {
namespace {

using std::chrono::milliseconds;

TEST(ConnectCostsTest, QuickServersYieldToTheSlowestRemembered) {
  ConnectCosts times;
  times.record("slow", milliseconds(600));
  times.record("as-slow", milliseconds(600));
  times.record("nearly", milliseconds(590));
  times.record("quick", milliseconds(80));
  std::vector<int> niceness = times.niceness({"slow", "as-slow", "nearly", "quick", "never-seen"});
  EXPECT_EQ(niceness, (std::vector<int>{0, 0, kYieldingNiceness, kYieldingNiceness, 0}));
  // Without the slowest, the next slowest goes first.
  EXPECT_EQ(times.niceness({"nearly", "quick"}), (std::vector<int>{0, kYieldingNiceness}));
  // Alone, or among servers never measured, nobody is slowed.
  EXPECT_EQ(times.niceness({"quick"}), std::vector<int>{0});
  EXPECT_EQ(times.niceness({"a", "b"}), (std::vector<int>{0, 0}));
}

TEST(ConnectCostsTest, TheLatestMeasurementCountsAndUnknownIsIgnored) {
  ConnectCosts costs;
  costs.record("fs", milliseconds(400));
  costs.record("fs", milliseconds(250));
  EXPECT_EQ(costs.last("fs"), milliseconds(250));
  costs.record("fs", milliseconds(-1));
  EXPECT_EQ(costs.last("fs"), milliseconds(250));
  EXPECT_EQ(costs.last("other"), milliseconds(-1));
}

TEST(ConnectCostsTest, SavesAndLoadsAndIgnoresAnUnreadableFile) {
  testing::TempDir dir;
  std::string file = dir.path() + "/state/kaja/connect-costs.json";
  ConnectCosts times;
  times.record("a", milliseconds(123));
  ASSERT_TRUE(times.save(file));
  struct stat info {};
  ASSERT_EQ(::stat(file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  EXPECT_EQ(ConnectCosts::load(file).last("a"), milliseconds(123));

  dir.write("broken.json", "{\"a\": \"fast\", \"b\": -4, \"c\": 7");
  EXPECT_EQ(ConnectCosts::load(dir.path() + "/broken.json").last("c"), milliseconds(-1));
  dir.write("partly.json", "{\"a\": \"fast\", \"b\": -4, \"c\": 7}");
  ConnectCosts partly = ConnectCosts::load(dir.path() + "/partly.json");
  EXPECT_EQ(partly.last("a"), milliseconds(-1));
  EXPECT_EQ(partly.last("b"), milliseconds(-1));
  EXPECT_EQ(partly.last("c"), milliseconds(7));
  EXPECT_EQ(ConnectCosts::load(dir.path() + "/missing.json").last("a"), milliseconds(-1));
}

}  // namespace
}  // namespace kaja::core
