// kaja docker mounts, and the folders of abilities kaja runs with docker run (K25).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class DockerMountsCliTest : public ::testing::Test {
 protected:
  DockerMountsCliTest() {
    home_ = fs::canonical(root_.path()).string() + "/home";
    for (const char* folder : {"shared", "docs/drafts", "real", "sp ace", "a:b", "c,d", "notes"}) {
      fs::create_directories(home_ + "/" + folder);
    }
    fs::create_symlink(home_ + "/real", home_ + "/link");
    root_.write("home/afile", "not a folder");
    root_.write("market/abilities/fs/mcp.toml",
                "description = \"files\"\ncommand = \"/bin/cat\"\nroots = true\n");
    root_.write("market/abilities/img/mcp.toml",
                "description = \"files in a container\"\npackage = { docker = "
                "\"example/files:1.0\" }\nroots = true\n");
    root_.write("market/personas/one.toml", R"(abilities = [
  { name = "fs", roots = [
    { path = "~/shared", readOnly = true },
    { path = "~/docs", readOnly = true },
    "~/link",
    "~/missing",
    "~/afile",
  ] },
  { name = "img", roots = [{ path = "~/docs", readOnly = true }] },
])");
    root_.write("market/personas/two.toml", R"(abilities = [
  { name = "fs", roots = ["~/shared", { path = "~/docs", readOnly = true }, "~/docs/drafts",
                          "~/sp ace"] },
  { name = "img", roots = ["~/notes"] },
])");
    // A docker client that answers, as an engine would; PyPI and Docker are absent here.
    root_.writeScript("stubs/docker", "echo 27.0.0");
  }
  std::vector<std::string> env() const {
    return {"HOME=" + home_,
            "XDG_CONFIG_HOME=" + root_.path() + "/config",
            "XDG_DATA_HOME=" + root_.path() + "/data",
            "KAJA_SHIPPED_MARKETPLACE=" + root_.path() + "/market",
            "PATH=" + root_.path() + "/stubs",
            "NO_COLOR=1"};
  }
  testing::CommandResult kaja(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::runCommand(argv, env());
  }
  testing::TempDir root_;
  std::string home_;
};

TEST_F(DockerMountsCliTest, EachFolderAtItsOwnPathReadOnlyOnlyWhenEveryPersonaSaysSo) {
  auto result = kaja({"docker", "mounts"});
  std::vector<std::string> lines;
  std::string line;
  for (char c : result.out) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  // The link is mounted at its own path, from the folder it points to.
  EXPECT_THAT(lines, ElementsAre("-v " + home_ + "/docs:" + home_ + "/docs:ro",
                                 "-v " + home_ + "/docs/drafts:" + home_ + "/docs/drafts",
                                 "-v " + home_ + "/real:" + home_ + "/link",
                                 "-v " + home_ + "/notes:" + home_ + "/notes",
                                 "-v " + home_ + "/shared:" + home_ + "/shared"));
  // A space would split `$(kaja docker mounts)` into other options: refused by name.
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_THAT(result.err, HasSubstr("cannot mount " + home_ + "/sp ace (persona \"two\")"));
  EXPECT_THAT(result.err, HasSubstr("skipped ~/missing (persona \"one\"): it is not an existing "
                                    "folder; create it, then run this again."));
  EXPECT_THAT(result.err, HasSubstr("skipped ~/afile"));
}

TEST_F(DockerMountsCliTest, AFolderVCannotCarryIsRefusedByNameAndTheRestStillPrinted) {
  root_.write("market/personas/three.toml",
              "abilities = [{ name = \"fs\", roots = [\"~/a:b\", \"~/c,d\"] }]\n");
  auto result = kaja({"docker", "mounts"});
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_THAT(result.err, HasSubstr("cannot mount " + home_ + "/a:b (persona \"three\") with -v"));
  EXPECT_THAT(result.err, HasSubstr("cannot mount " + home_ + "/c,d (persona \"three\") with -v"));
  EXPECT_THAT(result.err, HasSubstr("--mount type=bind"));
  EXPECT_THAT(result.out, HasSubstr(home_ + "/docs:" + home_ + "/docs:ro"));
  EXPECT_THAT(result.out, Not(HasSubstr("a:b")));
}

