#include "core/process/cpu_time.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "core/process/child_process.h"
#include "tests/core/mcp/test_servers.h"

namespace kaja::core {
namespace {

using namespace std::chrono_literals;

TEST(CpuTimeTest, CountsEveryProcessInTheGroupIncludingGrandchildren) {
  // The shell starts a busy grandchild and waits; the CPU is the grandchild's, the way
  // bunx's is node's.
  auto child = ChildProcess::start(testing::minimalPlan(
      {"/bin/sh", "-c",
       "/bin/sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo done; read x'"}));
  ASSERT_TRUE(child) << child.error().message;
  UniqueFd out = (*child)->takeStdout();
  char buffer[8];
  ASSERT_GT(::read(out.get(), buffer, sizeof buffer), 0);  // the loop has finished
  auto cpu = processGroupCpuTime((*child)->pid());
  ASSERT_TRUE(cpu.has_value());
  EXPECT_GE(cpu->count(), 50) << "a 300,000-step shell loop takes well over 50 ms of CPU";
  (*child)->terminate(1s);
  EXPECT_FALSE(processGroupCpuTime((*child)->pid()).has_value());
}

TEST(CpuTimeTest, NoSuchGroupIsNothing) {
  EXPECT_FALSE(processGroupCpuTime(999999999).has_value());
}

}  // namespace
}  // namespace kaja::core
