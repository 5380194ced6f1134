// Whom a confined server runs as: resolving --run-as, `kaja sandbox enter --user`, and a
// server confined as an unprivileged user by a root worker, with the real bubblewrap.
#include "sandbox/run_as.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "sandbox/confine.h"
#include "tests/sandbox/sandbox_support.h"
#include "tests/support/build_paths.h"

namespace kaja::sandbox {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::SandboxTree;
using testing::shell;

constexpr uid_t kNobody = 65534;

const std::string kKaja = std::string(kaja::test::binDir()) + "/kaja";

TEST(SandboxRunAsTest, ARootWorkerRunsServersAsNobodyUnlessToldAndNeverAsRoot) {
  const auto fallback = resolveRunAs("", 0);
  ASSERT_TRUE(fallback) << fallback.error().message;
  ASSERT_TRUE(fallback->has_value());
  EXPECT_EQ((*fallback)->uid, kNobody);
  EXPECT_EQ((*fallback)->gid, kNobody);  // nogroup
  const auto numeric = resolveRunAs("4242:4343", 0);
  ASSERT_TRUE(numeric && numeric->has_value());
  EXPECT_EQ((*numeric)->uid, 4242U);
  EXPECT_EQ((*numeric)->gid, 4343U);
  for (const char* root : {"root", "0", "0:0", "4242:0", "0:4242"}) {
    const auto refused = resolveRunAs(root, 0);
    ASSERT_FALSE(refused) << root;
    EXPECT_EQ(refused.error().code, core::ErrorCode::kUsage);
    EXPECT_THAT(refused.error().message, HasSubstr("will not run sandboxed servers as root"));
  }
  for (const char* bad : {"no-such-user-kaja", "12:ab", ":12", "12:", "-1"}) {
    EXPECT_FALSE(resolveRunAs(bad, 0)) << bad;
  }
}

TEST(SandboxRunAsTest, AWorkerThatIsNotRootRunsServersAsItselfAndBecomesNobodyElse) {
  const auto itself = resolveRunAs("", 4242);
  ASSERT_TRUE(itself);
  EXPECT_FALSE(itself->has_value());
  const auto other = resolveRunAs("nobody", 4242);
  ASSERT_FALSE(other);
  EXPECT_THAT(other.error().message, HasSubstr("only a worker started as root"));
}

TEST(SandboxRunAsTest, EnterBecomesTheUserForGoodBeforeTheProgram) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can become another user";
  const auto ran = kaja::testing::runCommand(
      {kKaja, "sandbox", "enter", "--user", "65534:65534", "--", "/bin/sh", "-c",
       "id -u; id -g; id -G; grep -E '^(CapEff|CapPrm|CapAmb)' /proc/self/status"},
      {"PATH=/usr/bin:/bin"});
  ASSERT_EQ(ran.exitCode, 0) << ran.err;
  EXPECT_EQ(ran.out,
            "65534\n65534\n65534\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n"
            "CapAmb:\t0000000000000000\n");
  for (const char* user : {"0:0", "0:65534", "65534:0", "65534", "nobody"}) {
    const auto refused = kaja::testing::runCommand(
        {kKaja, "sandbox", "enter", "--user", user, "--", "/usr/bin/id", "-u"}, {});
    EXPECT_EQ(refused.exitCode, 2) << user << ": " << refused.out;
    EXPECT_EQ(refused.out, "") << user;
  }
}

TEST(ConfineRunAsTest, PutsTheSwitchOfUserBeforeBwrapAndRefusesRoot) {
  SandboxTree tree;
  auto where = tree.confinementOf("alice");
  where.runAs = RunAs{kNobody, kNobody, "nobody"};
  auto plan = confine(shell("true"), where);
  if (!plan && plan.error().code == core::ErrorCode::kSpawn) GTEST_SKIP() << plan.error().message;
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_GE(plan->argv.size(), 7U);
  EXPECT_THAT(std::vector(plan->argv.begin(), plan->argv.begin() + 7),
              ::testing::ElementsAre(where.kaja, "sandbox", "enter", "--user", "65534:65534", "--",
                                     ::testing::HasSubstr("bwrap")));
  where.runAs = RunAs{0, 0, "root"};
  const auto refused = confine(shell("true"), where);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, core::ErrorCode::kInvalidConfig);
}

