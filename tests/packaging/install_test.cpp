// cmake --install and the Debian package: what lands where, and that an installed kaja runs
// from its prefix alone.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kBuild = fs::path(kaja::test::binDir()).parent_path().string();
const std::string kSource = kaja::test::sourceDir();
const std::string kSystemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

std::set<std::string> shippedAbilities() {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(kSource + "/marketplace/abilities")) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

bool shipsBun() { return fs::exists(kSource + "/marketplace/runtime/node_modules/.bin/bun"); }

bool bwrapRuns() {
  auto result = testing::runCommand({"/usr/bin/bwrap", "--dev-bind", "/", "/", "--", "/bin/true"},
                                    {"PATH=" + kSystemPath});
  return result.exitCode == 0;
}

// The installed kaja as a user would run it: from another folder, with a fresh home and no
// hint of where the source tree is, which is hidden from it under an empty tmpfs.
testing::CommandResult runInstalled(const std::string& kaja, const std::string& home,
                                    const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/bwrap", "--dev-bind", "/", "/",  "--tmpfs",
                                   kSource,          "--chdir",    "/", "--", kaja};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::runCommand(argv, {"HOME=" + home, "PATH=" + kSystemPath, "NO_COLOR=1"});
}

class InstallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = root_.path() + "/prefix";
    auto installed = testing::runCommand(
        {"/usr/bin/cmake", "--install", kBuild, "--prefix", prefix_}, {"PATH=" + kSystemPath});
    ASSERT_EQ(installed.exitCode, 0) << installed.out << installed.err;
  }
  testing::TempDir root_;
  std::string prefix_;
};

TEST_F(InstallTest, PutsKajaItsMarketplaceManPageAndCompletionsInPlace) {
  EXPECT_EQ(::access((prefix_ + "/bin/kaja").c_str(), X_OK), 0);
  for (const auto& name : shippedAbilities()) {
    EXPECT_TRUE(
        fs::is_regular_file(prefix_ + "/share/kaja/marketplace/abilities/" + name + "/mcp.toml"))
        << name;
  }
  EXPECT_TRUE(fs::is_regular_file(prefix_ + "/share/kaja/marketplace/personas/default.toml"));
  EXPECT_TRUE(fs::is_regular_file(prefix_ + "/share/man/man1/kaja.1.gz"));
  EXPECT_TRUE(fs::is_regular_file(prefix_ + "/share/bash-completion/completions/kaja"));
  EXPECT_TRUE(fs::is_regular_file(prefix_ + "/share/zsh/vendor-completions/_kaja"));
  EXPECT_TRUE(fs::is_regular_file(prefix_ + "/share/fish/vendor_completions.d/kaja.fish"));
  EXPECT_TRUE(fs::is_regular_file(prefix_ + "/share/doc/kaja/copyright"));
  // Only kaja: no test helper, benchmark or source file.
  std::vector<std::string> programs;
  for (const auto& entry : fs::directory_iterator(prefix_ + "/bin")) {
    programs.push_back(entry.path().filename().string());
  }
  EXPECT_THAT(programs, ::testing::ElementsAre("kaja"));
  for (const auto& entry : fs::recursive_directory_iterator(prefix_)) {
    const std::string name = entry.path().filename().string();
    EXPECT_FALSE(name.ends_with(".cpp") || name.ends_with(".h") || name == "node_modules")
        << entry.path();
  }
  if (shipsBun()) {
    EXPECT_EQ(::access((prefix_ + "/libexec/kaja/bun").c_str(), X_OK), 0);
    EXPECT_EQ(fs::read_symlink(prefix_ + "/libexec/kaja/bunx"), "bun");
  }
  // The man page renders, and holds every command with its summary.
  auto man = testing::runCommand({"/usr/bin/man", "-l", prefix_ + "/share/man/man1/kaja.1.gz"},
                                 {"PATH=" + kSystemPath, "MANWIDTH=200", "MAN_KEEP_FORMATTING="});
  ASSERT_EQ(man.exitCode, 0) << man.err;
  for (const char* line : {"kaja call [--persona P] [--yes] [--json] ABILITY TOOL [ARGS]",
                           "kaja docker mounts [--json]", "EXIT STATUS", "XDG_CONFIG_HOME"}) {
    EXPECT_THAT(man.out, HasSubstr(line));
  }
}

