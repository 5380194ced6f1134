// K16 on real temp dirs.
#include "core/policy/backup.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "tests/support/temp_dir.h"

namespace kaja::core::policy {
namespace {

// A checked path with one landing, the way FolderGuard reports a plain path.
CheckedPath checkedPath(const std::string& argument, const std::string& given,
                        const std::string& resolved, const GuardedFolder* folder) {
  return CheckedPath{argument, given, resolved, folder, {{resolved, folder, folder->backup}}};
}

using kaja::testing::readFile;
using ::testing::HasSubstr;
namespace fs = std::filesystem;
using Time = std::chrono::system_clock::time_point;

// 2026-11-29T19:30:00.123Z, stepping by `step` on every call.
Clock steppingClock(std::chrono::milliseconds step) {
  auto now = std::make_shared<Time>(
      std::chrono::sys_days{std::chrono::year{2026} / std::chrono::November / 29} +
      std::chrono::hours{19} + std::chrono::minutes{30} + std::chrono::milliseconds{123});
  return [now, step] {
    Time current = *now;
    *now += step;
    return current;
  };
}

class BackupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::canonical(dir_.path()).string();
    file_ = dir_.write("hypr/hypr.conf", "version 1\n");
    file_ = fs::canonical(file_).string();
    backups_ = root_ + "/data/backups";
  }
  kaja::testing::TempDir dir_;
  std::string root_, file_, backups_;
};

TEST_F(BackupTest, StampsAreUtcMillisecondsAndStrict) {
  Time time = std::chrono::sys_days{std::chrono::year{2026} / 11 / 29} + std::chrono::hours{19} +
              std::chrono::minutes{30} + std::chrono::milliseconds{123};
  EXPECT_EQ(formatBackupStamp(time), "20261129T193000.123Z");
  EXPECT_TRUE(isBackupStamp("20261129T193000.123Z"));
  EXPECT_TRUE(isBackupStamp("20261129T193000.123Z-12"));
  EXPECT_FALSE(isBackupStamp("20261129T193000.123Z-"));
  EXPECT_FALSE(isBackupStamp("../../etc/passwd"));
  EXPECT_FALSE(isBackupStamp("20261129T193000.123Z/x"));
}

TEST_F(BackupTest, CopiesToItsFullPathAndKeepsEveryCopy) {
  BackupStore store(backups_, steppingClock(std::chrono::seconds{1}));
  auto first = store.backupFile(file_);
  ASSERT_TRUE(first) << first.error().describe();
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ(**first, backups_ + file_ + "/20261129T193000.123Z");
  EXPECT_EQ(readFile(**first), "version 1\n");
  struct stat info {};
  ASSERT_EQ(::stat((**first).c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);

  dir_.write("hypr/hypr.conf", "version 2\n");
  auto second = store.backupFile(file_);
  ASSERT_TRUE(second && second->has_value());
  EXPECT_EQ(**second, backups_ + file_ + "/20261129T193001.123Z");
  EXPECT_EQ(readFile(**first), "version 1\n");
  EXPECT_EQ(readFile(**second), "version 2\n");
  // No temporary file is left next to the copies.
  EXPECT_EQ(std::distance(fs::directory_iterator(backups_ + file_), fs::directory_iterator()), 2);
}

TEST_F(BackupTest, SameMillisecondGetsAUniqueName) {
  BackupStore store(backups_, steppingClock(std::chrono::milliseconds{0}));
  std::vector<std::string> copies;
  for (int i = 0; i < 12; ++i) {
    auto copy = store.backupFile(file_);
    ASSERT_TRUE(copy && copy->has_value());
    copies.push_back(fs::path(**copy).filename().string());
  }
  EXPECT_EQ(copies[0], "20261129T193000.123Z");
  EXPECT_EQ(copies[1], "20261129T193000.123Z-1");
  EXPECT_EQ(copies[11], "20261129T193000.123Z-11");
  auto listed = store.listBackups(file_);
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 12u);
  EXPECT_EQ((*listed)[2].stamp, "20261129T193000.123Z-2");  // -2 sorts before -10
  EXPECT_EQ((*listed)[11].stamp, "20261129T193000.123Z-11");
}

