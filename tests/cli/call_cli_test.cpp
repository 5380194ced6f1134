// `kaja tools` and `kaja call` end to end against the real server-filesystem, with a
// persona that has a writable folder, a read-only folder holding a writable one, and a
// backed-up folder.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

class CallCliTest : public ::testing::Test {
 protected:
  CallCliTest() {
    home_ = root_.path() + "/home";
    std::string script = std::string(kaja::test::sourceDir()) +
                         "/tests/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/"
                         "index.js";
    root_.write("market/abilities/fs/mcp.toml",
                "command = \"node\"\nargs = [\"" + script +
                    "\"]\nroots = true\napproval = \"writes\"\n"
                    "pathArgs = [\"path\", \"paths\", \"source\", \"destination\"]\n");
    root_.write("market/personas/work.toml", R"(abilities = [{ name = "fs", roots = [
  "~/rw",
  { path = "~/ro", readOnly = true },
  "~/ro/inner",
  { path = "~/bk", backup = true },
] }]
)");
    root_.write(
        "market/personas/reader.toml",
        "abilities = [{ name = \"fs\", roots = [{ path = \"~/ro\", readOnly = true }] }]\n");
    root_.write("home/rw/keep.txt", "rw");
    root_.write("home/ro/secret.txt", "read only");
    root_.write("home/ro/inner/ok.txt", "inner");
    root_.write("home/bk/notes.txt", "version 1");
    fs::create_directory_symlink(home_ + "/ro", home_ + "/rw/link");
  }

  testing::CommandResult kaja(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::runCommand(
        argv, {"HOME=" + home_, "XDG_CONFIG_HOME=" + root_.path() + "/config",
               "XDG_DATA_HOME=" + root_.path() + "/data", "PATH=/usr/local/bin:/usr/bin:/bin",
               "KAJA_SHIPPED_MARKETPLACE=" + root_.path() + "/market"});
  }
  testing::CommandResult write(const std::string& path, const std::string& content,
                               bool yes = true) {
    json args = {{"path", path}, {"content", content}};
    std::vector<std::string> argv = {"call", "--persona", "work"};
    if (yes) argv.push_back("--yes");
    argv.insert(argv.end(), {"fs", "write_file", args.dump()});
    return kaja(argv);
  }
  std::string read(const std::string& relative) {
    return testing::readFile(home_ + "/" + relative);
  }

  testing::TempDir root_;
  std::string home_;
};

TEST_F(CallCliTest, ToolsListsWhatEachPersonaOffers) {
  auto work = kaja({"tools", "--persona", "work", "--json"});
  ASSERT_EQ(work.exitCode, 0) << work.err;
  json listed = json::parse(work.out);
  std::vector<std::string> names;
  for (const auto& tool : listed["tools"]) names.push_back(tool["name"]);
  EXPECT_THAT(names, ::testing::Contains("mcp__fs__write_file"));
  EXPECT_THAT(names, ::testing::Contains("mcp__fs__read_text_file"));
  EXPECT_THAT(names, ::testing::Contains("mcp__kaja__list_backups"));
  EXPECT_THAT(names, ::testing::Contains("mcp__kaja__restore_backup"));
  for (const auto& tool : listed["tools"]) {
    if (tool["name"] == "mcp__fs__read_text_file") EXPECT_EQ(tool["readOnly"], true);
    if (tool["name"] == "mcp__fs__write_file") EXPECT_EQ(tool["readOnly"], false);
    EXPECT_GT(tool["schemaChars"].get<int>(), 10);
  }

  // A persona whose only folder is read-only never sees a writing tool (K15).
  auto reader = kaja({"tools", "--persona", "reader", "--json"});
  ASSERT_EQ(reader.exitCode, 0) << reader.err;
  json readerTools = json::parse(reader.out);
  for (const auto& tool : readerTools["tools"]) {
    EXPECT_EQ(tool["readOnly"], true) << tool["name"];
    EXPECT_NE(tool["name"], "mcp__fs__write_file");
  }
  bool droppedWrite = false;
  for (const auto& drop : readerTools["dropped"]) {
    droppedWrite |= drop["tool"] == "write_file";
  }
  EXPECT_TRUE(droppedWrite);
  auto refused = kaja({"call", "--persona", "reader", "--yes", "fs", "write_file",
                       json({{"path", home_ + "/ro/x.txt"}, {"content", "x"}}).dump()});
  EXPECT_EQ(refused.exitCode, 3);
  EXPECT_FALSE(fs::exists(home_ + "/ro/x.txt"));
}

TEST_F(CallCliTest, ReadOnlyFoldersRefuseBeforeAnyPrompt) {
  // Without --yes and without a terminal, an allowed write would be declined for want of
  // approval; a read-only one must be refused by the folder rule first.
  auto result = write(home_ + "/ro/secret.txt", "overwritten", false);
  EXPECT_EQ(result.exitCode, 3);
  EXPECT_THAT(result.err, HasSubstr("kaja: refused:"));
  EXPECT_THAT(result.err, HasSubstr("read-only"));
  EXPECT_THAT(result.err, Not(HasSubstr("needs approval")));
  EXPECT_EQ(read("ro/secret.txt"), "read only");

  auto declined = write(home_ + "/rw/new.txt", "x", false);
  EXPECT_EQ(declined.exitCode, 3);
  EXPECT_THAT(declined.err, HasSubstr("needs approval"));
  EXPECT_FALSE(fs::exists(home_ + "/rw/new.txt"));
}

