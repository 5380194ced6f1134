// The read-only folders and backups of K15/K16 attacked the way a hostile model would, through
// `kaja call` and the real server-filesystem: other spellings of a folder, symlinks followed
// by "..", control characters, moves out of a backed-up folder and restores into a read-only
// one. After each attack the files on disk say whether it worked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::policy_attacks {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

const std::string kCafeNfc = "Caf\xc3\xa9";
const std::string kCafeNfd = "Cafe\xcc\x81";
const std::string kKelvinKids = "\xe2\x84\xaaids";  // U+212A KELVIN SIGN, then "ids"

class AttackTest : public ::testing::Test {
 protected:
  AttackTest() {
    root_ = fs::canonical(dir_.path()).string();
    home_ = root_ + "/home";
    std::string script = std::string(kaja::test::sourceDir()) +
                         "/tests/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/"
                         "index.js";
    dir_.write("market/abilities/fs/mcp.toml",
               "command = \"node\"\nargs = [\"" + script +
                   "\"]\nroots = true\napproval = \"writes\"\n"
                   "pathArgs = [\"path\", \"paths\", \"source\", \"destination\"]\n");
    dir_.write("market/personas/work.toml", R"(abilities = [{ name = "fs", roots = [
  "~/rw",
  { path = "~/)" + kCafeNfc + R"(", readOnly = true },
  { path = "~/Kids", readOnly = true },
  { path = "~/ro", readOnly = true },
  { path = "~/bk", backup = true },
  { path = "~/bk/locked", readOnly = true },
] }]
)");
    dir_.write("market/personas/open.toml",
               "abilities = [{ name = \"fs\", roots = [\"~/rw\", { path = \"~/bk\", backup = "
               "true }] }]\n");
    dir_.write("home/rw/keep.txt", "rw");
    dir_.write("home/rw/x/y/z/file", "z");
    dir_.write("home/" + kCafeNfc + "/menu.txt", "menu");
    dir_.write("home/Kids/k.txt", "kids");
    dir_.write("home/ro/f.txt", "ro");
    dir_.write("home/bk/" + kCafeNfc + "/menu.txt", "menu v1");
    dir_.write("home/bk/locked/l.txt", "locked v1");
    fs::create_directory_symlink("x/y", home_ + "/rw/link");
    fs::create_directory_symlink("x/y/z", home_ + "/rw/deep");
  }

  testing::CommandResult kaja(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    testing::RunOptions options;
    options.timeoutSeconds = 60;
    return testing::runCommandWith(
        argv,
        {"HOME=" + home_, "XDG_CONFIG_HOME=" + root_ + "/config",
         "XDG_DATA_HOME=" + root_ + "/data", "PATH=/usr/local/bin:/usr/bin:/bin",
         "KAJA_SHIPPED_MARKETPLACE=" + root_ + "/market"},
        options);
  }
  testing::CommandResult call(const std::string& tool, const json& arguments,
                              const std::string& persona = "work") {
    return kaja({"call", "--persona", persona, "--yes", "fs", tool, arguments.dump()});
  }
  // Every file and folder under `relative`, with each file's content.
  std::map<std::string, std::string> snapshot(const std::string& relative) {
    std::map<std::string, std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(home_ + "/" + relative)) {
      files[entry.path().string()] =
          entry.is_regular_file() ? testing::readFile(entry.path().string()) : "<dir>";
    }
    return files;
  }
  std::vector<std::string> copiesOf(const std::string& path) {
    std::vector<std::string> contents;
    std::string dir = root_ + "/data/kaja/backups" + path;
    if (!fs::is_directory(dir)) return contents;
    for (const auto& entry : fs::directory_iterator(dir)) {
      contents.push_back(testing::readFile(entry.path().string()));
    }
    std::sort(contents.begin(), contents.end());
    return contents;
  }
  void expectRefused(const testing::CommandResult& result, const std::string& what) {
    EXPECT_EQ(result.exitCode, 3) << what << "\nstdout: " << result.out
                                  << "\nstderr: " << result.err;
    EXPECT_THAT(result.err, HasSubstr("kaja: refused:")) << what;
    // One line: a quoted path cannot break the message.
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << what << result.err;
  }

  testing::TempDir dir_;
  std::string root_;
  std::string home_;
};

