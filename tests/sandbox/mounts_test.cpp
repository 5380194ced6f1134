// mountArgs(): hidden paths beat read-only ones however they are spelled, with the real
// bubblewrap.
#include "sandbox/mounts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "tests/sandbox/sandbox_support.h"

namespace kaja::sandbox {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::SandboxTree;
using testing::shell;
namespace fs = std::filesystem;

TEST(MountsTest, ShowsTheWhitelistAndNotTheRestOfEtc) {
  const auto& etc = etcWhitelist();
  EXPECT_THAT(etc, ::testing::Contains("/etc/passwd"));
  for (const char* never : {"/etc/shadow", "/etc/resolv.conf", "/etc/npmrc", "/etc/gitconfig",
                            "/etc/machine-id", "/etc/environment"}) {
    EXPECT_THAT(etc, Not(::testing::Contains(never)));
  }
  EXPECT_THAT(alwaysHidden(), ::testing::Contains("/etc/ssl/private"));
}

TEST(MountsTest, AReadOnlyPathInsideAHiddenFolderStaysHidden) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  auto where = tree.confinementOf("alice");
  where.readOnly = {tree.state() + "/bob/home"};  // asked for, but inside the hidden state
  auto plan = confine(shell("cat " + tree.state() + "/bob/home/secret.txt; echo end"), where);
  ASSERT_TRUE(plan) << plan.error().message;
  const auto ran = testing::run(*plan);
  EXPECT_THAT(ran.out, HasSubstr("end"));
  EXPECT_THAT(ran.out, Not(HasSubstr("bob-secret")));
}

TEST(MountsTest, ACoveredFolderHidesEvenTheNamesInIt) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  const auto secret = tree.state() + "/bob/home/secret.txt";
  for (const bool fileFirst : {true, false}) {
    auto where = tree.confinementOf("alice");
    where.hidden = fileFirst ? std::vector{secret, tree.state(), tree.state()}
                             : std::vector{tree.state(), secret, secret};
    auto plan = confine(shell("ls -aR " + tree.state() + "; echo end"), where);
    ASSERT_TRUE(plan) << plan.error().message;
    EXPECT_EQ(std::ranges::count(plan->argv, secret), 0);        // no mount point made for it
    EXPECT_EQ(std::ranges::count(plan->argv, tree.state()), 2);  // --tmpfs, --remount-ro
    const auto ran = testing::run(*plan);
    EXPECT_THAT(ran.out, HasSubstr("end"));
    EXPECT_THAT(ran.out, Not(HasSubstr("bob")));
    EXPECT_THAT(ran.out, Not(HasSubstr("secret")));
  }
}

TEST(MountsTest, HidesThroughLinksInEitherList) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  const auto links = tree.root() + "/links";
  fs::create_directories(links);
  fs::create_directory_symlink(tree.kajaFolder(), links + "/kaja-link");
  fs::create_symlink(tree.kajaFolder() + "/key", links + "/key-link");
  auto where = tree.confinementOf("alice");
  where.readOnly = {links + "/kaja-link"};  // shown at the link's path
  where.hidden = {links + "/key-link"};     // hides the file it points to
  auto plan = confine(shell("cat " + links + "/kaja-link/visible.txt; echo; cat " + links +
                            "/kaja-link/key; echo end"),
                      where);
  ASSERT_TRUE(plan) << plan.error().message;
  const auto ran = testing::run(*plan);
  EXPECT_THAT(ran.out, HasSubstr("visible-content"));
  EXPECT_THAT(ran.out, HasSubstr("end"));
  EXPECT_THAT(ran.out, Not(HasSubstr("worker-key")));
}

TEST(MountsTest, RefusesALinkTheServerLeftWhereAMountPointGoes) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  auto where = tree.confinementOf("alice");
  if (!tree.root().starts_with("/tmp/")) GTEST_SKIP() << "needs the test tree below /tmp";
  // The tree is shown below /tmp, so its mount point is made in alice's own tmp folder,
  // where her server left a link on its last run.
  const auto first = fs::path(tree.root()).lexically_relative("/tmp").begin()->string();
  const auto planted = where.tmp + "/" + first;
  fs::create_directories(tree.root() + "/elsewhere");
  fs::remove(planted);  // the empty mount point an earlier run made
  fs::create_directory_symlink(tree.root() + "/elsewhere", planted);
  auto plan = confine(shell("true"), where);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, core::ErrorCode::kRefused);
  EXPECT_THAT(plan.error().message, HasSubstr(planted));
  fs::remove(planted);
  EXPECT_TRUE(confine(shell("true"), where));
}

TEST(MountsTest, AProgramInTheHostsTmpIsShownBesideTheServersOwnTmp) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  // The server's /tmp is its own folder, so the host's /tmp being "shown at /tmp" must not
  // count as showing a program that lives there (kaja itself, built under /tmp, was not
  // found inside the sandbox).
  std::string made = "/tmp/kaja-program-XXXXXX";
  ASSERT_NE(::mkdtemp(made.data()), nullptr);
  const std::string program = made + "/hello";
  {
    std::FILE* file = std::fopen(program.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs("#!/bin/sh\necho hello-from-the-hosts-tmp\n", file);
    std::fclose(file);
  }
  fs::permissions(program, fs::perms::owner_all);
  auto where = tree.confinementOf("alice");
  core::LaunchPlan plan;
  plan.argv = {program};
  auto confined = confine(plan, where);
  ASSERT_TRUE(confined) << confined.error().message;
  const auto ran = testing::run(*confined);
  fs::remove_all(made);
  EXPECT_THAT(ran.out, HasSubstr("hello-from-the-hosts-tmp"));
}

TEST(MountsTest, HidesAPathInsideTheHome) {
  SandboxTree tree;
  KAJA_REQUIRE_BWRAP(tree);
  const auto home = tree.state() + "/alice/home";
  fs::create_directories(home + "/.private");
  std::FILE* file = std::fopen((home + "/.private/token").c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs("home-token-99", file);
  std::fclose(file);
  auto where = tree.confinementOf("alice");
  where.hidden.push_back(home + "/.private");
  auto plan = confine(shell("cat $HOME/.private/token; ls -a $HOME/.private; echo end"), where);
  ASSERT_TRUE(plan) << plan.error().message;
  const auto ran = testing::run(*plan);
  EXPECT_THAT(ran.out, HasSubstr("end"));
  EXPECT_THAT(ran.out, Not(HasSubstr("home-token")));
  EXPECT_THAT(ran.out, Not(HasSubstr("token\n")));
}

}  // namespace
}  // namespace kaja::sandbox