TEST_F(InstallTest, TheInstalledKajaFindsEverythingBesideItselfWithTheSourceTreeHidden) {
  if (!bwrapRuns()) GTEST_SKIP() << "bwrap cannot run here, so the source tree cannot be hidden";
  const std::string home = root_.path() + "/home";
  fs::create_directories(home);
  auto abilities = runInstalled(prefix_ + "/bin/kaja", home, {"abilities", "--json"});
  ASSERT_EQ(abilities.exitCode, 0) << abilities.err;
  json rows = json::parse(abilities.out, nullptr, false);
  ASSERT_TRUE(rows.is_array()) << abilities.out;
  std::set<std::string> names;
  for (const auto& row : rows) {
    names.insert(row["name"].get<std::string>());
    EXPECT_EQ(row["source"], "shipped") << row.dump();
    EXPECT_THAT(row["manifest"].get<std::string>(), HasSubstr(prefix_ + "/share/kaja/marketplace"));
  }
  EXPECT_EQ(names, shippedAbilities());
  if (shipsBun()) {
    // No bunx on this PATH: the installed kaja runs npm abilities with the bun it brought.
    for (const auto& row : rows) {
      if (row["name"] != "filesystem") continue;
      EXPECT_EQ(row["runner"], "bunx") << row.dump();
      EXPECT_THAT(row["runs"].get<std::string>(), HasSubstr(prefix_ + "/libexec/kaja/bunx"));
    }
  }
  auto paths = runInstalled(prefix_ + "/bin/kaja", home, {"config", "paths", "--json"});
  ASSERT_EQ(paths.exitCode, 0) << paths.err;
  EXPECT_EQ(json::parse(paths.out)["shipped"], prefix_ + "/share/kaja/marketplace");
}

TEST(InstallPrefixTest, APrefixThatCannotBeWrittenGetsOneSentence) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  testing::TempDir root;
  // A folder only root may write, tried by nobody.
  ::chmod(root.path().c_str(), 0755);
  const std::string prefix = root.path() + "/locked/prefix";
  fs::create_directories(root.path() + "/locked");
  auto result =
      testing::runCommand({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                           "/usr/bin/cmake", "--install", kBuild, "--prefix", prefix},
                          {"PATH=" + kSystemPath, "HOME=/nonexistent"});
  EXPECT_NE(result.exitCode, 0);
  EXPECT_THAT(result.err, HasSubstr("cannot install kaja into " + prefix + ": " + root.path() +
                                    "/locked is not writable by this user"));
  EXPECT_FALSE(fs::exists(prefix));
}

// cpack -G DEB, as the README says, into a folder of the test's own.
class DebPackageTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    out_ = new testing::TempDir();
    auto made = testing::runCommandWith(
        {"/bin/sh", "-c", "cd \"$1\" && exec cpack -G DEB -B \"$2\"", "sh", kBuild, out_->path()},
        {"PATH=" + kSystemPath}, {.timeoutSeconds = 280});
    made_ = new testing::CommandResult(made);
    for (const auto& entry : fs::directory_iterator(out_->path())) {
      if (entry.path().extension() == ".deb") deb_ = entry.path().string();
    }
  }
  static void TearDownTestSuite() {
    delete out_;
    delete made_;
  }
  static testing::TempDir* out_;
  static testing::CommandResult* made_;
  static std::string deb_;
};
testing::TempDir* DebPackageTest::out_ = nullptr;
testing::CommandResult* DebPackageTest::made_ = nullptr;
std::string DebPackageTest::deb_;