TEST_F(AttackTest, TheServerReallyMapsEquivalentNames) {
  // Without this, the refusals below would prove nothing: server-filesystem writes a path
  // spelled in NFD into the existing NFC folder.
  fs::create_directory(home_ + "/rw/" + kCafeNfc);
  auto result = call("write_file", {{"path", "~/rw/" + kCafeNfd + "/proof.txt"}, {"content", "p"}});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_EQ(testing::readFile(home_ + "/rw/" + kCafeNfc + "/proof.txt"), "p");
  EXPECT_FALSE(fs::exists(home_ + "/rw/" + kCafeNfd));
}

TEST_F(AttackTest, EquivalentSpellingsOfReadOnlyFoldersAreRefusedForEveryWritingTool) {
  auto before = snapshot(kCafeNfc);
  auto kidsBefore = snapshot("Kids");
  std::vector<std::string> spellings = {
      "~/" + kCafeNfd,
      "~/CAFE\xcc\x81",
      "~/" + kKelvinKids,
      "~/\xef\xbc\xabids",
      "~/KIDS",
      "~/\xd0\x9aids",  // Cyrillic К
      "~/rw/../" + kCafeNfd,
      "~/rw/link/../../" + kKelvinKids,
  };
  for (const auto& folder : spellings) {
    expectRefused(call("write_file", {{"path", folder + "/menu.txt"}, {"content", "owned"}}),
                  "write_file " + folder);
    expectRefused(call("write_file", {{"path", folder + "/new.txt"}, {"content", "owned"}}),
                  "write_file new " + folder);
    expectRefused(
        call("edit_file", {{"path", folder + "/menu.txt"},
                           {"edits", json::array({{{"oldText", "menu"}, {"newText", "owned"}}})}}),
        "edit_file " + folder);
    expectRefused(call("create_directory", {{"path", folder + "/made"}}),
                  "create_directory " + folder);
    expectRefused(
        call("move_file", {{"source", "~/rw/keep.txt"}, {"destination", folder + "/moved.txt"}}),
        "move_file into " + folder);
    expectRefused(
        call("move_file", {{"source", folder + "/menu.txt"}, {"destination", "~/rw/stolen.txt"}}),
        "move_file out of " + folder);
  }
  EXPECT_EQ(snapshot(kCafeNfc), before);
  EXPECT_EQ(snapshot("Kids"), kidsBefore);
  EXPECT_EQ(testing::readFile(home_ + "/rw/keep.txt"), "rw");
  EXPECT_FALSE(fs::exists(home_ + "/rw/stolen.txt"));
}

TEST_F(AttackTest, SymlinkFollowedByDotDotCannotReachAReadOnlyFolder) {
  for (const std::string& path : std::vector<std::string>{
           "~/rw/link/../../ro/f.txt", "~/rw/link/../../ro/new.txt", "~/rw/deep/../../ro/new.txt",
           "~/rw/deep/./..//../ro/new.txt", "~/rw/link/../../" + kKelvinKids + "/new.txt"}) {
    expectRefused(call("write_file", {{"path", path}, {"content", "owned"}}), path);
  }
  EXPECT_EQ(testing::readFile(home_ + "/ro/f.txt"), "ro");
  EXPECT_FALSE(fs::exists(home_ + "/ro/new.txt"));
  EXPECT_FALSE(fs::exists(home_ + "/Kids/new.txt"));
}

TEST_F(AttackTest, AHardLinkInAWritableFolderCannotCarryAWriteToAReadOnlyFile) {
  // The same file under a second name in ~/rw: a server that writes in place would change
  // ~/ro/f.txt. Every writing tool and spelling is refused, whatever the server would do.
  ASSERT_EQ(::link((home_ + "/ro/f.txt").c_str(), (home_ + "/rw/f.txt").c_str()), 0);
  expectRefused(call("write_file", {{"path", "~/rw/f.txt"}, {"content", "owned"}}), "write");
  expectRefused(call("edit_file", {{"path", home_ + "/rw/./f.txt"},
                                   {"edits", {{{"oldText", "ro"}, {"newText", "owned"}}}}}),
                "edit");
  expectRefused(call("write_file", {{"path", "~/rw/link/../../f.txt"}, {"content", "owned"}}),
                "through a symlink");
  auto moved = call("move_file", {{"source", "~/rw/keep.txt"}, {"destination", "~/rw/f.txt"}});
  expectRefused(moved, "move over it");
  EXPECT_THAT(moved.err, HasSubstr("K15 linked file"));
  EXPECT_EQ(testing::readFile(home_ + "/ro/f.txt"), "ro");
  EXPECT_EQ(testing::readFile(home_ + "/rw/keep.txt"), "rw");
}

