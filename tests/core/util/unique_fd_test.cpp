#include "core/util/unique_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace kaja::core {
namespace {

bool isOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

// A fresh descriptor that the test owns, so closing it cannot hit anything else.
int openDevNull() {
  int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  return fd;
}

TEST(UniqueFdTest, ClosesOnDestruction) {
  int fd = openDevNull();
  {
    UniqueFd owner(fd);
    EXPECT_TRUE(owner.valid());
    EXPECT_EQ(owner.get(), fd);
  }
  EXPECT_FALSE(isOpen(fd));
}

TEST(UniqueFdTest, MoveHandsOverOwnershipOnce) {
  int fd = openDevNull();
  UniqueFd first(fd);
  UniqueFd second(std::move(first));
  EXPECT_FALSE(first.valid());  // NOLINT(bugprone-use-after-move): the state after a move
  EXPECT_EQ(second.get(), fd);
  UniqueFd third;
  third = std::move(second);
  EXPECT_EQ(third.get(), fd);
  EXPECT_TRUE(isOpen(fd));
  third.reset();
  EXPECT_FALSE(isOpen(fd));
}

TEST(UniqueFdTest, MoveAssignmentClosesWhatWasHeld) {
  int old = openDevNull();
  int fresh = openDevNull();
  UniqueFd target(old);
  target = UniqueFd(fresh);
  EXPECT_FALSE(isOpen(old));
  EXPECT_TRUE(isOpen(fresh));
}

TEST(UniqueFdTest, ReleaseLeavesTheDescriptorOpen) {
  int fd = openDevNull();
  {
    UniqueFd owner(fd);
    EXPECT_EQ(owner.release(), fd);
    EXPECT_FALSE(owner.valid());
  }
  EXPECT_TRUE(isOpen(fd));
  ::close(fd);
}

TEST(UniqueFdTest, ResetToTheSameDescriptorKeepsItOpen) {
  int fd = openDevNull();
  UniqueFd owner(fd);
  owner.reset(fd);
  EXPECT_TRUE(isOpen(fd));
  EXPECT_EQ(owner.get(), fd);
}

}  // namespace
}  // namespace kaja::core
