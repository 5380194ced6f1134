#include "core/process/fork_exec.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <chrono>

#include "core/process/child_process.h"
#include "tests/core/mcp/test_servers.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace kaja::core {
namespace {

using namespace std::chrono_literals;

// The child runs on a stack kaja maps for it and never returns from its first function, so
// under ASan the guard zones of its frames stayed marked after the stack was unmapped: the
// next mapping the kernel put at that address (the same size fits the hole it left) read as
// a stack buffer overflow on its first use. Only an ASan build can see the marks.
TEST(ForkExecTest, TheChildsStackLeavesNoMarksBehind) {
#if !defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "only an ASan build (tests/sanitize/run asan) marks memory";
#else
  constexpr std::size_t kChildStack = 64UL * 1024;  // fork_exec.cpp's
  for (int round = 0; round < 8; ++round) {
    auto child = ChildProcess::start(kaja::testing::minimalPlan({"/bin/true"}));
    ASSERT_TRUE(child) << child.error().message;
    const auto status = (*child)->waitFor(5s);
    ASSERT_TRUE(status.has_value());
    EXPECT_EQ(status->code, 0);
    void* region =
        ::mmap(nullptr, kChildStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(region, MAP_FAILED);
    EXPECT_EQ(__asan_region_is_poisoned(region, kChildStack), nullptr) << "round " << round;
    ::munmap(region, kChildStack);
  }
#endif
}

}  // namespace
}  // namespace kaja::core