TEST_F(AttackTest, ControlCharactersInPathsAreRefusedOnOneLine) {
  for (const std::string& name : {std::string("a\nb.txt"), std::string("a\0b.txt", 7),
                                  std::string("\x1b]0;owned\x07.txt"), std::string("a\rb.txt"),
                                  std::string("a\xc2\x9b"
                                              "31m.txt"),
                                  std::string("\xe2\x80\xae"
                                              "txt.sh")}) {
    auto result = call("write_file", {{"path", "~/rw/" + name}, {"content", "x"}});
    expectRefused(result, "control character");
    EXPECT_THAT(result.err, HasSubstr("control character"));
    EXPECT_EQ(result.err.find('\x1b'), std::string::npos);
  }
  EXPECT_EQ(snapshot("rw").size(), 7u);  // keep.txt, x, x/y, x/y/z, x/y/z/file, link, deep
}

TEST_F(AttackTest, EquivalentSpellingOfABackedUpFileStillKeepsACopy) {
  auto result =
      call("write_file", {{"path", "~/bk/" + kCafeNfd + "/menu.txt"}, {"content", "menu v2"}});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_EQ(testing::readFile(home_ + "/bk/" + kCafeNfc + "/menu.txt"), "menu v2");
  EXPECT_THAT(copiesOf(home_ + "/bk/" + kCafeNfc + "/menu.txt"), ::testing::ElementsAre("menu v1"));
}

TEST_F(AttackTest, MovingAFolderOutOfABackedUpFolderCopiesItFirst) {
  dir_.write("home/bk/proj/a.txt", "A1");
  dir_.write("home/bk/proj/sub/b.txt", "B1");
  fs::create_symlink(home_ + "/nowhere", home_ + "/bk/proj/dangling");
  fs::create_symlink("/dev/zero", home_ + "/bk/proj/zero");
  auto moved = call("move_file", {{"source", "~/bk/proj"}, {"destination", "~/rw/proj"}});
  ASSERT_EQ(moved.exitCode, 0) << moved.err;
  ASSERT_TRUE(fs::exists(home_ + "/rw/proj/sub/b.txt"));
  // Later writes to the moved files are outside the backed-up folder; the copies remain.
  ASSERT_EQ(call("write_file", {{"path", "~/rw/proj/a.txt"}, {"content", "A2"}}).exitCode, 0);
  EXPECT_THAT(copiesOf(home_ + "/bk/proj/a.txt"), ::testing::ElementsAre("A1"));
  EXPECT_THAT(copiesOf(home_ + "/bk/proj/sub/b.txt"), ::testing::ElementsAre("B1"));
  // A single file moved out is copied too.
  dir_.write("home/bk/single.txt", "S1");
  ASSERT_EQ(
      call("move_file", {{"source", "~/bk/single.txt"}, {"destination", "~/rw/s.txt"}}).exitCode,
      0);
  EXPECT_THAT(copiesOf(home_ + "/bk/single.txt"), ::testing::ElementsAre("S1"));
}

TEST_F(AttackTest, RestoreCannotWriteIntoAReadOnlyFolderInsideABackedUpOne) {
  // While ~/bk/locked was writable (persona "open"), a write kept a copy of l.txt.
  ASSERT_EQ(call("write_file", {{"path", "~/bk/locked/l.txt"}, {"content", "locked v2"}}, "open")
                .exitCode,
            0);
  std::string copies = root_ + "/data/kaja/backups" + home_ + "/bk/locked/l.txt";
  ASSERT_TRUE(fs::is_directory(copies));
  std::string stamp = fs::directory_iterator(copies)->path().filename().string();
  // Under "work" the folder is read-only: a restore is a write and is refused.
  json restore = {{"path", "~/bk/locked/l.txt"}, {"stamp", stamp}};
  auto refused =
      kaja({"call", "--persona", "work", "--yes", "kaja", "restore_backup", restore.dump()});
  expectRefused(refused, "restore into read-only");
  EXPECT_THAT(refused.err, HasSubstr("read-only folder ~/bk/locked"));
  EXPECT_EQ(testing::readFile(home_ + "/bk/locked/l.txt"), "locked v2");
  // Listing is a read: allowed, and both built-in tools leave an audit row.
  auto listed = kaja({"call", "--persona", "work", "kaja", "list_backups",
                      json({{"path", "~/bk/locked/l.txt"}}).dump()});
  EXPECT_EQ(listed.exitCode, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr(stamp));
  std::string audit = testing::readFile(root_ + "/data/kaja/audit.jsonl");
  EXPECT_THAT(audit, HasSubstr("\"tool\":\"list_backups\""));
  EXPECT_THAT(audit, HasSubstr("\"tool\":\"restore_backup\""));
  EXPECT_THAT(audit, HasSubstr("\"decision\":\"refused\""));
}