/// Opens the tree to nobody as a root worker does: alice's home and tmp are nobody's (0700),
/// the folders above them passable, kaja's folder readable, its key and a root file 0600.
void openTreeToNobody(const SandboxTree& tree) {
  namespace fs = std::filesystem;
  fs::permissions(tree.root(), fs::perms::owner_all | fs::perms::others_exec);
  fs::permissions(tree.state(), fs::perms::owner_all | fs::perms::others_exec);
  fs::permissions(tree.state() + "/alice", fs::perms::owner_all | fs::perms::others_exec);
  for (const char* dir : {"/alice/home", "/alice/tmp"}) {
    ASSERT_EQ(::chown((tree.state() + dir).c_str(), kNobody, kNobody), 0);
    fs::permissions(tree.state() + dir, fs::perms::owner_all);
  }
  fs::permissions(tree.kajaFolder(),
                  fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(tree.kajaFolder() + "/key", fs::perms::owner_read | fs::perms::owner_write);
  const std::string secret = tree.kajaFolder() + "/root-only.txt";
  kaja::testing::TempDir scratch;
  fs::copy_file(scratch.write("s", "root-only-secret-77"), secret);
  fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write);
  fs::permissions(tree.kajaFolder() + "/visible.txt",
                  fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
}

TEST(ConfineRunAsTest, AServerRunAsNobodyIsNobodyOnTheHost) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can run a server as another user";
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  openTreeToNobody(tree);
  auto where = tree.confinementOf("alice");
  where.runAs = RunAs{kNobody, kNobody, "nobody"};
  const std::string swappiness = kaja::testing::readFile("/proc/sys/vm/swappiness");
  ASSERT_FALSE(swappiness.empty());
  // Writes back the value it read (never changing a sysctl), which must be refused.
  const std::string k = tree.kajaFolder();
  auto plan = confine(
      shell("echo uid=$(id -u); cat " + k + "/visible.txt; cat " + k + "/root-only.txt " + k +
            "/key; v=$(cat /proc/sys/vm/swappiness); "
            "(echo \"$v\" > /proc/sys/vm/swappiness) 2>/dev/null && echo "
            "SYSCTL-WRITTEN; echo mine > $HOME/note; cp /bin/true $HOME/t; "
            "chmod 4755 $HOME/t; chown 0:0 $HOME/t 2>/dev/null && echo "
            "CHOWNED; echo done"),
      where);
  ASSERT_TRUE(plan) << plan.error().message;
  const auto ran = testing::run(*plan);
  if (ran.out.find("uid=") == std::string::npos) {
    GTEST_SKIP() << "bubblewrap cannot run unprivileged here: " << ran.err;
  }
  EXPECT_THAT(ran.out, HasSubstr("uid=65534\nvisible-content"));
  EXPECT_THAT(ran.out, HasSubstr("done"));
  EXPECT_THAT(ran.out, Not(HasSubstr("root-only-secret")));
  EXPECT_THAT(ran.out, Not(HasSubstr("worker-key")));
  EXPECT_THAT(ran.out, Not(HasSubstr("SYSCTL-WRITTEN")));
  EXPECT_THAT(ran.out, Not(HasSubstr("CHOWNED")));
  EXPECT_EQ(kaja::testing::readFile("/proc/sys/vm/swappiness"), swappiness);
  struct stat note {};
  ASSERT_EQ(::stat((where.home + "/note").c_str(), &note), 0);
  EXPECT_EQ(note.st_uid, kNobody);
  EXPECT_EQ(note.st_gid, kNobody);
  struct stat setuid {};
  ASSERT_EQ(::stat((where.home + "/t").c_str(), &setuid), 0);
  EXPECT_EQ(setuid.st_uid, kNobody);  // set-user-ID to nobody at most, never to root
}

TEST(ConfineRunAsTest, ProcSysIsReadOnlyEvenForARootServer) {
  if (::geteuid() != 0) GTEST_SKIP() << "the second wall matters where the worker is root";
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  const std::string swappiness = kaja::testing::readFile("/proc/sys/vm/swappiness");
  ASSERT_FALSE(swappiness.empty());
  // No runAs: the server is the worker's root, and only the read-only mount stops it.
  auto plan = confine(shell("v=$(cat /proc/sys/vm/swappiness); echo read=$v; "
                            "(echo \"$v\" > /proc/sys/vm/swappiness) 2>&1 && echo WRITTEN"),
                      tree.confinementOf("alice"));
  ASSERT_TRUE(plan) << plan.error().message;
  const auto ran = testing::run(*plan);
  EXPECT_THAT(ran.out, HasSubstr("read=" + swappiness.substr(0, swappiness.find('\n'))));
  EXPECT_THAT(ran.out, HasSubstr("Read-only file system"));
  EXPECT_THAT(ran.out, Not(HasSubstr("WRITTEN")));
  EXPECT_EQ(kaja::testing::readFile("/proc/sys/vm/swappiness"), swappiness);
}

}  // namespace
}  // namespace kaja::sandbox
