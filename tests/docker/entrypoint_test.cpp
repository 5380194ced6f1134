// docker/entrypoint.sh outside Docker: with KAJA_BIN pointing at a stub that prints its
// arguments, each environment gives exactly the `kaja sandbox serve` command line it
// should, a missing or shared key file is refused before kaja runs, and the caller's own
// arguments come through unchanged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::docker {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using Strings = std::vector<std::string>;

const std::string kEntrypoint = std::string(kaja::test::sourceDir()) + "/docker/entrypoint.sh";

class EntrypointTest : public ::testing::Test {
 protected:
  EntrypointTest() {
    // One argument a line, in brackets, so that empty arguments and spaces show.
    stub_ = dir_.writeScript("bin/kaja", "for a do printf '[%s]\\n' \"$a\"; done");
    key_ = dir_.write("kaja-key", std::string(32, 'k'));
    ::chmod(key_.c_str(), 0600);
  }

  /// Runs the entrypoint with /bin/sh (dash on Debian, the image's shell) and `env` on top of
  /// KAJA_BIN, KAJA_KEY_FILE and PATH.
  testing::CommandResult run(const Strings& env, const Strings& args = {}) {
    Strings argv = {"/bin/sh", kEntrypoint};
    argv.insert(argv.end(), args.begin(), args.end());
    Strings full = {"KAJA_BIN=" + stub_, "KAJA_KEY_FILE=" + key_, "PATH=/usr/bin:/bin"};
    full.insert(full.end(), env.begin(), env.end());
    return testing::runCommand(argv, full);
  }

  /// The arguments the stub printed, or an empty list when it never ran.
  static Strings argsOf(const testing::CommandResult& result) {
    Strings args;
    std::istringstream lines(result.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.size() >= 2 && line.front() == '[' && line.back() == ']') {
        args.push_back(line.substr(1, line.size() - 2));
      }
    }
    return args;
  }

  Strings base() const {
    return {"sandbox", "serve", "--listen", "0.0.0.0:8080", "--key-file", key_};
  }

  testing::TempDir dir_;
  std::string stub_;
  std::string key_;
};

TEST_F(EntrypointTest, DefaultsListenOnPort8080WithTheKeyFile) {
  auto result = run({});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_THAT(argsOf(result), ElementsAreArray(base()));
  EXPECT_EQ(result.err, "");
}

TEST_F(EntrypointTest, EachVariableBecomesItsFlag) {
  auto result =
      run({"KAJA_LISTEN=127.0.0.1:9000", "KAJA_SHARED=1", "KAJA_IDLE=30", "KAJA_MEMORY=512M",
           "KAJA_PIDS=64", "KAJA_ALLOW_PRIVATE=10.1.0.0/16, 192.168.5.0/24"});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_THAT(argsOf(result),
              ElementsAre("sandbox", "serve", "--listen", "127.0.0.1:9000", "--key-file", key_,
                          "--shared", "--idle", "30", "--memory", "512M", "--pids", "64",
                          "--allow-private", "10.1.0.0/16", "--allow-private", "192.168.5.0/24"));
}

TEST_F(EntrypointTest, SharedZeroOrEmptyMeansAPrivateWorker) {
  for (const std::string value : {"0", ""}) {
    auto result = run({"KAJA_SHARED=" + value});
    ASSERT_EQ(result.exitCode, 0) << value << ": " << result.err;
    EXPECT_THAT(argsOf(result), ElementsAreArray(base())) << "KAJA_SHARED=" << value;
  }
}

TEST_F(EntrypointTest, SharedWithAnyOtherValueIsRefusedRatherThanIgnored) {
  // "true" silently meaning a private worker would let trustedSandbox abilities into a
  // worker the operator meant to share.
  for (const std::string value : {"true", "yes", "2", " 1"}) {
    auto result = run({"KAJA_SHARED=" + value});
    EXPECT_EQ(result.exitCode, 2) << value;
    EXPECT_THAT(result.err, HasSubstr("KAJA_SHARED")) << value;
    EXPECT_TRUE(argsOf(result).empty()) << "kaja ran with KAJA_SHARED=" << value;
  }
}

TEST_F(EntrypointTest, AllowPrivateSkipsEmptyItemsAndNeverExpandsGlobs) {
  auto result = run({"KAJA_ALLOW_PRIVATE=,/*,, 10.0.0.0/8 ,"});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  Strings want = base();
  want.insert(want.end(), {"--allow-private", "/*", "--allow-private", "10.0.0.0/8"});
  EXPECT_THAT(argsOf(result), ElementsAreArray(want));
}

TEST_F(EntrypointTest, EmptyOptionalVariablesAddNoFlags) {
  auto result =
      run({"KAJA_IDLE=", "KAJA_MEMORY=", "KAJA_PIDS=", "KAJA_ALLOW_PRIVATE=", "KAJA_SHARED="});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_THAT(argsOf(result), ElementsAreArray(base()));
}

TEST_F(EntrypointTest, ExtraArgumentsComeAfterTheFlagsUnchanged) {
  auto result = run({"KAJA_IDLE=5"}, {"--verbose", "two words", "", "$HOME", "*"});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  Strings want = base();
  want.insert(want.end(), {"--idle", "5", "--verbose", "two words", "", "$HOME", "*"});
  EXPECT_THAT(argsOf(result), ElementsAreArray(want));
}

