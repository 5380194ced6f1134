// A temporary folder kaja hands to servers goes with whatever they put in it: trees deeper
// than PATH_MAX, folders without permissions, symlinks out (never followed).
#include "core/process/temp_folder.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/temp_dir.h"

namespace kaja::core {
namespace {

namespace fs = std::filesystem;

class TempFolderTest : public ::testing::Test {
 protected:
  TempFolderTest() {
    const char* old = std::getenv("TMPDIR");
    if (old != nullptr) saved_ = old;
    ::setenv("TMPDIR", tmp_.path().c_str(), 1);
  }
  ~TempFolderTest() override {
    if (saved_.empty()) {
      ::unsetenv("TMPDIR");
    } else {
      ::setenv("TMPDIR", saved_.c_str(), 1);
    }
  }
  size_t entries() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(tmp_.path()), {}));
  }

  testing::TempDir tmp_;
  testing::TempDir outside_;
  std::string saved_;
};

TEST_F(TempFolderTest, IsMadeUnderTmpdirPrivateAndRemovedWithItsContents) {
  std::string path;
  {
    auto folder = TempFolder::create("kaja-doctor-");
    ASSERT_TRUE(folder) << folder.error().message;
    path = (*folder)->path();
    EXPECT_EQ(path.rfind(tmp_.path() + "/kaja-doctor-", 0), 0u) << path;
    struct stat info {};
    ASSERT_EQ(::stat(path.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0700u);
    fs::create_directories(path + "/a/b");
    std::ofstream(path + "/a/b/file") << "x";
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(entries(), 0u);
}

TEST_F(TempFolderTest, SymlinksOutAreRemovedButNotFollowed) {
  const std::string kept = outside_.write("keep/file.txt", "mine");
  {
    auto folder = TempFolder::create("kaja-doctor-");
    ASSERT_TRUE(folder);
    const std::string path = (*folder)->path();
    fs::create_directory_symlink(outside_.path() + "/keep", path + "/to-folder");
    fs::create_symlink(kept, path + "/to-file");
    fs::create_directories(path + "/deeper");
    fs::create_directory_symlink(outside_.path(), path + "/deeper/to-root");
  }
  EXPECT_EQ(entries(), 0u);
  EXPECT_EQ(testing::readFile(kept), "mine");
}

TEST_F(TempFolderTest, FoldersWithoutPermissionsAreRemoved) {
  {
    auto folder = TempFolder::create("kaja-doctor-");
    ASSERT_TRUE(folder);
    const std::string path = (*folder)->path();
    fs::create_directories(path + "/locked/inner");
    std::ofstream(path + "/locked/inner/file") << "x";
    ::chmod((path + "/locked/inner").c_str(), 0);
    ::chmod((path + "/locked").c_str(), 0500);
    ::chmod(path.c_str(), 0);
  }
  EXPECT_EQ(entries(), 0u);
}

TEST_F(TempFolderTest, TreesDeeperThanPathMaxAreRemoved) {
  std::string path;
  {
    auto folder = TempFolder::create("kaja-doctor-");
    ASSERT_TRUE(folder);
    path = (*folder)->path();
    // 200 levels of 100-character names: about 20,000 characters, five times PATH_MAX.
    const std::string name(100, 'd');
    int dir = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(dir, 0);
    for (int level = 0; level < 200; ++level) {
      ASSERT_EQ(::mkdirat(dir, name.c_str(), 0700), 0);
      const int next = ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      ::close(dir);
      ASSERT_GE(next, 0);
      dir = next;
    }
    const int file = ::openat(dir, "bottom", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    ::close(file);
    ::close(dir);
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(entries(), 0u);
}

TEST_F(TempFolderTest, RemoveAllRemovesEveryLiveFolder) {
  auto first = TempFolder::create("kaja-doctor-");
  auto second = TempFolder::create("kaja-doctor-");
  ASSERT_TRUE(first && second);
  std::ofstream((*first)->path() + "/file") << "x";
  removeAllTempFolders();
  EXPECT_EQ(entries(), 0u);
}

TEST_F(TempFolderTest, RemoveTreeRemovesASymlinkItselfOnly) {
  const std::string link = tmp_.path() + "/link";
  fs::create_directory_symlink(outside_.path(), link);
  outside_.write("stays.txt", "x");
  EXPECT_TRUE(removeTree(link));
  EXPECT_FALSE(fs::exists(fs::symlink_status(link)));
  EXPECT_TRUE(fs::exists(outside_.path() + "/stays.txt"));
}

// Sets `path`'s modification time an hour back, as a folder a killed run left long ago.
void age(const std::string& path) {
  const timeval old[2] = {{::time(nullptr) - 3600, 0}, {::time(nullptr) - 3600, 0}};
  ASSERT_EQ(::utimes(path.c_str(), old), 0);
}

TEST_F(TempFolderTest, StaleFoldersOfKilledRunsAreRemovedAndLiveOnesKept) {
  // Left by a killed run: nobody holds its lock.
  const std::string stale = tmp_.path() + "/kaja-doctor-stale1";
  fs::create_directories(stale + "/inside");
  std::ofstream(stale + "/inside/file") << "x";
  age(stale);
  // In use by a live run, however old.
  auto live = TempFolder::create("kaja-doctor-");
  ASSERT_TRUE(live);
  age((*live)->path());
  // Just made, its lock perhaps not taken yet.
  const std::string young = tmp_.path() + "/kaja-doctor-young1";
  fs::create_directories(young);
  // Not a folder of kaja's, and a symlink that must not be followed.
  const std::string other = tmp_.path() + "/other-folder";
  fs::create_directories(other);
  age(other);
  const std::string link = tmp_.path() + "/kaja-doctor-link1";
  fs::create_directory_symlink(outside_.path(), link);
  outside_.write("kept.txt", "x");

  EXPECT_EQ(removeStaleTempFolders("kaja-doctor-", std::chrono::seconds(60)), 1);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists((*live)->path()));
  EXPECT_TRUE(fs::exists(young));
  EXPECT_TRUE(fs::exists(other));
  EXPECT_TRUE(fs::exists(fs::symlink_status(link)));
  EXPECT_TRUE(fs::exists(outside_.path() + "/kept.txt"));
}

}  // namespace
}  // namespace kaja::core