TEST_F(AttackTest, MovingAFolderThatHoldsAReadOnlyFolderIsRefused) {
  dir_.write("market/personas/nest.toml", R"(abilities = [{ name = "fs", roots = [
  "~/notes", "~/work", "~/top",
  { path = "~/notes/archive", readOnly = true },
  { path = "~/top/mid/inner", readOnly = true },
] }]
)");
  dir_.write("home/notes/archive/old.txt", "do not touch");
  dir_.write("home/top/mid/inner/s.txt", "inner");
  fs::create_directories(home_ + "/work");
  expectRefused(call("move_file", {{"source", "~/notes"}, {"destination", "~/work/notes"}}, "nest"),
                "move a root holding a read-only folder");
  expectRefused(call("move_file", {{"source", "~/top/mid"}, {"destination", "~/top/mid2"}}, "nest"),
                "move a folder holding a read-only folder");
  expectRefused(call("move_file", {{"source", "~/TOP/mid"}, {"destination", "~/top/mid2"}}, "nest"),
                "the same through another spelling");
  EXPECT_EQ(testing::readFile(home_ + "/notes/archive/old.txt"), "do not touch");
  EXPECT_EQ(testing::readFile(home_ + "/top/mid/inner/s.txt"), "inner");
  EXPECT_FALSE(fs::exists(home_ + "/work/notes"));
  // A folder beside the read-only one still moves.
  dir_.write("home/notes/drafts/d.txt", "d");
  auto beside =
      call("move_file", {{"source", "~/notes/drafts"}, {"destination", "~/work/d"}}, "nest");
  EXPECT_EQ(beside.exitCode, 0) << beside.err;
}

TEST_F(AttackTest, MovingAFolderThatHoldsABackedUpFolderCopiesItFirst) {
  dir_.write("market/personas/keep.toml", R"(abilities = [{ name = "fs", roots = [
  "~/proj", { path = "~/proj/mid/keep", backup = true },
] }]
)");
  dir_.write("home/proj/mid/keep/doc.txt", "precious v1");
  auto moved =
      call("move_file", {{"source", "~/proj/mid"}, {"destination", "~/proj/mid2"}}, "keep");
  ASSERT_EQ(moved.exitCode, 0) << moved.err;
  ASSERT_EQ(call("write_file", {{"path", "~/proj/mid2/keep/doc.txt"}, {"content", "gone"}}, "keep")
                .exitCode,
            0);
  EXPECT_THAT(copiesOf(home_ + "/proj/mid/keep/doc.txt"), ::testing::ElementsAre("precious v1"));
}

TEST_F(AttackTest, KajasOwnFoldersAreNeverWrittenEvenInsideAWritableFolder) {
  // The persona gives the whole tree that holds kaja's settings and data.
  dir_.write("market/personas/all.toml", "abilities = [{ name = \"fs\", roots = [\"" + root_ +
                                             "\", { path = \"~/bk\", backup = true }] }]\n");
  ASSERT_EQ(call("write_file", {{"path", "~/bk/p.txt"}, {"content", "v2"}}, "all").exitCode, 0);
  std::string audit = root_ + "/data/kaja/audit.jsonl";
  std::string auditBefore = testing::readFile(audit);
  ASSERT_FALSE(auditBefore.empty());
  for (const std::string& path :
       {audit, root_ + "/data/kaja/backups" + home_ + "/bk/p.txt/x",
        root_ + "/config/kaja/marketplace/personas/all.toml", root_ + "/home/../data/kaja/new",
        root_ + "/DATA/kaja/audit.jsonl"}) {
    auto result = call("write_file", {{"path", path}, {"content", "owned"}}, "all");
    expectRefused(result, path);
    EXPECT_THAT(result.err, HasSubstr("kaja's own folder")) << path;
  }
  expectRefused(
      call("move_file", {{"source", root_ + "/data"}, {"destination", root_ + "/d2"}}, "all"),
      "moving the folder that holds kaja's data");
  EXPECT_EQ(testing::readFile(audit).substr(0, auditBefore.size()), auditBefore);
  EXPECT_FALSE(fs::exists(root_ + "/config/kaja/marketplace"));
  // Elsewhere in the same folder, writes go on.
  EXPECT_EQ(call("write_file", {{"path", "~/rw/fine.txt"}, {"content", "ok"}}, "all").exitCode, 0);
}

