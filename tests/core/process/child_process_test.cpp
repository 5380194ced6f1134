#include "core/process/child_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "tests/core/mcp/test_servers.h"

namespace kaja::core {
namespace {

using namespace std::chrono_literals;
using kaja::testing::isRunning;
using kaja::testing::minimalPlan;

std::string readAll(UniqueFd fd) {
  std::string out;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

TEST(ChildProcessTest, PassesExactlyThePlannedEnvironment) {
  LaunchPlan plan;
  plan.argv = {"/usr/bin/env"};
  plan.env = {{"KAJA_ONLY", "this", false}};
  auto child = ChildProcess::start(plan);
  ASSERT_TRUE(child) << child.error().message;
  EXPECT_EQ(readAll((*child)->takeStdout()), "KAJA_ONLY=this\n");
  const auto status = (*child)->terminate(1s);
  EXPECT_FALSE(status.signaled);
  EXPECT_EQ(status.code, 0);
}

TEST(ChildProcessTest, NicenessLowersTheChildsPriorityButNotOurs) {
  errno = 0;
  const int ours = ::getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  if (ours > 14) GTEST_SKIP() << "this test already runs at niceness " << ours;
  LaunchPlan plan = minimalPlan({"/usr/bin/nice"});  // prints its own niceness
  plan.niceness = 5;
  auto child = ChildProcess::start(plan);
  ASSERT_TRUE(child) << child.error().message;
  EXPECT_EQ(readAll((*child)->takeStdout()), std::to_string(ours + 5) + "\n");
  (*child)->terminate(1s);
  EXPECT_EQ(::getpriority(PRIO_PROCESS, 0), ours);

  auto plain = ChildProcess::start(minimalPlan({"/usr/bin/nice"}));
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(readAll((*plain)->takeStdout()), std::to_string(ours) + "\n");
}

TEST(ChildProcessTest, MissingExecutableIsASpawnErrorNamingItAndErrno) {
  auto child = ChildProcess::start(minimalPlan({"/nonexistent/kaja-server"}));
  ASSERT_FALSE(child);
  EXPECT_EQ(child.error().code, ErrorCode::kSpawn);
  EXPECT_EQ(child.error().message, "execve(/nonexistent/kaja-server): No such file or directory");
}

TEST(ChildProcessTest, RelativeProgramIsRefused) {
  auto child = ChildProcess::start(minimalPlan({"env"}));
  ASSERT_FALSE(child);
  EXPECT_EQ(child.error().code, ErrorCode::kSpawn);
}

TEST(ChildProcessTest, RunsInItsOwnProcessGroup) {
  auto child = ChildProcess::start(minimalPlan({"/bin/sleep", "30"}));
  ASSERT_TRUE(child);
  (*child)->setGracePeriod(50ms);
  const pid_t pid = (*child)->pid();
  EXPECT_EQ(::getpgid(pid), pid);
  EXPECT_NE(::getpgid(pid), ::getpgrp());
}

TEST(ChildProcessTest, ChildInheritsOnlyStdioEvenFromNonCloexecFds) {
  // A descriptor someone opened without O_CLOEXEC must still not reach the child.
  const int leaky = ::dup(STDERR_FILENO);
  ASSERT_GE(leaky, 3);
  auto child = ChildProcess::start(minimalPlan({"/bin/ls", "/proc/self/fd"}));
  ::close(leaky);
  ASSERT_TRUE(child);
  // ls itself holds one descriptor (3) for the directory it lists.
  EXPECT_EQ(readAll((*child)->takeStdout()), "0\n1\n2\n3\n");
}

TEST(ChildProcessTest, ParentEndsAreCloseOnExec) {
  auto child = ChildProcess::start(minimalPlan({"/bin/cat"}));
  ASSERT_TRUE(child);
  UniqueFd in = (*child)->takeStdin();
  UniqueFd out = (*child)->takeStdout();
  UniqueFd err = (*child)->takeStderr();
  for (const int fd : {in.get(), out.get(), err.get(), (*child)->pidfd()}) {
    ASSERT_GE(fd, 0);
    EXPECT_TRUE(::fcntl(fd, F_GETFD) & FD_CLOEXEC) << "fd " << fd;
  }
}

TEST(ChildProcessTest, WorkingDirectoryIsApplied) {
  LaunchPlan plan = minimalPlan({"/bin/pwd"});
  plan.workingDir = "/usr";
  auto child = ChildProcess::start(plan);
  ASSERT_TRUE(child);
  EXPECT_EQ(readAll((*child)->takeStdout()), "/usr\n");
}

TEST(ChildProcessTest, ExitStatusIsReportedWithoutReaping) {
  auto child = ChildProcess::start(minimalPlan({"/bin/sh", "-c", "exit 3"}));
  ASSERT_TRUE(child);
  const auto status = (*child)->waitFor(5s);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->describe(), "exited with status 3");
  // Not reaped yet: the zombie keeps the group id ours until terminate().
  EXPECT_EQ(kaja::testing::processState((*child)->pid()), 'Z');
  EXPECT_EQ((*child)->terminate(0ms).code, 3);
}

TEST(ChildProcessTest, DestructorEndsTheWholeGroupAndReaps) {
  pid_t leader = 0;
  pid_t helper = 0;
  {
    auto child =
        ChildProcess::start(minimalPlan({"/bin/sh", "-c", "sleep 60 & echo $!; exec sleep 60"}));
    ASSERT_TRUE(child);
    (*child)->setGracePeriod(100ms);
    leader = (*child)->pid();
    UniqueFd out = (*child)->takeStdout();
    std::string line;
    char c = 0;
    while (::read(out.get(), &c, 1) == 1 && c != '\n') line += c;
    helper = std::stoi(line);
    ASSERT_TRUE(isRunning(helper));
  }
  EXPECT_EQ(::waitpid(leader, nullptr, WNOHANG), -1);  // already reaped: ECHILD
  EXPECT_TRUE(kaja::testing::eventually([&] { return !isRunning(helper); }));
}

TEST(ChildProcessTest, TerminateEscalatesToSigkillWhenSigtermIsIgnored) {
  auto child = ChildProcess::start(
      minimalPlan({"/bin/sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"}));
  ASSERT_TRUE(child);
  UniqueFd out = (*child)->takeStdout();
  char c = 0;
  ASSERT_EQ(::read(out.get(), &c, 1), 1);  // the trap is in place
  const auto start = std::chrono::steady_clock::now();
  const auto status = (*child)->terminate(100ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_TRUE(status.signaled);
  EXPECT_EQ(status.code, SIGKILL);
  EXPECT_EQ(status.describe().rfind("was killed by signal 9", 0), 0u) << status.describe();
}

TEST(ChildProcessTest, DestructorEndsASetsidGrandchildThatLeftTheGroup) {
  pid_t escaped = 0;
  {
    // The grandchild ignores SIGTERM (the trap is inherited) and is in a session of its own,
    // so neither the group kill nor its parent's death ends it.
    auto child = ChildProcess::start(minimalPlan(
        {"/bin/sh", "-c", "trap '' TERM; setsid /bin/sleep 60 & echo $!; exec sleep 60"}));
    ASSERT_TRUE(child);
    (*child)->setGracePeriod(50ms);
    UniqueFd out = (*child)->takeStdout();
    std::string line;
    char c = 0;
    while (::read(out.get(), &c, 1) == 1 && c != '\n') line += c;
    escaped = std::stoi(line);
    ASSERT_TRUE(isRunning(escaped));
  }
  EXPECT_TRUE(kaja::testing::eventually([&] { return !isRunning(escaped); }, 2s));
}

TEST(ChildProcessTest, ChildOutlivesTheThreadThatStartedIt) {
  // The parent-death signal follows the thread that forked; children are forked on a
  // thread that lives as long as the process, so a caller's thread may end.
  std::unique_ptr<ChildProcess> child;
  std::thread([&] {
    auto started = ChildProcess::start(minimalPlan({"/bin/sleep", "60"}));
    if (started) child = std::move(*started);
  }).join();
  ASSERT_TRUE(child);
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(child->exitStatus().has_value()) << child->exitStatus()->describe();
  child->setGracePeriod(50ms);
}

// Where the death-test child below leaves its child's pid: named after the test process,
// which is the death-test child's parent.
std::string pidFileFor(pid_t testProcess) {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp != nullptr ? tmp : "/tmp") + "/kaja-pdeathsig-" +
         std::to_string(testProcess);
}

TEST(ChildProcessTest, ChildDiesWhenItsOwnerIsKilled) {
  // The owner is killed with SIGKILL, as kaja may be, with no chance to end its child; the
  // kernel kills the child then.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string pidFile = pidFileFor(::getpid());
  EXPECT_EXIT(
      {
        auto child = ChildProcess::start(minimalPlan({"/bin/sleep", "60"}));
        if (!child) ::_exit(1);
        std::ofstream(pidFileFor(::getppid())) << (*child)->pid();
        ::raise(SIGKILL);
      },
      ::testing::KilledBySignal(SIGKILL), "");
  std::ifstream in(pidFile);
  pid_t orphan = 0;
  in >> orphan;
  std::remove(pidFile.c_str());
  ASSERT_GT(orphan, 0);
  EXPECT_TRUE(kaja::testing::eventually([&] { return !isRunning(orphan); }, 2s));
}

TEST(ChildProcessTest, ChildStartsWithDefaultSignalsAndAnEmptyMask) {
  // kaja ignores SIGPIPE and handles SIGINT; a server must start with neither.
  auto child = ChildProcess::start(
      minimalPlan({"/bin/sh", "-c", "grep -E '^Sig(Blk|Ign):' /proc/self/status"}));
  ASSERT_TRUE(child);
  EXPECT_EQ(readAll((*child)->takeStdout()),
            "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

TEST(ChildProcessTest, MissingWorkingDirectoryIsASpawnErrorNamingChdir) {
  LaunchPlan plan = minimalPlan({"/bin/true"});
  plan.workingDir = "/nonexistent-kaja-folder";
  auto child = ChildProcess::start(plan);
  ASSERT_FALSE(child);
  EXPECT_EQ(child.error().code, ErrorCode::kSpawn);
  EXPECT_EQ(child.error().message, "chdir(/nonexistent-kaja-folder): No such file or directory");
}

}  // namespace
}  // namespace kaja::core
