// docker/Dockerfile and docker/k8s/ without a Docker engine or a cluster: the Dockerfile is
// read instruction by instruction (stages, packages, user, entrypoint, paths) and checked
// against this Debian 12 machine's package lists and the kaja it built; the manifests are
// parsed with python3's yaml module and their security facts asserted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/docker/dockerfile.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::docker {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

const std::string kSource = kaja::test::sourceDir();
const Strings kPath = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};

class DockerfileTest : public ::testing::Test {
 protected:
  DockerfileTest() : stages_(parseDockerfile(testing::readFile(kSource + "/docker/Dockerfile"))) {}

  const Stage& build() const { return stages_.front(); }
  const Stage& runtime() const { return stages_.back(); }

  /// The destination of the COPY in the runtime stage whose sources include `source`.
  std::optional<std::string> copyDestination(const std::string& source) const {
    for (const auto& copy : runtime().all("COPY")) {
      Strings w = words(copy.rest);
      if (std::find(w.begin(), w.end() - 1, source) != w.end() - 1) return w.back();
    }
    return std::nullopt;
  }

  std::vector<Stage> stages_;
};

TEST_F(DockerfileTest, BuildsOnDebian12InTwoStages) {
  ASSERT_EQ(stages_.size(), 2u);
  for (const auto& stage : stages_) {
    EXPECT_TRUE(stage.from.starts_with("debian:bookworm") || stage.from.starts_with("debian:12"))
        << stage.from;
  }
  EXPECT_THAT(build().from, HasSubstr(" AS build"));
}

TEST_F(DockerfileTest, TheBuildStageBuildsOnlyKajaInRelease) {
  std::string runs = build().runs();
  EXPECT_THAT(runs, HasSubstr("-DCMAKE_BUILD_TYPE=Release"));
  EXPECT_THAT(runs, HasSubstr("--target kaja "));
  EXPECT_THAT(runs, ::testing::Not(HasSubstr("kaja_tests")));
}

TEST_F(DockerfileTest, TheBuildStageHasEveryLibraryCiSetupInstalls) {
  std::string setup = testing::readFile(kSource + "/.ci/setup");
  auto start = setup.find("wanted=(");
  ASSERT_NE(start, std::string::npos) << ".ci/setup no longer lists its packages in wanted=(";
  auto end = setup.find("\n)", start);
  Strings wanted;
  std::istringstream list(setup.substr(start + 8, end - start - 8));
  for (std::string line; std::getline(list, line);) {
    for (const auto& word : words(line.substr(0, line.find('#')))) wanted.push_back(word);
  }
  auto have = build().aptPackages();
  int libraries = 0;
  // Tools that only the tests use, not libraries kaja links: the package's dpkg-shlibdeps
  // and the fuzzers' sanitizer runtime.
  const std::set<std::string> testOnly = {"dpkg-dev", "libclang-rt-16-dev"};
  for (const auto& pkg : wanted) {
    if (!pkg.ends_with("-dev") || testOnly.contains(pkg)) continue;
    ++libraries;
    EXPECT_TRUE(have.contains(pkg)) << pkg << " is in .ci/setup but not in the build stage";
  }
  EXPECT_GE(libraries, 8);
  for (const char* tool : {"g++", "cmake", "pkg-config"}) EXPECT_TRUE(have.contains(tool)) << tool;
}

