// CgroupTree and `kaja sandbox enter`: limits on a confined server and the end of
// everything it started, with the real cgroup tree of this machine (v2 or v1).
#include "sandbox/cgroups.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "core/process/child_process.h"
#include "sandbox/confine.h"
#include "tests/sandbox/sandbox_support.h"
#include "tests/support/build_paths.h"

namespace kaja::sandbox {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::SandboxTree;
using testing::shell;

std::string uniqueName(const std::string& what) {
  return "kaja-test-" + what + "-" + std::to_string(::getpid());
}

/// Opens the tree or skips the test, saying why.
#define KAJA_OPEN_TREE(tree, what)                                                             \
  auto opened = CgroupTree::open(uniqueName(what));                                            \
  if (!opened) GTEST_SKIP() << opened.error().message << " (" << opened.error().detail << ")"; \
  CgroupTree& tree = *opened

kaja::testing::CommandResult kajaEnter(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja", "sandbox", "enter"};
  argv.insert(argv.end(), args.begin(), args.end());
  return kaja::testing::runCommand(argv, {"PATH=/usr/bin:/bin"});
}

TEST(CgroupsTest, MakesAndRemovesAGroupPerServer) {
  KAJA_OPEN_TREE(tree, "groups");
  ASSERT_FALSE(tree.parents().empty());
  auto group = tree.create("server-1", {.memoryBytes = 64u << 20, .pids = 50});
  ASSERT_TRUE(group) << group.error().message;
  const auto folders = group->folders();
  ASSERT_EQ(folders.size(), tree.unified() ? 1u : 2u);
  for (const auto& dir : folders) EXPECT_TRUE(std::filesystem::is_directory(dir)) << dir;
  const auto pidsFolder = folders.back();
  EXPECT_EQ(kaja::testing::readFile(pidsFolder + "/pids.max"), "50\n");
  EXPECT_TRUE(group->pids().empty());
  ASSERT_TRUE(group->remove());
  for (const auto& dir : folders) EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
  EXPECT_TRUE(group->folders().empty());

  EXPECT_FALSE(tree.create("../escape", {}));
  EXPECT_FALSE(tree.create("a/b", {}));
  EXPECT_FALSE(CgroupTree::open(".."));
}

TEST(CgroupsTest, EnterJoinsTheGroupsThenRunsTheProgram) {
  KAJA_OPEN_TREE(tree, "enter");
  auto group = tree.create("server", {});
  ASSERT_TRUE(group) << group.error().message;
  std::vector<std::string> args;
  for (const auto& dir : group->folders()) args.insert(args.end(), {"--cgroup", dir});
  args.insert(args.end(), {"--", "/bin/cat", "/proc/self/cgroup"});
  const auto ran = kajaEnter(args);
  ASSERT_EQ(ran.exitCode, 0) << ran.err;
  EXPECT_THAT(ran.out, HasSubstr(uniqueName("enter") + "/server"));
}

TEST(CgroupsTest, EnterRefusesBadUsageAndAMissingGroup) {
  EXPECT_EQ(kajaEnter({"/bin/true"}).exitCode, 2);
  EXPECT_EQ(kajaEnter({"--cgroup"}).exitCode, 2);
  EXPECT_EQ(kajaEnter({"--", "true"}).exitCode, 2);  // no PATH search
  EXPECT_EQ(kajaEnter({"--"}).exitCode, 2);
  const auto missing = kajaEnter({"--cgroup", "/nonexistent/group", "--", "/bin/true"});
  EXPECT_EQ(missing.exitCode, 126);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/group"));
  const auto noProgram = kajaEnter({"--", "/nonexistent/program"});
  EXPECT_EQ(noProgram.exitCode, 126);
  EXPECT_THAT(noProgram.err, HasSubstr("execv(/nonexistent/program)"));
  EXPECT_EQ(kajaEnter({"--", "/bin/sh", "-c", "exit 7"}).exitCode, 7);
}

TEST(CgroupsTest, RemovingTheGroupEndsAConfinedServerAndAllItStarted) {
  SandboxTree sandbox;
  KAJA_REQUIRE_BWRAP(sandbox);
  KAJA_OPEN_TREE(tree, "kill");
  auto group = tree.create("server", {.memoryBytes = 0, .pids = 100});
  ASSERT_TRUE(group) << group.error().message;
  auto where = sandbox.confinementOf("alice");
  where.cgroups = group->folders();
  const std::string marker = "908." + std::to_string(::getpid());
  auto plan = confine(shell("sleep " + marker + " & setsid sleep " + marker + " & wait"), where);
  ASSERT_TRUE(plan) << plan.error().message;
  auto child = core::ChildProcess::start(*plan);
  ASSERT_TRUE(child) << child.error().message;
  const std::string sleeper = std::string("sleep\0", 6) + marker;
  ASSERT_TRUE(testing::eventually([&] { return testing::processesWith(sleeper).size() == 2; }));
  // bwrap outside, its init inside, the shell and two sleepers, all counted in the group.
  EXPECT_GE(group->pids().size(), 5u);
  ASSERT_TRUE(group->remove());
  EXPECT_TRUE((*child)->waitFor(std::chrono::seconds(5)));
  EXPECT_TRUE(testing::processesWith(marker).empty());
}

TEST(CgroupsTest, APidsLimitStopsAForkLoop) {
  SandboxTree sandbox;
  KAJA_REQUIRE_BWRAP(sandbox);
  KAJA_OPEN_TREE(tree, "pids");
  // 60 sleepers at most; they end with the shell, as the pid namespace does.
  const auto loop = shell("i=0; while [ $i -lt 60 ]; do sleep 30 & i=$((i+1)); echo $i; done");
  auto lastStarted = [&](std::uint64_t pids) {
    auto group = tree.create("server-" + std::to_string(pids), {.memoryBytes = 0, .pids = pids});
    EXPECT_TRUE(group) << group.error().message;
    if (!group) return -1;
    auto where = sandbox.confinementOf("alice");
    where.cgroups = group->folders();
    auto plan = confine(loop, where);
    EXPECT_TRUE(plan);
    const auto ran = testing::run(*plan);
    int last = 0;
    std::istringstream lines(ran.out);
    for (int n = 0; lines >> n;) last = n;
    EXPECT_TRUE(group->remove());
    return last;
  };
  EXPECT_EQ(lastStarted(0), 60);  // without a limit every sleeper starts
  const int limited = lastStarted(20);
  EXPECT_GT(limited, 0);
  EXPECT_LT(limited, 20);  // bwrap, its init and the shell count too
}

TEST(CgroupsTest, AMemoryLimitStopsABigAllocation) {
  SandboxTree sandbox;
  KAJA_REQUIRE_BWRAP(sandbox);
  KAJA_OPEN_TREE(tree, "memory");
  // dd holds one 128 MiB block in memory.
  const auto big = shell("dd if=/dev/zero of=/dev/null bs=128M count=1 && echo ALLOCATED");
  auto runWith = [&](std::uint64_t bytes) {
    auto group = tree.create("server-" + std::to_string(bytes), {.memoryBytes = bytes, .pids = 0});
    EXPECT_TRUE(group) << group.error().message;
    if (!group) return kaja::testing::CommandResult{};
    auto where = sandbox.confinementOf("alice");
    where.cgroups = group->folders();
    auto plan = confine(big, where);
    EXPECT_TRUE(plan);
    auto ran = testing::run(*plan);
    EXPECT_TRUE(group->remove());
    return ran;
  };
  EXPECT_THAT(runWith(0).out, HasSubstr("ALLOCATED"));
  const auto limited = runWith(32u << 20);
  EXPECT_THAT(limited.out, Not(HasSubstr("ALLOCATED")));
  EXPECT_NE(limited.exitCode, 0);
}

}  // namespace
}  // namespace kaja::sandbox