// server-filesystem resolves a relative path from the first folder it was given on its command
// line, not from its working folder: a relative path that lands in kaja's folders from there is
// refused, for reads as for writes.
TEST_F(AttackTest, ARelativePathIsJudgedFromTheFoldersTheServerWasGiven) {
  std::string script = std::string(kaja::test::sourceDir()) +
                       "/tests/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/"
                       "index.js";
  dir_.write("market/abilities/fsargs/mcp.toml",
             "command = \"node\"\nargs = [\"" + script + "\", \"" + root_ +
                 "\"]\napproval = \"never\"\n"
                 "pathArgs = [\"path\", \"paths\", \"source\", \"destination\"]\n");
  dir_.write("market/personas/args.toml", "abilities = [\"fsargs\"]\n");
  dir_.write("config/kaja/note.txt", "SECRET-CANARY");
  dir_.write("home/rw/plain.txt", "plain");
  const auto run = [&](const std::string& tool, const json& arguments) {
    return kaja({"call", "--persona", "args", "--yes", "fsargs", tool, arguments.dump()});
  };
  for (const std::string& path :
       {"config/kaja/note.txt", "./config/kaja/note.txt", "home/../config/kaja/note.txt"}) {
    auto read = run("read_text_file", {{"path", path}});
    expectRefused(read, path);
    EXPECT_THAT(read.out, Not(HasSubstr("SECRET-CANARY"))) << path;
  }
  expectRefused(run("write_file", {{"path", "data/kaja/planted.txt"}, {"content", "x"}}),
                "a relative write into kaja's data");
  EXPECT_FALSE(fs::exists(root_ + "/data/kaja/planted.txt"));
  // Other relative paths in the same folder are read as before.
  auto plain = run("read_text_file", {{"path", "home/rw/plain.txt"}});
  EXPECT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_THAT(plain.out, HasSubstr("plain"));
}

// Found by the replay of an outside attack: a server whose working folder is inside kaja's
// folders opens their files by bare names ("note.txt"), which no check of the arguments can
// tell from words. Such a server gets no call at all.
TEST_F(AttackTest, AServerWorkingInsideKajasFoldersGetsNoCall) {
  std::string script = std::string(kaja::test::sourceDir()) +
                       "/tests/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/"
                       "index.js";
  dir_.write("config/kaja/note.txt", "SECRET-CANARY");
  dir_.write("market/abilities/incfg/mcp.toml", "command = \"node\"\nargs = [\"" + script +
                                                    "\", \"" + root_ +
                                                    "\"]\napproval = \"never\"\ncwd = \"" + root_ +
                                                    "/config/kaja\"\n"
                                                    "pathArgs = [\"path\"]\n");
  dir_.write("market/personas/incfg.toml", "abilities = [\"incfg\"]\n");
  auto result =
      kaja({"call", "--persona", "incfg", "--yes", "incfg", "list_allowed_directories", "{}"});
  expectRefused(result, "a call to a server working in kaja's settings");
  EXPECT_THAT(result.err, HasSubstr("The working folder (cwd) of incfg"));
  EXPECT_THAT(result.out, Not(HasSubstr("SECRET-CANARY")));
}

TEST_F(AttackTest, ArgumentsNestedTooDeepAreRefusedNotACrash) {
  for (size_t depth : {65UL, 1000UL, 60000UL}) {
    std::string nested = std::string(depth, '[') + std::string(depth, ']');
    std::string arguments = R"({"path": "~/rw/deep.txt", "content": "x", "a": )" + nested + "}";
    auto result = kaja({"call", "--persona", "work", "--yes", "fs", "write_file", arguments});
    expectRefused(result, "depth " + std::to_string(depth));
    EXPECT_THAT(result.err, HasSubstr("nest deeper than 64 levels"));
  }
  EXPECT_FALSE(fs::exists(home_ + "/rw/deep.txt"));
  std::string audit = testing::readFile(root_ + "/data/kaja/audit.jsonl");
  EXPECT_THAT(audit, HasSubstr("arguments too deep"));
}

}  // namespace
}  // namespace kaja::policy_attacks