TEST_F(DockerMountsCliTest, NoFolderNameBecomesAnotherDockerOption) {
  for (const char* name :
       {"p --privileged --pid=host x", "tab\there", "star*", "q?", "br[1]", "new\nline"}) {
    fs::create_directories(home_ + "/" + name);
  }
  root_.write("market/personas/three.toml", R"(abilities = [{ name = "fs", roots = [
    { path = "~/p --privileged --pid=host x", readOnly = true }, "~/tab\there", "~/star*",
    "~/q?", "~/br[1]", "~/new\nline"] }])");
  auto result = kaja({"docker", "mounts"});
  EXPECT_EQ(result.exitCode, 1);
  // What the shell would pass docker from $(kaja docker mounts): only -v and its values.
  std::vector<std::string> words;
  std::string word;
  for (char c : result.out + "\n") {
    if (c == ' ' || c == '\t' || c == '\n') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  ASSERT_EQ(words.size() % 2, 0u) << result.out;
  for (size_t i = 0; i < words.size(); i += 2) {
    EXPECT_EQ(words[i], "-v");
    EXPECT_TRUE(words[i + 1].starts_with("/")) << words[i + 1];
    EXPECT_EQ(words[i + 1].find_first_of("*?["), std::string::npos) << words[i + 1];
  }
  EXPECT_THAT(result.out, Not(HasSubstr("privileged")));
  EXPECT_THAT(result.err, HasSubstr("cannot mount " + home_ + "/p --privileged --pid=host x"));
  EXPECT_THAT(result.err, HasSubstr("cannot mount " + home_ + "/new\\nline"));
}

TEST_F(DockerMountsCliTest, ALinkInsideAnotherMountedFolderIsRefused) {
  fs::create_symlink("/etc", home_ + "/shared/etc");
  root_.write(
      "market/personas/three.toml",
      "abilities = [{ name = \"fs\", roots = [{ path = \"~/shared/etc\", readOnly = true }] }]\n");
  auto result = kaja({"docker", "mounts"});
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_THAT(result.err, HasSubstr("cannot mount " + home_ +
                                    "/shared/etc: it is a symlink inside "
                                    "another mounted folder"));
  EXPECT_THAT(result.out, Not(HasSubstr("/etc:")));
  EXPECT_THAT(result.out, HasSubstr(home_ + "/shared:" + home_ + "/shared"));
}

TEST_F(DockerMountsCliTest, JsonNamesWhoGivesEachFolder) {
  auto result = kaja({"docker", "mounts", "--json"});
  EXPECT_EQ(result.exitCode, 1) << result.err;  // the folder with a space
  json out = json::parse(result.out);
  ASSERT_EQ(out["mounts"].size(), 5u) << out.dump(2);
  const json& docs = out["mounts"][0];
  EXPECT_EQ(docs["path"], home_ + "/docs");
  EXPECT_EQ(docs["readOnly"], true);
  EXPECT_EQ(docs["personas"], json::array({"one", "two"}));
  EXPECT_EQ(docs["abilities"], json::array({"fs", "img"}));
  const json& link = out["mounts"][2];
  EXPECT_EQ(link["path"], home_ + "/link");
  EXPECT_EQ(link["source"], home_ + "/real");
  const json& shared = out["mounts"][4];
  EXPECT_EQ(shared["path"], home_ + "/shared");
  EXPECT_EQ(shared["readOnly"], false);
  EXPECT_EQ(out["args"][0], "-v");
  EXPECT_EQ(out["args"][1], home_ + "/docs:" + home_ + "/docs:ro");
  EXPECT_EQ(out["warnings"].size(), 2u);
  EXPECT_EQ(out["refused"].size(), 1u);
}

TEST_F(DockerMountsCliTest, ADockerRunAbilityGetsTheFoldersPersonasGiveIt) {
  auto result = kaja({"abilities", "--json"});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  for (const auto& row : json::parse(result.out)) {
    if (row["name"] != "img") continue;
    EXPECT_EQ(row["runner"], "docker") << row.dump();
    // Only its own folders: docs (read-only for it in every persona) and notes.
    EXPECT_THAT(row["runs"].get<std::string>(),
                HasSubstr("-v " + home_ + "/docs:" + home_ + "/docs:ro -v " + home_ +
                          "/notes:" + home_ + "/notes example/files:1.0"));
    EXPECT_THAT(row["runs"].get<std::string>(), Not(HasSubstr("shared")));
    return;
  }
  FAIL() << "img is not listed: " << result.out;
}

TEST_F(DockerMountsCliTest, ABrokenPersonaIsNamedAndTheOthersStillCount) {
  root_.write("market/personas/broken.toml", "abilities = [\n");
  auto result = kaja({"docker", "mounts"});
  EXPECT_THAT(result.err,
              HasSubstr("persona \"broken\" is broken, so its folders are not mounted"));
  EXPECT_THAT(result.out, HasSubstr(home_ + "/docs:" + home_ + "/docs:ro"));
}

TEST_F(DockerMountsCliTest, UsageErrorsSaySo) {
  auto result = kaja({"docker"});
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_THAT(result.err, HasSubstr("usage: kaja docker mounts [--json]"));
  EXPECT_EQ(kaja({"docker", "mounts", "--jsn"}).exitCode, 2);
}

}  // namespace
}  // namespace kaja