namespace kaja::sandbox {
namespace {

constexpr std::string_view kHybridMounts =
    "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
    "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "38 30 0:35 / /sys/fs/cgroup/pids rw,relatime shared:9 - cgroup cgroup rw,pids\n"
    "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

TEST(CgroupFolderTest, FindsEachHierarchyOfAHybridHost) {
  const std::string_view cgroup =
      "8:pids:/\n4:memory:/process_api/abc\n1:cpu,cpuacct:/x\n0::/user.slice\n";
  EXPECT_EQ(cgroupFolder(kHybridMounts, cgroup, "memory"), "/sys/fs/cgroup/memory/process_api/abc");
  EXPECT_EQ(cgroupFolder(kHybridMounts, cgroup, "pids"), "/sys/fs/cgroup/pids");
  EXPECT_EQ(cgroupFolder(kHybridMounts, cgroup, "cpuacct"), "/sys/fs/cgroup/cpu,cpuacct/x");
  EXPECT_EQ(cgroupFolder(kHybridMounts, cgroup, ""), "/sys/fs/cgroup/unified/user.slice");
  EXPECT_EQ(cgroupFolder(kHybridMounts, cgroup, "blkio"), std::nullopt);
}

TEST(CgroupFolderTest, FollowsAMountOfPartOfTheHierarchy) {
  // A container without a cgroup namespace: its own group is mounted as /sys/fs/cgroup/….
  const std::string_view mounts =
      "50 40 0:31 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n"
      "51 40 0:35 /docker/abc /sys/fs/cgroup/pids ro - cgroup cgroup rw,pids\n";
  EXPECT_EQ(cgroupFolder(mounts, "4:memory:/docker/abc/kaja\n", "memory"),
            "/sys/fs/cgroup/memory/kaja");
  EXPECT_EQ(cgroupFolder(mounts, "8:pids:/docker/abc\n", "pids"), "/sys/fs/cgroup/pids");
  EXPECT_EQ(cgroupFolder(mounts, "8:pids:/docker/abcdef\n", "pids"), std::nullopt);
  EXPECT_EQ(cgroupFolder(mounts, "8:pids:/other\n", "pids"), std::nullopt);
}

TEST(CgroupFolderTest, FindsTheUnifiedTreeAndUndoesEscapes) {
  const std::string_view mounts =
      "29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
  EXPECT_EQ(cgroupFolder(mounts, "0::/\n", ""), "/sys/fs/cgroup");
  EXPECT_EQ(cgroupFolder(mounts, "0::/kaja.slice/w\n", ""), "/sys/fs/cgroup/kaja.slice/w");
  EXPECT_EQ(cgroupFolder(mounts, "0::/\n", "memory"), std::nullopt);  // no v1 memory
  EXPECT_EQ(cgroupFolder("1 0 0:26 / /my\\040cg rw - cgroup2 none rw\n", "0::/a\n", ""),
            "/my cg/a");
  EXPECT_EQ(cgroupFolder("garbage\n\n- - -\n", "0::/\n", ""), std::nullopt);
  EXPECT_EQ(cgroupFolder(mounts, "garbage", ""), std::nullopt);
}

}  // namespace
}  // namespace kaja::sandbox