TEST_F(DockerfileTest, EveryPackageItInstallsIsInDebian12) {
  if (!fs::exists("/usr/bin/apt-cache")) GTEST_SKIP() << "apt-cache is not installed";
  // One apt-cache for all of them: it fails when any is unknown, and shows each it knows.
  std::vector<std::string> argv = {"/usr/bin/apt-cache", "show", "--no-all-versions"};
  std::set<std::string> packages;
  for (const auto& stage : stages_) packages.merge(stage.aptPackages());
  argv.insert(argv.end(), packages.begin(), packages.end());
  auto shown = testing::runCommand(argv, kPath);
  EXPECT_EQ(shown.exitCode, 0) << shown.err;
  int checked = 0;
  for (const auto& pkg : packages) {
    EXPECT_THAT(shown.out, HasSubstr("Package: " + pkg + "\n"))
        << pkg << " is not in this machine's Debian package lists";
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

TEST_F(DockerfileTest, TheRuntimeStageHasWhatTheWorkerRuns) {
  auto have = runtime().aptPackages();
  for (const char* pkg : {"bubblewrap", "chromium", "nodejs", "npm", "ca-certificates", "tini"}) {
    EXPECT_TRUE(have.contains(pkg)) << pkg;
  }
  // Nothing to build with in the image the servers run beside.
  for (const char* pkg : {"g++", "cmake", "libboost-dev", "libssl-dev"}) {
    EXPECT_FALSE(have.contains(pkg)) << pkg;
  }
}

/// The Debian package that owns each library `program` links (its NEEDED entries, found as
/// the loader finds them), by library name; "" when no package owns it.
std::map<std::string, std::string> packagesOfLinkedLibraries(const std::string& program) {
  std::map<std::string, std::string> owner;
  auto needed = testing::runCommand({"/usr/bin/readelf", "-d", program}, kPath);
  std::istringstream lines(needed.out);
  for (std::string line; std::getline(lines, line);) {
    auto open = line.find("Shared library: [");
    if (open != std::string::npos) owner[line.substr(open + 17, line.find(']') - open - 17)];
  }
  // With merged /usr a file may be registered under /lib or /usr/lib: ask for both.
  std::map<std::string, std::string> libraryOf;
  auto ldd = testing::runCommand({"/usr/bin/ldd", program}, kPath);
  std::istringstream mapped(ldd.out);
  for (std::string line; std::getline(mapped, line);) {
    std::string name, arrow, path;
    std::istringstream(line) >> name >> arrow >> path;
    if (!owner.contains(name) || !path.starts_with("/")) continue;
    std::string canonical = fs::weakly_canonical(path).string();
    for (const auto& p : {path, canonical, canonical.substr(4), "/usr" + path}) libraryOf[p] = name;
  }
  std::vector<std::string> argv = {"/usr/bin/dpkg", "-S"};
  for (const auto& [path, name] : libraryOf) argv.push_back(path);
  auto search = testing::runCommand(argv, kPath);
  std::istringstream found(search.out);
  for (std::string line; std::getline(found, line);) {
    auto colon = line.find(": ");
    if (colon == std::string::npos) continue;
    std::string path = line.substr(colon + 2);
    if (libraryOf.contains(path)) owner[libraryOf[path]] = line.substr(0, line.find(':'));
  }
  return owner;
}

/// The packages every Debian system has: the Essential ones and, transitively, what they
/// depend on without an alternative (libc6, and libgcc-s1 through it), as installed here.
std::set<std::string> basePackages() {
  auto listed = testing::runCommand(
      {"/usr/bin/dpkg-query", "-W", "-f=${Package}\t${Essential}\t${Pre-Depends}, ${Depends}\n"},
      kPath);
  std::map<std::string, std::vector<std::string>> needs;
  std::vector<std::string> todo;
  std::istringstream lines(listed.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string name, essential, depends;
    std::getline(fields, name, '\t');
    std::getline(fields, essential, '\t');
    std::getline(fields, depends);
    if (essential == "yes") todo.push_back(name);
    std::istringstream items(depends);
    for (std::string item; std::getline(items, item, ',');) {
      if (item.find('|') != std::string::npos) continue;
      Strings w = words(item);
      if (!w.empty()) needs[name].push_back(w.front().substr(0, w.front().find(':')));
    }
  }
  std::set<std::string> base;
  while (!todo.empty()) {
    std::string name = todo.back();
    todo.pop_back();
    if (!base.insert(name).second) continue;
    for (const auto& dep : needs[name]) todo.push_back(dep);
  }
  return base;
}

TEST_F(DockerfileTest, TheRuntimeStageHasThePackagesOfEveryLibraryKajaLinks) {
  if (!fs::exists("/usr/bin/readelf") || !fs::exists("/usr/bin/dpkg")) {
    GTEST_SKIP() << "needs readelf (binutils) and dpkg";
  }
  if (testing::kSanitized) {
    GTEST_SKIP() << "a sanitizer tree's kaja also links the sanitizer's runtime, which no image "
                    "ships";
  }
  auto owners = packagesOfLinkedLibraries(std::string(kaja::test::binDir()) + "/kaja");
  ASSERT_GE(owners.size(), 5u);
  auto base = basePackages();
  ASSERT_TRUE(base.contains("libc6"));
  auto have = runtime().aptPackages();
  for (const auto& [lib, pkg] : owners) {
    ASSERT_FALSE(pkg.empty()) << "no Debian package owns " << lib;
    EXPECT_TRUE(have.contains(pkg) || base.contains(pkg))
        << "kaja links " << lib << " from " << pkg << ", which the runtime stage does not install";
  }
}

TEST_F(DockerfileTest, RunsAsAFixedNonRootUser) {
  auto users = runtime().all("USER");
  ASSERT_FALSE(users.empty());
  std::string user = users.back().rest;
  std::string uid = user.substr(0, user.find(':'));
  ASSERT_FALSE(uid.empty());
  // Numeric, so that Kubernetes' runAsNonRoot can check it without /etc/passwd.
  EXPECT_TRUE(std::all_of(uid.begin(), uid.end(), ::isdigit)) << user;
  EXPECT_NE(std::stol(uid), 0);
  std::string runs = runtime().runs();
  EXPECT_THAT(runs, HasSubstr("useradd --system --uid " + uid));
}

TEST_F(DockerfileTest, TheEntrypointIsTheScriptUnderTini) {
  auto entry = runtime().all("ENTRYPOINT");
  ASSERT_EQ(entry.size(), 1u);
  json argv = json::parse(entry.front().rest, nullptr, false);
  ASSERT_TRUE(argv.is_array()) << "ENTRYPOINT should be exec form: " << entry.front().rest;
  ASSERT_EQ(argv.size(), 3u);
  EXPECT_EQ(argv[0], "/usr/bin/tini");
  EXPECT_EQ(argv[2], "/usr/local/bin/kaja-entrypoint");
  EXPECT_EQ(copyDestination("docker/entrypoint.sh"), "/usr/local/bin/kaja-entrypoint");
}

TEST_F(DockerfileTest, KajaFindsItsMarketplaceAndBunBesideItsBinary) {
  auto kaja = copyDestination("/build/bin/kaja");
  ASSERT_TRUE(kaja.has_value());
  // core/paths.cpp: <dir of kaja>/../share/kaja/marketplace.
  auto shipped =
      (fs::path(*kaja).parent_path() / ".." / "share/kaja/marketplace").lexically_normal().string();
  EXPECT_EQ(copyDestination("marketplace/abilities"), shipped + "/abilities");
  EXPECT_EQ(copyDestination("marketplace/personas"), shipped + "/personas");
  // cli/context.cpp: bun in <shipped>/runtime/node_modules/.bin.
  EXPECT_EQ(copyDestination("marketplace/runtime/package-lock.json"), shipped + "/runtime/");
  std::string runs = runtime().runs();
  EXPECT_THAT(runs, HasSubstr("cd " + shipped + "/runtime && npm ci"));
  EXPECT_THAT(runs, HasSubstr("bun --version"));
}

TEST_F(DockerfileTest, EverythingItCopiesFromTheContextExists) {
  int sources = 0;
  for (const auto& stage : stages_) {
    for (const auto& copy : stage.all("COPY")) {
      if (copy.rest.starts_with("--from=")) continue;
      Strings w = words(copy.rest);
      for (std::size_t i = 0; i + 1 < w.size(); ++i) {
        if (w[i].starts_with("--")) continue;
        ++sources;
        EXPECT_TRUE(fs::exists(kSource + "/" + w[i])) << w[i];
      }
    }
  }
  EXPECT_GE(sources, 5);
}

TEST_F(DockerfileTest, TheIgnoreFileKeepsBuildTreesAndNodeModulesOut) {
  Strings lines = words(testing::readFile(kSource + "/docker/Dockerfile.dockerignore"));
  for (const char* pattern : {"build", "build-*", "**/node_modules", ".git"}) {
    EXPECT_THAT(lines, Contains(pattern));
  }
}

TEST_F(DockerfileTest, HadolintFindsNothing) {
  auto which = testing::runCommand({"/bin/sh", "-c", "command -v hadolint"}, kPath);
  if (which.exitCode != 0) {
    GTEST_SKIP() << "hadolint is not installed (Debian 12 does not package it), so the "
                    "Dockerfile is checked only by the tests above";
  }
  std::string hadolint = which.out.substr(0, which.out.find('\n'));
  auto lint = testing::runCommand({hadolint, kSource + "/docker/Dockerfile"}, kPath);
  EXPECT_EQ(lint.exitCode, 0) << lint.out << lint.err;
}

}  // namespace
}  // namespace kaja::docker