TEST_F(EntrypointTest, KajaReplacesTheShellSoSignalsReachIt) {
  // The wrapper prints its pid and then execs the entrypoint; if the entrypoint execs kaja
  // too, the stub has the same pid.
  std::string stub = dir_.writeScript("bin/pid", "echo \"kaja=$$\"");
  auto result =
      testing::runCommand({"/bin/sh", "-c", "echo \"shell=$$\"; exec /bin/sh \"$0\"", kEntrypoint},
                          {"KAJA_BIN=" + stub, "KAJA_KEY_FILE=" + key_, "PATH=/usr/bin:/bin"});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  std::istringstream lines(result.out);
  std::string shell;
  std::string kaja;
  std::getline(lines, shell);
  std::getline(lines, kaja);
  ASSERT_TRUE(shell.starts_with("shell=")) << result.out;
  ASSERT_TRUE(kaja.starts_with("kaja=")) << result.out;
  EXPECT_EQ(shell.substr(6), kaja.substr(5));
}

TEST_F(EntrypointTest, AMissingKeyFileIsRefusedInOneSentence) {
  auto result = run({"KAJA_KEY_FILE=" + dir_.path() + "/absent"});
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_THAT(result.err, HasSubstr(dir_.path() + "/absent does not exist"));
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_TRUE(argsOf(result).empty());
}

TEST_F(EntrypointTest, TheDefaultKeyFileIsTheSecretsMount) {
  if (std::filesystem::exists("/run/secrets/kaja-key")) {
    GTEST_SKIP() << "/run/secrets/kaja-key exists on this machine";
  }
  auto result =
      testing::runCommand({"/bin/sh", kEntrypoint}, {"KAJA_BIN=" + stub_, "PATH=/usr/bin:/bin"});
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_THAT(result.err, HasSubstr("/run/secrets/kaja-key does not exist"));
}

TEST_F(EntrypointTest, AKeyFileOthersCanReadOrWriteIsRefused) {
  // The worker itself refuses any group or other bit, so the entrypoint does too.
  for (mode_t mode : {0644, 0640, 0604, 0660, 0620, 0602, 0610, 0601, 0700 | 0044}) {
    ::chmod(key_.c_str(), mode);
    auto result = run({});
    EXPECT_EQ(result.exitCode, 2) << std::oct << mode;
    EXPECT_THAT(result.err, HasSubstr("can be read or written by others")) << std::oct << mode;
    EXPECT_TRUE(argsOf(result).empty()) << "kaja ran with key mode " << std::oct << mode;
  }
  for (mode_t mode : {0600, 0400}) {
    ::chmod(key_.c_str(), mode);
    auto result = run({});
    EXPECT_EQ(result.exitCode, 0) << std::oct << mode << ": " << result.err;
  }
}

TEST_F(EntrypointTest, ASymlinkIsJudgedByTheFileItPointsTo) {
  // Kubernetes mounts a Secret's keys as symlinks into a ..data folder.
  std::string link = dir_.path() + "/linked-key";
  std::filesystem::create_symlink(key_, link);
  EXPECT_EQ(run({"KAJA_KEY_FILE=" + link}).exitCode, 0);
  ::chmod(key_.c_str(), 0644);
  auto result = run({"KAJA_KEY_FILE=" + link});
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_THAT(result.err, HasSubstr("can be read or written by others"));
}

TEST_F(EntrypointTest, AFolderInPlaceOfTheKeyIsRefused) {
  std::filesystem::create_directory(dir_.path() + "/key-dir");
  auto result = run({"KAJA_KEY_FILE=" + dir_.path() + "/key-dir"});
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_THAT(result.err, HasSubstr("is not a regular file"));
}

TEST_F(EntrypointTest, AKeyFileTheWorkerCannotReadIsRefused) {
  if (::geteuid() != 0 || !std::filesystem::exists("/usr/bin/setpriv")) {
    GTEST_SKIP() << "needs root and setpriv to run the entrypoint as another user";
  }
  ::chmod(dir_.path().c_str(), 0755);
  ::chmod(std::filesystem::path(stub_).parent_path().c_str(), 0755);
  auto result =
      testing::runCommand({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                           "/bin/sh", kEntrypoint},
                          {"KAJA_BIN=" + stub_, "KAJA_KEY_FILE=" + key_, "PATH=/usr/bin:/bin"});
  EXPECT_EQ(result.exitCode, 2) << result.err;
  EXPECT_THAT(result.err, HasSubstr("cannot be read by uid 65534"));
  EXPECT_TRUE(argsOf(result).empty());
}

TEST_F(EntrypointTest, AKajaThatCannotRunIsNamed) {
  auto result = run({"KAJA_BIN=" + dir_.path() + "/no-kaja"});
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_THAT(result.err, HasSubstr("cannot run " + dir_.path() + "/no-kaja"));
}

TEST_F(EntrypointTest, TheScriptParsesAndPassesShellcheck) {
  auto parse = testing::runCommand({"/bin/sh", "-n", kEntrypoint}, {"PATH=/usr/bin:/bin"});
  EXPECT_EQ(parse.exitCode, 0) << parse.err;
  // The image runs it directly, so it must be executable and start with a POSIX shebang.
  EXPECT_EQ(::access(kEntrypoint.c_str(), X_OK), 0);
  EXPECT_TRUE(testing::readFile(kEntrypoint).starts_with("#!/bin/sh\n"));
  if (!std::filesystem::exists("/usr/bin/shellcheck")) {
    GTEST_SKIP() << "shellcheck is not installed (Debian's shellcheck package; .ci/setup "
                    "installs it)";
  }
  auto check = testing::runCommand({"/usr/bin/shellcheck", "--shell=sh", kEntrypoint},
                                   {"PATH=/usr/bin:/bin"});
  EXPECT_EQ(check.exitCode, 0) << check.out << check.err;
}

}  // namespace
}  // namespace kaja::docker
