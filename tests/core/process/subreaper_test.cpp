// kaja as a child subreaper: orphans a server leaves are found, ended and reaped, and the
// owned children's exit statuses are never stolen. Making a process a subreaper cannot be
// undone for its children, so each case runs in a death-test child of its own.
#include "core/process/subreaper.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <string>

#include "core/process/child_process.h"
#include "core/process/process_tree.h"
#include "tests/core/mcp/test_servers.h"

namespace kaja::core {
namespace {

using namespace std::chrono_literals;
using kaja::testing::isRunning;
using kaja::testing::minimalPlan;

std::string readLine(int fd) {
  std::string line;
  char c = 0;
  while (::read(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

// Starts a shell that leaves a double-forked daemon (a grandchild whose parent exited, so
// it is reparented at once) and prints the daemon's pid; the shell itself stays.
std::unique_ptr<ChildProcess> startWithDaemon(pid_t& daemon) {
  auto child = ChildProcess::start(
      minimalPlan({"/bin/sh", "-c",
                   "/bin/sh -c 'setsid /bin/sleep 60 >/dev/null 2>&1 & echo $!'; exec sleep 60"}));
  if (!child) return nullptr;
  UniqueFd out = (*child)->takeStdout();
  daemon = std::stoi(readLine(out.get()));
  return std::move(*child);
}

class SubreaperTest : public ::testing::Test {
 protected:
  SubreaperTest() { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(SubreaperTest, TheLastChildsEndEndsTheOrphansItLeft) {
  EXPECT_EXIT(
      {
        if (!Subreaper::instance().enable()) ::_exit(10);
        pid_t daemon = 0;
        auto child = startWithDaemon(daemon);
        if (!child || daemon <= 0) ::_exit(11);
        // Reparented to us, not to init.
        if (!kaja::testing::eventually([&] { return parentOf(daemon) == ::getpid(); })) {
          ::_exit(12);
        }
        child->setGracePeriod(50ms);
        child.reset();
        // Reaped by the subreaper: no such process any more, not even a zombie.
        ::_exit(::kill(daemon, 0) == -1 && errno == ESRCH ? 0 : 13);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(SubreaperTest, OrphansAreLeftAloneWhileAnotherChildLives) {
  EXPECT_EXIT(
      {
        if (!Subreaper::instance().enable()) ::_exit(10);
        auto keeper = ChildProcess::start(minimalPlan({"/bin/sleep", "60"}));
        pid_t daemon = 0;
        auto child = startWithDaemon(daemon);
        if (!keeper || !child) ::_exit(11);
        child->setGracePeriod(50ms);
        child.reset();
        if (!isRunning(daemon)) ::_exit(12);
        // endOrphans ends it without touching the owned child.
        if (Subreaper::instance().endOrphans(2s) != 1) ::_exit(13);
        if (isRunning(daemon) || (*keeper)->exitStatus()) ::_exit(14);
        ::_exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(SubreaperTest, EndingOrphansNeverStealsAnOwnedChildsStatus) {
  EXPECT_EXIT(
      {
        if (!Subreaper::instance().enable()) ::_exit(10);
        pid_t daemon = 0;
        auto orphanMaker = startWithDaemon(daemon);
        auto child = ChildProcess::start(minimalPlan({"/bin/sh", "-c", "exit 7"}));
        if (!orphanMaker || !child) ::_exit(11);
        // The owned child exits while orphans are ended; its status stays its owner's.
        kaja::testing::eventually([&] { return (*child)->exitStatus().has_value(); });
        Subreaper::instance().endOrphans(2s);
        const auto status = (*child)->terminate(100ms);
        ::_exit(!status.signaled && status.code == 7 ? 0 : 12);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(SubreaperTest, EndEverythingEndsOwnedTreesAndRefusesNewChildren) {
  EXPECT_EXIT(
      {
        if (!Subreaper::instance().enable()) ::_exit(10);
        auto stubborn = ChildProcess::start(minimalPlan(
            {"/bin/sh", "-c",
             "trap '' TERM; setsid /bin/sleep 60 & echo $!; while :; do sleep 1; done"}));
        if (!stubborn) ::_exit(11);
        UniqueFd out = (*stubborn)->takeStdout();
        const pid_t escaped = std::stoi(readLine(out.get()));
        Subreaper::instance().endEverything(100ms);
        if (!(*stubborn)->exitStatus()) ::_exit(12);
        if (isRunning(escaped)) ::_exit(13);
        if (ChildProcess::start(minimalPlan({"/bin/true"}))) ::_exit(14);
        ::_exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(SubreaperOffTest, EndOrphansDoesNothingUntilEnabled) {
  // This test process has children of its own (the test runner's): none may be touched.
  if (Subreaper::instance().enabled()) GTEST_SKIP() << "enabled in this process";
  EXPECT_EQ(Subreaper::instance().endOrphans(100ms), 0);
}

}  // namespace
}  // namespace kaja::core