TEST_F(BackupTest, MissingFileNeedsNoBackup) {
  BackupStore store(backups_);
  auto copy = store.backupFile(root_ + "/hypr/new.conf");
  ASSERT_TRUE(copy);
  EXPECT_FALSE(copy->has_value());
  EXPECT_FALSE(fs::exists(backups_));
  auto folder = store.backupFile(root_ + "/hypr");  // folders are not copied
  ASSERT_TRUE(folder);
  EXPECT_FALSE(folder->has_value());
}

TEST_F(BackupTest, FailingCopyIsAnErrorSoTheCallDoesNotRun) {
  // Root may write anywhere, so make the backups folder impossible: its parent is a file.
  std::string blocker = dir_.write("blocker", "not a folder");
  BackupStore store(blocker + "/backups");
  auto copy = store.backupFile(file_);
  ASSERT_FALSE(copy);
  EXPECT_EQ(copy.error().code, ErrorCode::kIo);
  EXPECT_THAT(copy.error().message, HasSubstr("mkdir("));
  EXPECT_THAT(copy.error().message, HasSubstr("Not a directory"));

  GuardedFolder folder{"~/hypr", root_ + "/hypr", false, true};
  std::vector<CheckedPath> paths = {checkedPath("path", "~/hypr/hypr.conf", file_, &folder)};
  auto before = store.backupBeforeCall(paths);
  ASSERT_FALSE(before);
  EXPECT_THAT(before.error().message, HasSubstr("so the call did not run"));
  EXPECT_EQ(readFile(file_), "version 1\n");
}

TEST_F(BackupTest, BackupBeforeCallOnlyCopiesFilesInBackupFolders) {
  BackupStore store(backups_, steppingClock(std::chrono::milliseconds{1}));
  std::string other = fs::canonical(dir_.write("notes/n.md", "n")).string();
  GuardedFolder backed{"~/hypr", root_ + "/hypr", false, true};
  GuardedFolder plain{"~/notes", root_ + "/notes", false, false};
  std::vector<CheckedPath> paths = {checkedPath("path", "a", file_, &backed),
                                    checkedPath("paths", "b", other, &plain),
                                    checkedPath("paths", "c", root_ + "/hypr/new.conf", &backed)};
  auto copies = store.backupBeforeCall(paths);
  ASSERT_TRUE(copies) << copies.error().describe();
  ASSERT_EQ(copies->size(), 1u);
  EXPECT_THAT((*copies)[0], HasSubstr(file_ + "/"));
  EXPECT_FALSE(fs::exists(backups_ + other));
}

TEST_F(BackupTest, RestoreBacksUpTheFileItReplaces) {
  BackupStore store(backups_, steppingClock(std::chrono::seconds{1}));
  ASSERT_TRUE(store.backupFile(file_));
  dir_.write("hypr/hypr.conf", "broken\n");
  ::chmod(file_.c_str(), 0640);
  auto restored = store.restoreBackup(file_, "20261129T193000.123Z");
  ASSERT_TRUE(restored) << restored.error().describe();
  EXPECT_EQ(readFile(file_), "version 1\n");
  struct stat info {};
  ASSERT_EQ(::stat(file_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0640u);
  auto listed = store.listBackups(file_);
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ(readFile((*listed)[1].storedPath), "broken\n");  // the restore can be undone
  EXPECT_EQ((*listed)[1].size, 7u);
}

TEST_F(BackupTest, RestoreRefusesUnknownAndMalformedStamps) {
  BackupStore store(backups_);
  auto unknown = store.restoreBackup(file_, "20200101T000000.000Z");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
  auto malformed = store.restoreBackup(file_, "../../../etc/shadow");
  ASSERT_FALSE(malformed);
  EXPECT_EQ(malformed.error().code, ErrorCode::kUsage);
  EXPECT_EQ(readFile(file_), "version 1\n");
  auto none = store.listBackups(file_);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST_F(BackupTest, RestoreRecreatesADeletedFile) {
  BackupStore store(backups_, steppingClock(std::chrono::seconds{1}));
  ASSERT_TRUE(store.backupFile(file_));
  fs::remove(file_);
  ASSERT_TRUE(store.restoreBackup(file_, "20261129T193000.123Z"));
  EXPECT_EQ(readFile(file_), "version 1\n");
}

}  // namespace
}  // namespace kaja::core::policy
