// The moment a sync or a rollback switches copies: the caller's hook (which saves a new pin)
// runs while the old copy is still live, and a hook that fails leaves everything as it was.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "marketplace/sync/sync.h"
#include "marketplace/sync/verify.h"
#include "tests/support/archive_builder.h"
#include "tests/support/temp_dir.h"

namespace kaja::marketplace::sync {
namespace {

namespace fs = std::filesystem;

class SyncSwitchTest : public ::testing::Test {
 protected:
  SyncSwitchTest() {
    paths_.configDir = root_.path() + "/config";
    paths_.dataDir = root_.path() + "/data";
    paths_.secretsFile = paths_.configDir + "/secrets.toml";
    entry_.name = "team";
    entry_.source = root_.path() + "/team.tar.gz";
  }

  // Writes an archive of `count` abilities as the source and returns its SHA-256.
  std::string publish(int count) {
    std::string bytes = kaja::testing::buildArchive(kaja::testing::marketplaceEntries(count));
    root_.write("team.tar.gz", bytes);
    return sha256Hex(bytes);
  }

  [[nodiscard]] std::string liveSha() const {
    auto live = marketplaceState(paths_, "team").live;
    return live ? live->sha256 : "";
  }

  kaja::testing::TempDir root_;
  core::Paths paths_;
  MarketplaceEntry entry_;
};

TEST_F(SyncSwitchTest, TheHookRunsAfterEveryCheckWhileTheOldCopyIsStillLive) {
  entry_.sha256 = publish(2);
  ASSERT_TRUE(syncMarketplace(paths_, entry_).has_value());
  const std::string v1 = liveSha();
  ASSERT_EQ(v1, *entry_.sha256);

  SyncOptions options;
  options.sha256 = publish(3);
  std::string liveDuringHook;
  int calls = 0;
  options.beforeSwitch = [&]() -> core::Result<void> {
    ++calls;
    liveDuringHook = liveSha();
    return {};
  };
  auto report = syncMarketplace(paths_, entry_, options);
  ASSERT_TRUE(report.has_value()) << report.error().message;
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(liveDuringHook, v1);
  EXPECT_EQ(liveSha(), *options.sha256);

  // Already live: the hook still runs (a pin given for the copy that is there is saved).
  calls = 0;
  auto same = syncMarketplace(paths_, entry_, options);
  ASSERT_TRUE(same.has_value());
  EXPECT_TRUE(same->unchanged);
  EXPECT_EQ(calls, 1);
}

TEST_F(SyncSwitchTest, AHookThatFailsLeavesTheOldCopyLive) {
  entry_.sha256 = publish(2);
  ASSERT_TRUE(syncMarketplace(paths_, entry_).has_value());
  const std::string v1 = liveSha();

  SyncOptions options;
  options.sha256 = publish(4);
  options.beforeSwitch = []() -> core::Result<void> {
    return core::fail(core::ErrorCode::kIo, "cannot write marketplaces.toml: disk full");
  };
  auto report = syncMarketplace(paths_, entry_, options);
  ASSERT_FALSE(report.has_value());
  EXPECT_NE(report.error().message.find("failed at switch"), std::string::npos)
      << report.error().message;
  EXPECT_NE(report.error().message.find("disk full"), std::string::npos);
  EXPECT_EQ(liveSha(), v1);
  EXPECT_FALSE(marketplaceState(paths_, "team").previous.has_value());
}

TEST_F(SyncSwitchTest, TheHookIsNotCalledForAnArchiveThatFailsItsChecks) {
  entry_.sha256 = publish(2);
  ASSERT_TRUE(syncMarketplace(paths_, entry_).has_value());
  publish(3);  // the pin no longer matches the source
  SyncOptions options;
  bool called = false;
  options.beforeSwitch = [&]() -> core::Result<void> {
    called = true;
    return {};
  };
  auto report = syncMarketplace(paths_, entry_, options);
  ASSERT_FALSE(report.has_value());
  EXPECT_NE(report.error().message.find("failed at verify"), std::string::npos);
  EXPECT_FALSE(called) << "a pin must not be saved for an archive that failed its checks";
}

TEST_F(SyncSwitchTest, RollbackShowsTheHookTheCopyAboutToGoLiveAndStopsWhenItFails) {
  entry_.sha256 = publish(2);
  ASSERT_TRUE(syncMarketplace(paths_, entry_).has_value());
  const std::string v1 = liveSha();
  SyncOptions options;
  options.sha256 = publish(3);
  ASSERT_TRUE(syncMarketplace(paths_, entry_, options).has_value());
  const std::string v2 = liveSha();

  auto refused = rollbackMarketplace(paths_, "team", [](const Generation&) -> core::Result<void> {
    return core::fail(core::ErrorCode::kIo, "read-only file system");
  });
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(liveSha(), v2);

  std::string seen;
  auto back =
      rollbackMarketplace(paths_, "team", [&](const Generation& next) -> core::Result<void> {
        seen = next.sha256;
        return {};
      });
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(seen, v1);
  EXPECT_EQ(liveSha(), v1);
  EXPECT_EQ(back->previous->sha256, v2);
}

TEST_F(SyncSwitchTest, TheBackgroundSweepHoldsNoLockOfTheSync) {
  // Three syncs: the third leaves the first copy to the sweeper, which is given a lot to
  // unlink so that it is still at work when the sync returns.
  for (int count : {400, 401, 402}) {
    SyncOptions options;
    options.sha256 = publish(count);
    ASSERT_TRUE(syncMarketplace(paths_, entry_, options).has_value()) << count;
  }
  const std::string dir = marketplaceDir(paths_, "team");
  int fd = ::open((dir + "/.lock").c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0)
      << "the sweeper kept the sync's lock, so the next sync would wait for it";
  ::close(fd);
  // And it does sweep: only the two copies a link names are left.
  auto leftovers = [&] {
    int count = 0;
    for (const auto& item : fs::directory_iterator(dir)) {
      count += item.path().filename().string().starts_with("trash-") ? 1 : 0;
    }
    return count;
  };
  for (int i = 0; i < 200 && leftovers() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(leftovers(), 0);
  EXPECT_FALSE(fs::exists(dir + "/gen-1"));
  EXPECT_TRUE(marketplaceState(paths_, "team").previous.has_value());
}

}  // namespace
}  // namespace kaja::marketplace::sync