TEST_F(DebPackageTest, HoldsKajaWithDependenciesFromShlibdepsAndPassesLintian) {
  ASSERT_EQ(made_->exitCode, 0) << made_->out << made_->err;
  ASSERT_FALSE(deb_.empty());
  EXPECT_THAT(fs::path(deb_).filename().string(),
              ::testing::MatchesRegex("kaja_[0-9.]+-1_amd64\\.deb"));
  auto contents = testing::runCommand({"/usr/bin/dpkg-deb", "-c", deb_}, {"PATH=" + kSystemPath});
  ASSERT_EQ(contents.exitCode, 0) << contents.err;
  for (const char* path :
       {"./usr/bin/kaja", "./usr/share/kaja/marketplace/abilities/filesystem/mcp.toml",
        "./usr/share/kaja/marketplace/personas/default.toml", "./usr/share/man/man1/kaja.1.gz",
        "./usr/share/bash-completion/completions/kaja", "./usr/share/zsh/vendor-completions/_kaja",
        "./usr/share/fish/vendor_completions.d/kaja.fish", "./usr/share/doc/kaja/copyright",
        "./usr/share/doc/kaja/changelog.Debian.gz"}) {
    EXPECT_THAT(contents.out, HasSubstr(path));
  }
  if (shipsBun()) {
    EXPECT_THAT(contents.out, HasSubstr("./usr/libexec/kaja/bun"));
  }
  for (const char* absent : {"kaja_tests", "echo_server", "_bench", "/include/"}) {
    EXPECT_THAT(contents.out, Not(HasSubstr(absent)));
  }
  // dpkg-shlibdeps read them from the kaja binary; nothing lists them by hand.
  auto depends =
      testing::runCommand({"/usr/bin/dpkg-deb", "-f", deb_, "Depends"}, {"PATH=" + kSystemPath});
  for (const char* library : {"libc6", "libcurl4", "libicu72", "libssl3", "libtomlplusplus3"}) {
    EXPECT_THAT(depends.out, HasSubstr(library));
  }
  if (!fs::exists("/usr/bin/lintian")) GTEST_SKIP() << "lintian is not installed (.ci/setup)";
  auto lint = testing::runCommandWith({"/usr/bin/lintian", deb_}, {"PATH=" + kSystemPath},
                                      {.timeoutSeconds = 280});
  EXPECT_EQ(lint.exitCode, 0) << lint.out << lint.err;
  EXPECT_THAT(lint.out, Not(HasSubstr("E: "))) << lint.out;
}

TEST_F(DebPackageTest, ItsKajaRunsFromTheUnpackedTree) {
  ASSERT_FALSE(deb_.empty()) << made_->err;
  if (!bwrapRuns()) GTEST_SKIP() << "bwrap cannot run here, so the source tree cannot be hidden";
  testing::TempDir root;
  auto unpacked = testing::runCommand({"/usr/bin/dpkg-deb", "-x", deb_, root.path() + "/tree"},
                                      {"PATH=" + kSystemPath});
  ASSERT_EQ(unpacked.exitCode, 0) << unpacked.err;
  const std::string home = root.path() + "/home";
  fs::create_directories(home);
  auto abilities = runInstalled(root.path() + "/tree/usr/bin/kaja", home, {"abilities", "--json"});
  ASSERT_EQ(abilities.exitCode, 0) << abilities.err;
  json rows = json::parse(abilities.out, nullptr, false);
  ASSERT_TRUE(rows.is_array());
  EXPECT_EQ(rows.size(), shippedAbilities().size());
  auto help = runInstalled(root.path() + "/tree/usr/bin/kaja", home, {"--version"});
  EXPECT_THAT(help.out, ::testing::StartsWith("kaja "));
}

}  // namespace
}  // namespace kaja