TEST_F(CallCliTest, WritesGoWhereTheNearestFolderAllows) {
  auto inner = write(home_ + "/ro/inner/new.txt", "nested ok");
  EXPECT_EQ(inner.exitCode, 0) << inner.err;
  EXPECT_EQ(read("ro/inner/new.txt"), "nested ok");

  auto rw = write("~/rw/tilde.txt", "tilde ok");
  EXPECT_EQ(rw.exitCode, 0) << rw.err;
  EXPECT_EQ(read("rw/tilde.txt"), "tilde ok");

  struct Case {
    std::string path;
    std::string why;
  };
  for (const Case& c : {Case{home_ + "/rw/link/secret.txt", "symlink into the read-only folder"},
                        Case{home_ + "/rw/../ro/secret.txt", "dot-dot escape"},
                        Case{"rw/relative.txt", "relative path"},
                        Case{home_ + "/elsewhere.txt", "outside every folder"},
                        Case{home_ + "/rw/link/sub/new.txt", "new file under the symlink"}}) {
    auto result = write(c.path, "bad");
    EXPECT_EQ(result.exitCode, 3) << c.why << ": " << result.err;
    EXPECT_THAT(result.err, HasSubstr("kaja: refused:")) << c.why;
  }
  EXPECT_EQ(read("ro/secret.txt"), "read only");
  EXPECT_FALSE(fs::exists(home_ + "/elsewhere.txt"));

  auto audit = testing::readFile(root_.path() + "/data/kaja/audit.jsonl");
  EXPECT_THAT(audit, HasSubstr("\"decision\":\"refused\""));
  EXPECT_THAT(audit, HasSubstr("\"decision\":\"allowed\""));
  EXPECT_THAT(audit, Not(HasSubstr("nested ok")));
  EXPECT_THAT(audit, Not(HasSubstr("secret.txt")));
}

TEST_F(CallCliTest, BackupBeforeWriteAndRestoreThatCanBeUndone) {
  auto first = write(home_ + "/bk/notes.txt", "version 2");
  ASSERT_EQ(first.exitCode, 0) << first.err;
  EXPECT_EQ(read("bk/notes.txt"), "version 2");
  std::string copies = root_.path() + "/data/kaja/backups" + home_ + "/bk/notes.txt";
  ASSERT_TRUE(fs::is_directory(copies));
  std::vector<fs::path> kept;
  for (const auto& entry : fs::directory_iterator(copies)) kept.push_back(entry.path());
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(testing::readFile(kept[0].string()), "version 1");

  auto listed = kaja({"call", "--persona", "work", "kaja", "list_backups",
                      json({{"path", "~/bk/notes.txt"}}).dump()});
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  std::string stamp = kept[0].filename().string();
  EXPECT_THAT(listed.out, HasSubstr(stamp));

  // A restore always asks: without a person or --yes it is declined.
  json restoreArgs = {{"path", "~/bk/notes.txt"}, {"stamp", stamp}};
  auto declined = kaja({"call", "--persona", "work", "kaja", "restore_backup", restoreArgs.dump()});
  EXPECT_EQ(declined.exitCode, 3);
  EXPECT_EQ(read("bk/notes.txt"), "version 2");

  auto restored =
      kaja({"call", "--persona", "work", "--yes", "kaja", "restore_backup", restoreArgs.dump()});
  ASSERT_EQ(restored.exitCode, 0) << restored.err;
  EXPECT_EQ(read("bk/notes.txt"), "version 1");
  kept.clear();
  for (const auto& entry : fs::directory_iterator(copies)) kept.push_back(entry.path());
  EXPECT_EQ(kept.size(), 2u);  // the replaced "version 2" was kept too

  auto outside = kaja({"call", "--persona", "work", "kaja", "list_backups",
                       json({{"path", "~/rw/keep.txt"}}).dump()});
  EXPECT_EQ(outside.exitCode, 3);
  EXPECT_THAT(outside.err, HasSubstr("outside every folder"));
}

TEST_F(CallCliTest, UsageAndConnectErrorsHaveTheirExitCodes) {
  EXPECT_EQ(kaja({"call", "--persona", "work", "fs"}).exitCode, 2);
  EXPECT_EQ(kaja({"call", "--persona", "work", "fs", "read_text_file", "[1]"}).exitCode, 2);
  // A tool or ability that does not exist is a typo, not a refusal.
  auto missing = kaja({"call", "--persona", "work", "fs", "no_such_tool"});
  EXPECT_EQ(missing.exitCode, 2);
  EXPECT_THAT(missing.err, HasSubstr("no tool named \"no_such_tool\""));
  auto notInPersona = kaja({"call", "--persona", "work", "other", "x"});
  EXPECT_EQ(notInPersona.exitCode, 2);
  EXPECT_THAT(notInPersona.err, HasSubstr("there is no ability named \"other\""));
  auto read = kaja({"call", "--persona", "work", "fs", "read_text_file",
                    json({{"path", home_ + "/ro/secret.txt"}}).dump()});
  EXPECT_EQ(read.exitCode, 0) << read.err;
  EXPECT_THAT(read.out, HasSubstr("read only"));
  auto toolError = kaja({"call", "--persona", "work", "fs", "read_text_file",
                         json({{"path", home_ + "/rw/absent.txt"}}).dump()});
  EXPECT_EQ(toolError.exitCode, 1) << toolError.out << toolError.err;
}

}  // namespace
}  // namespace kaja::cli
