#include "core/host/start_priority.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

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

// Doctor loads the record when it starts and saves it when it ends; a run that ended in
// between must keep what it measured.
TEST(ConnectCostsTest, ASaveKeepsWhatAnotherRunSavedSinceTheLoad) {
  testing::TempDir dir;
  std::string file = dir.path() + "/connect-costs.json";
  ConnectCosts seed;
  seed.record("shared", milliseconds(5));
  ASSERT_TRUE(seed.save(file));
  ConnectCosts first = ConnectCosts::load(file);
  ConnectCosts second = ConnectCosts::load(file);
  first.record("a", milliseconds(10));
  second.record("b", milliseconds(20));
  ASSERT_TRUE(first.save(file));
  ASSERT_TRUE(second.save(file));
  ConnectCosts both = ConnectCosts::load(file);
  EXPECT_EQ(both.last("a"), milliseconds(10));
  EXPECT_EQ(both.last("b"), milliseconds(20));
  // An entry a run only loaded is not written back over a newer one.
  ConnectCosts stale = ConnectCosts::load(file);
  ConnectCosts fresh = ConnectCosts::load(file);
  fresh.record("a", milliseconds(11));
  ASSERT_TRUE(fresh.save(file));
  stale.record("c", milliseconds(30));
  ASSERT_TRUE(stale.save(file));
  EXPECT_EQ(ConnectCosts::load(file).last("a"), milliseconds(11));
  EXPECT_EQ(ConnectCosts::load(file).last("c"), milliseconds(30));
}

// Two processes doing what doctor does (load, record, save) over and over, at once: with
// no lock around the read, merge and write, one overwrites what the other just saved.
TEST(ConnectCostsTest, TwoProcessesSavingAtOnceLoseNothing) {
  testing::TempDir dir;
  const std::string file = dir.path() + "/kaja/connect-costs.json";
  constexpr int kRounds = 150;
  std::vector<pid_t> children;
  for (int child = 0; child < 2; ++child) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      bool ok = true;
      for (int i = 0; i < kRounds; ++i) {
        ConnectCosts costs = ConnectCosts::load(file);
        costs.record("p" + std::to_string(child) + "-" + std::to_string(i), milliseconds(i));
        ok = ok && costs.save(file).has_value();
      }
      ::_exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a save failed";
  }
  ConnectCosts all = ConnectCosts::load(file);
  int missing = 0;
  for (int child = 0; child < 2; ++child) {
    for (int i = 0; i < kRounds; ++i) {
      if (all.last("p" + std::to_string(child) + "-" + std::to_string(i)) != milliseconds(i))
        ++missing;
    }
  }
  EXPECT_EQ(missing, 0) << "of " << 2 * kRounds << " costs saved by two processes";
}

}  // namespace
}  // namespace kaja::core
