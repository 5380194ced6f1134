// A server under kaja's guardian: exit statuses and start failures come through unchanged,
// and what the server leaves behind dies with it. useGuardian is process-wide, so each case
// runs in a death-test child of its own; the guardian is the kaja program.
#include "core/process/guardian.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <string>

#include "core/process/child_process.h"
#include "tests/core/mcp/test_servers.h"
#include "tests/support/build_paths.h"

namespace kaja::core {
namespace {

using namespace std::chrono_literals;
using kaja::testing::isRunning;
using kaja::testing::minimalPlan;

class GuardianTest : public ::testing::Test {
 protected:
  GuardianTest() { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
  static void guard() { useGuardian(std::string(kaja::test::binDir()) + "/kaja"); }
};

TEST_F(GuardianTest, ExitCodesAndSignalsComeThroughUnchanged) {
  EXPECT_EXIT(
      {
        guard();
        auto exits = ChildProcess::start(minimalPlan({"/bin/sh", "-c", "exit 3"}));
        auto killed = ChildProcess::start(minimalPlan({"/bin/sh", "-c", "kill -KILL $$"}));
        if (!exits || !killed) ::_exit(10);
        const auto code = (*exits)->terminate(1s);
        const auto signal = (*killed)->terminate(1s);
        if (code.signaled || code.code != 3) ::_exit(11);
        if (!signal.signaled || signal.code != SIGKILL) ::_exit(12);
        ::_exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(GuardianTest, AMissingProgramIsStillASpawnErrorNamingIt) {
  EXPECT_EXIT(
      {
        guard();
        auto child = ChildProcess::start(minimalPlan({"/nonexistent/kaja-server"}));
        if (child) ::_exit(10);
        ::_exit(child.error().message ==
                        "execve(/nonexistent/kaja-server): No such file or directory"
                    ? 0
                    : 11);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(GuardianTest, AMissingGuardianIsASpawnErrorNamingTheGuardian) {
  EXPECT_EXIT(
      {
        useGuardian("/nonexistent/kaja");
        auto child = ChildProcess::start(minimalPlan({"/bin/true"}));
        if (child) ::_exit(10);
        ::_exit(child.error().message == "execve(/nonexistent/kaja): No such file or directory"
                    ? 0
                    : 11);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(GuardianTest, ADaemonDiesWhenItsServerExits) {
  EXPECT_EXIT(
      {
        guard();
        // The daemon is double-forked and ignores SIGTERM; the server exits on its own.
        auto child = ChildProcess::start(minimalPlan(
            {"/bin/sh", "-c",
             "/bin/sh -c 'trap \"\" TERM; setsid /bin/sleep 60 >/dev/null 2>&1 & echo $!'; "
             "read line"}));
        if (!child) ::_exit(10);
        UniqueFd out = (*child)->takeStdout();
        std::string line;
        char c = 0;
        while (::read(out.get(), &c, 1) == 1 && c != '\n') line += c;
        const pid_t daemon = std::stoi(line);
        if (!isRunning(daemon)) ::_exit(11);
        (*child)->takeStdin().reset();  // the server reads EOF and exits
        if (!(*child)->waitFor(5s)) ::_exit(12);
        ::_exit(kaja::testing::eventually([&] { return !isRunning(daemon); }, 2s) ? 0 : 13);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(GuardianTest, TheProgramRunsInTheGuardiansGroupWithTheRightEnvironment) {
  EXPECT_EXIT(
      {
        guard();
        LaunchPlan plan = minimalPlan({"/bin/sh", "-c", "echo $KAJA_ONLY $(ps -o pgid= -p $$)"});
        plan.env.push_back({"KAJA_ONLY", "this", false});
        auto child = ChildProcess::start(plan);
        if (!child) ::_exit(10);
        UniqueFd out = (*child)->takeStdout();
        std::string text;
        char buffer[256];
        ssize_t n = 0;
        while ((n = ::read(out.get(), buffer, sizeof buffer)) > 0) text.append(buffer, n);
        const std::string expected = "this " + std::to_string((*child)->pid()) + "\n";
        ::_exit(text == expected ? 0 : 11);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace kaja::core
