// `kaja backups`, `kaja backups restore` and `kaja audit` end to end: real writes through
// `kaja call` to the real server-filesystem in a persona with a backed-up folder, then the
// copies and the audit rows those calls left, read back by the real binary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

class BackupsAuditCliTest : public ::testing::Test {
 protected:
  BackupsAuditCliTest() {
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
  { path = "~/bk", backup = true },
] }]
)");
    root_.write("home/rw/keep.txt", "rw");
    root_.write("home/ro/secret.txt", "read only");
    root_.write("home/bk/notes.txt", "version 1");
    audit_ = root_.path() + "/data/kaja/audit.jsonl";
  }

  std::vector<std::string> env() const {
    return {"HOME=" + home_,
            "XDG_CONFIG_HOME=" + root_.path() + "/config",
            "XDG_DATA_HOME=" + root_.path() + "/data",
            "PATH=/usr/local/bin:/usr/bin:/bin",
            "KAJA_SHIPPED_MARKETPLACE=" + root_.path() + "/market",
            "TZ=UTC",
            "NO_COLOR=1"};
  }
  testing::CommandResult kaja(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::runCommand(argv, env());
  }
  // Runs kaja in `dir`, for paths relative to the working folder.
  testing::CommandResult kajaIn(const std::string& dir, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", dir,
                                     std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::runCommand(argv, env());
  }
  testing::CommandResult call(const std::string& tool, const json& args, bool asJson = false) {
    std::vector<std::string> argv = {"call", "--persona", "work", "--yes"};
    if (asJson) argv.push_back("--json");
    argv.insert(argv.end(), {"fs", tool, args.dump()});
    return kaja(argv);
  }
  testing::CommandResult write(const std::string& path, const std::string& content,
                               bool asJson = false) {
    return call("write_file", {{"path", path}, {"content", content}}, asJson);
  }
  json backupsJson(const std::vector<std::string>& more = {}) const {
    std::vector<std::string> args = {"backups", "--json"};
    args.insert(args.end(), more.begin(), more.end());
    auto listed = kaja(args);
    EXPECT_EQ(listed.exitCode, 0) << listed.err;
    return json::parse(listed.out, nullptr, false);
  }
  static std::vector<json> jsonLines(const std::string& text) {
    std::vector<json> rows;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) rows.push_back(json::parse(line));
    return rows;
  }
  std::string read(const std::string& relative) const {
    return testing::readFile(home_ + "/" + relative);
  }

  testing::TempDir root_;
  std::string home_, audit_;
};

TEST_F(BackupsAuditCliTest, AWriteThatKeptACopySaysSoOnStderrAndInJson) {
  const std::string notes = home_ + "/bk/notes.txt";
  auto first = write(notes, "version 2");
  ASSERT_EQ(first.exitCode, 0) << first.err;
  EXPECT_THAT(first.err,
              HasSubstr("kaja: kept a copy of " + notes +
                        " before the call (kaja backups restore " + notes + " to undo it).\n"));

  auto second = write("~/bk/notes.txt", "version 3", true);
  ASSERT_EQ(second.exitCode, 0) << second.err;
  EXPECT_THAT(second.err, HasSubstr("kaja: kept a copy of " + notes));
  json result = json::parse(second.out);
  ASSERT_TRUE(result["_meta"].is_object()) << second.out;
  const json& kept = result["_meta"]["kaja/backups"];
  ASSERT_EQ(kept.size(), 1u) << second.out;
  EXPECT_EQ(kept[0]["path"], notes);
  EXPECT_EQ(testing::readFile(kept[0]["copy"].get<std::string>()), "version 2");
  EXPECT_THAT(kept[0]["copy"].get<std::string>(),
              HasSubstr("/backups" + notes + "/" + kept[0]["stamp"].get<std::string>()));
  EXPECT_TRUE(result.contains("content"));  // the server's own result is all still there

  // A new file and a folder without backups keep nothing, and say nothing about it.
  for (const std::string& path : {home_ + "/bk/new.txt", home_ + "/rw/keep.txt"}) {
    auto plain = write(path, "x", true);
    ASSERT_EQ(plain.exitCode, 0) << plain.err;
    EXPECT_THAT(plain.err, Not(HasSubstr("kept a copy"))) << path;
    json raw = json::parse(plain.out);
    EXPECT_FALSE(raw.contains("_meta") && raw["_meta"].contains("kaja/backups")) << plain.out;
  }
}

TEST_F(BackupsAuditCliTest, BackupsListsEveryCopyNewestFirstWithSizes) {
  auto none = kaja({"backups"});
  ASSERT_EQ(none.exitCode, 0) << none.err;
  EXPECT_THAT(none.out, HasSubstr("kaja has kept no copies yet"));
  EXPECT_EQ(backupsJson()["copies"].size(), 0u);

  ASSERT_EQ(write("~/bk/notes.txt", "version two").exitCode, 0);  // keeps "version 1" (9)
  ASSERT_EQ(write("~/bk/todo.txt", "buy milk").exitCode, 0);      // new: nothing to keep
  ASSERT_EQ(write("~/bk/todo.txt", "buy oat milk").exitCode, 0);  // keeps "buy milk" (8)
  ASSERT_EQ(write("~/bk/notes.txt", "3").exitCode, 0);            // keeps "version two" (11)

  json all = backupsJson();
  ASSERT_EQ(all["copies"].size(), 3u) << all.dump();
  const json& copies = all["copies"];
  EXPECT_EQ(copies[0]["path"], home_ + "/bk/notes.txt");
  EXPECT_EQ(copies[0]["size"], 11);
  EXPECT_EQ(copies[1]["path"], home_ + "/bk/todo.txt");
  EXPECT_EQ(copies[1]["size"], 8);
  EXPECT_EQ(copies[2]["path"], home_ + "/bk/notes.txt");
  EXPECT_EQ(copies[2]["size"], 9);
  EXPECT_GT(copies[0]["stamp"].get<std::string>(), copies[1]["stamp"].get<std::string>());
  EXPECT_GT(copies[1]["stamp"].get<std::string>(), copies[2]["stamp"].get<std::string>());
  EXPECT_EQ(testing::readFile(copies[2]["copy"].get<std::string>()), "version 1");
  EXPECT_EQ(all["files"], 2);
  EXPECT_EQ(all["bytes"], 28);
  EXPECT_THAT(copies[0]["time"].get<std::string>(), ::testing::EndsWith("Z"));

  auto table = kaja({"backups"});
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_THAT(table.out, AllOf(HasSubstr("TIME"), HasSubstr("SIZE"), HasSubstr("STAMP"),
                               HasSubstr("FILE"), HasSubstr("11 B"), HasSubstr("8 B"),
                               HasSubstr("3 copies of 2 files, 28 B in all.")));
  const std::string newest = copies[0]["stamp"], oldest = copies[2]["stamp"];
  EXPECT_LT(table.out.find(newest), table.out.find(oldest));

  // One file's copies: by ~/, absolute, or relative to the working folder.
  for (const auto& listed :
       {backupsJson({"~/bk/notes.txt"}), backupsJson({home_ + "/bk/../bk/notes.txt"}),
        json::parse(kajaIn(home_ + "/bk", {"backups", "--json", "notes.txt"}).out)}) {
    ASSERT_EQ(listed["copies"].size(), 2u) << listed.dump();
    EXPECT_EQ(listed["copies"][0]["stamp"], newest);
    EXPECT_EQ(listed["copies"][1]["stamp"], oldest);
    EXPECT_EQ(listed["files"], 1);
  }
  auto other = kaja({"backups", "~/rw/keep.txt"});
  ASSERT_EQ(other.exitCode, 0) << other.err;
  EXPECT_THAT(other.out, HasSubstr("kaja has kept no copies of " + home_ + "/rw/keep.txt."));
}

TEST_F(BackupsAuditCliTest, RestorePutsTheNewestCopyBackAndCanItselfBeUndone) {
  ASSERT_EQ(write("~/bk/notes.txt", "version 2").exitCode, 0);
  ASSERT_EQ(write("~/bk/notes.txt", "version 3").exitCode, 0);
  ASSERT_EQ(::chmod((home_ + "/bk/notes.txt").c_str(), 0640), 0);

  auto restored = kaja({"backups", "restore", "~/bk/notes.txt"});
  ASSERT_EQ(restored.exitCode, 0) << restored.err;
  EXPECT_EQ(read("bk/notes.txt"), "version 2");
  EXPECT_THAT(restored.err, AllOf(HasSubstr("kaja: restored " + home_ + "/bk/notes.txt"),
                                  HasSubstr("running this again undoes it.")));
  struct stat info {};
  ASSERT_EQ(::stat((home_ + "/bk/notes.txt").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0640u);

  // The file the restore replaced is the newest copy now, so the same command undoes it.
  json listed = backupsJson({"~/bk/notes.txt"});
  ASSERT_EQ(listed["copies"].size(), 3u);
  EXPECT_EQ(testing::readFile(listed["copies"][0]["copy"].get<std::string>()), "version 3");
  auto undone = kaja({"backups", "restore", home_ + "/bk/notes.txt"});
  ASSERT_EQ(undone.exitCode, 0) << undone.err;
  EXPECT_EQ(read("bk/notes.txt"), "version 3");

  // A stamp picks an older copy; --json says what was restored and what was kept.
  std::string oldest = backupsJson({"~/bk/notes.txt"})["copies"].back()["stamp"];
  auto picked = kaja({"backups", "restore", "--json", "~/bk/notes.txt", oldest});
  ASSERT_EQ(picked.exitCode, 0) << picked.err;
  EXPECT_EQ(read("bk/notes.txt"), "version 1");
  json said = json::parse(picked.out);
  EXPECT_EQ(said["restored"]["stamp"], oldest);
  EXPECT_EQ(testing::readFile(said["kept"]["copy"].get<std::string>()), "version 3");
  EXPECT_EQ(backupsJson({"~/bk/notes.txt"})["copies"].size(), 5u);
  // Nothing but the restored file was left next to it.
  EXPECT_EQ(std::distance(fs::directory_iterator(home_ + "/bk"), fs::directory_iterator()), 1);
}

TEST_F(BackupsAuditCliTest, RestoreRefusesLinksFoldersUnknownStampsAndKajasOwnFiles) {
  ASSERT_EQ(write("~/bk/notes.txt", "version 2").exitCode, 0);
  std::string stamp = backupsJson({"~/bk/notes.txt"})["copies"][0]["stamp"];

  auto unknown = kaja({"backups", "restore", "~/bk/notes.txt", "20200101T000000.000Z"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_THAT(unknown.err,
              AllOf(HasSubstr("kaja: error: There is no copy \"20200101T000000.000Z\""),
                    HasSubstr("its copies, newest first, are " + stamp + ".")));
  auto hostile = kaja({"backups", "restore", "~/bk/notes.txt", "../../../etc/passwd"});
  EXPECT_EQ(hostile.exitCode, 2);
  EXPECT_THAT(hostile.err, HasSubstr("There is no copy"));
  EXPECT_EQ(read("bk/notes.txt"), "version 2");

  auto nothing = kaja({"backups", "restore", "~/rw/keep.txt"});
  EXPECT_EQ(nothing.exitCode, 2);
  EXPECT_THAT(nothing.err, HasSubstr("kaja has kept no copies of"));
  EXPECT_EQ(read("rw/keep.txt"), "rw");

  // A link where the file was: restoring would write through it, to somewhere else.
  fs::rename(home_ + "/bk/notes.txt", home_ + "/bk/moved.txt");
  fs::create_symlink(home_ + "/rw/keep.txt", home_ + "/bk/notes.txt");
  auto linked = kaja({"backups", "restore", "~/bk/notes.txt"});
  EXPECT_EQ(linked.exitCode, 3);
  EXPECT_THAT(linked.err, AllOf(HasSubstr("kaja: refused: "), HasSubstr("is a symbolic link"),
                                HasSubstr(".\n")));
  EXPECT_EQ(read("rw/keep.txt"), "rw");
  EXPECT_TRUE(fs::is_symlink(home_ + "/bk/notes.txt"));

  fs::remove(home_ + "/bk/notes.txt");
  fs::create_directory(home_ + "/bk/notes.txt");
  auto folder = kaja({"backups", "restore", "~/bk/notes.txt"});
  EXPECT_EQ(folder.exitCode, 3);
  EXPECT_THAT(folder.err, HasSubstr("is not a regular file"));
  EXPECT_TRUE(fs::is_directory(home_ + "/bk/notes.txt"));

  auto own = kaja({"backups", "restore", audit_});
  EXPECT_EQ(own.exitCode, 3);
  EXPECT_THAT(own.err, HasSubstr("inside kaja's own folders"));

  EXPECT_EQ(kaja({"backups", "restore"}).exitCode, 2);
  EXPECT_EQ(kaja({"backups", "a", "b"}).exitCode, 2);
  EXPECT_EQ(kaja({"backups", "--frobnicate"}).exitCode, 2);
}

TEST_F(BackupsAuditCliTest, HostileFileNamesStayOnOneLine) {
  // The folder check refuses such names in arguments, but a folder moved as a whole is
  // copied file by file first, whatever its files are called.
  const std::string evil = "evil\nname\x1b[31m.txt";
  root_.write("home/bk/dir/" + evil, "payload");
  auto moved = call("move_file", {{"source", "~/bk/dir"}, {"destination", "~/bk/dir2"}});
  ASSERT_EQ(moved.exitCode, 0) << moved.err;
  EXPECT_THAT(moved.err, HasSubstr("evil\\nname\\u001b[31m.txt"));
  EXPECT_THAT(moved.err, Not(HasSubstr("\x1b")));

  auto table = kaja({"backups"});
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("evil\\nname\\u001b[31m.txt"));
  EXPECT_THAT(table.out, Not(HasSubstr("\x1b")));
  EXPECT_EQ(std::count(table.out.begin(), table.out.end(), '\n'), 3);  // header, row, total

  json listed = backupsJson();
  ASSERT_EQ(listed["copies"].size(), 1u);
  const std::string original = home_ + "/bk/dir/" + evil;
  EXPECT_EQ(listed["copies"][0]["path"], original);

  // Its folder was moved away; the restore puts the file back where it was.
  auto restored = kaja({"backups", "restore", original});
  ASSERT_EQ(restored.exitCode, 0) << restored.err;
  EXPECT_EQ(testing::readFile(original), "payload");
  EXPECT_THAT(restored.err, Not(HasSubstr("\x1b")));
}

TEST_F(BackupsAuditCliTest, AuditShowsRealCallsNarrowedBySinceAbilityAndLimit) {
  auto empty = kaja({"audit"});
  EXPECT_EQ(empty.exitCode, 0) << empty.err;
  EXPECT_THAT(empty.err, HasSubstr("no call has been audited yet"));

  // A row from long ago, as an older kaja would have left it.
  root_.write("data/kaja/audit.jsonl",
              R"({"time":"2020-01-01T00:00:00.000Z","persona":"work","ability":"fs",)"
              R"("tool":"ancient","decision":"allowed","rule":"","durationMs":1,)"
              R"("resultBytes":0,"isError":false,"arguments":[]})"
              "\n");
  ASSERT_EQ(call("read_text_file", {{"path", "~/rw/keep.txt"}}).exitCode, 0);
  EXPECT_EQ(write("~/ro/secret.txt", "no").exitCode, 3);
  ASSERT_EQ(kaja({"call", "--persona", "work", "kaja", "list_backups",
                  json({{"path", "~/bk/notes.txt"}}).dump()})
                .exitCode,
            0);

  auto all = kaja({"audit", "--json"});
  ASSERT_EQ(all.exitCode, 0) << all.err;
  auto rows = jsonLines(all.out);
  ASSERT_EQ(rows.size(), 4u) << all.out;
  EXPECT_EQ(rows[0]["tool"], "ancient");  // newest last, as a log reads
  EXPECT_EQ(rows[1]["tool"], "read_text_file");
  EXPECT_EQ(rows[2]["tool"], "write_file");
  EXPECT_EQ(rows[2]["decision"], "refused");
  EXPECT_EQ(rows[2]["rule"], "K15 read-only folder");
  EXPECT_EQ(rows[3]["ability"], "kaja");
  EXPECT_THAT(all.out, Not(HasSubstr("secret.txt")));  // names of arguments, never values

  auto recent = jsonLines(kaja({"audit", "--json", "--since", "1h"}).out);
  ASSERT_EQ(recent.size(), 3u);
  EXPECT_EQ(recent[0]["tool"], "read_text_file");
  EXPECT_EQ(
      jsonLines(kaja({"audit", "--json", "--since", "1h30m", "--ability", "kaja"}).out).size(), 1u);
  auto fsRows = jsonLines(kaja({"audit", "--json", "--ability", "fs"}).out);
  ASSERT_EQ(fsRows.size(), 3u);
  for (const auto& row : fsRows) EXPECT_EQ(row["ability"], "fs");

  auto limited = kaja({"audit", "--limit", "2"});
  ASSERT_EQ(limited.exitCode, 0) << limited.err;
  EXPECT_THAT(limited.out,
              AllOf(HasSubstr("TIME"), HasSubstr("DECISION"), HasSubstr("refused"),
                    HasSubstr("K15 read-only folder"), HasSubstr("kaja list_backups"),
                    HasSubstr("arguments: content, path"), Not(HasSubstr("read_text_file"))));
  EXPECT_THAT(limited.err, HasSubstr("showed the last 2; --limit N or --all shows more."));
  EXPECT_EQ(jsonLines(kaja({"audit", "--json", "--all"}).out).size(), 4u);

  auto banana = kaja({"audit", "--since", "banana"});
  EXPECT_EQ(banana.exitCode, 2);
  EXPECT_THAT(banana.err, HasSubstr("kaja: error: --since takes a duration such as 90s, 30m, 1h, "
                                    "2d or 1w, not \"banana\".\n"));
  for (const auto& bad : std::vector<std::vector<std::string>>{{"audit", "--since", "10"},
                                                               {"audit", "--since", "0s"},
                                                               {"audit", "--limit", "0"},
                                                               {"audit", "--all", "--limit", "3"},
                                                               {"audit", "extra"}}) {
    auto refused = kaja(bad);
    EXPECT_EQ(refused.exitCode, 2) << bad.back();
    EXPECT_THAT(refused.err, HasSubstr("kaja: error: ")) << bad.back();
    EXPECT_TRUE(refused.out.empty()) << bad.back();
  }
}

TEST_F(BackupsAuditCliTest, AuditSkipsDamagedLinesAndWarnsOnce) {
  ASSERT_EQ(call("read_text_file", {{"path", "~/rw/keep.txt"}}).exitCode, 0);
  {
    std::ofstream out(audit_, std::ios::app | std::ios::binary);
    out << "not json at all\n"
        << std::string(3 * 1024 * 1024, 'x') << "\n"
        << R"({"time":"yesterday","ability":"fs","tool":"t","decision":"allowed"})"
        << "\n"
        << "\x1b]0;owned\x07\n";
  }
  ASSERT_EQ(call("list_directory", {{"path", "~/rw"}}).exitCode, 0);
  {
    std::ofstream out(audit_, std::ios::app | std::ios::binary);
    out << R"({"time":"2026-11-29T10:00:02.000Z","ability":"fs","tool":"cut-off)";
  }
  auto read = kaja({"audit", "--json"});
  ASSERT_EQ(read.exitCode, 0) << read.err;
  auto rows = jsonLines(read.out);
  ASSERT_EQ(rows.size(), 2u) << read.out;
  EXPECT_EQ(rows[0]["tool"], "read_text_file");
  EXPECT_EQ(rows[1]["tool"], "list_directory");
  EXPECT_THAT(read.err, HasSubstr("kaja: warning: skipped 5 lines of " + audit_ +
                                  " that are not audit rows (damaged, cut off or too long).\n"));
  EXPECT_EQ(read.err.find("warning"), read.err.rfind("warning"));  // once
  if (kaja::testing::kMemoryIsMeasured) {
    EXPECT_LT(read.peakRssKb, 64 * 1024);
  }

  auto table = kaja({"audit"});
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_THAT(table.out, Not(HasSubstr("\x1b")));
  EXPECT_THAT(table.out, AllOf(HasSubstr("read_text_file"), HasSubstr("list_directory")));
}

TEST_F(BackupsAuditCliTest, AHugeLogIsReadFromItsEndNotWhole) {
  // About 100 MB of old rows, then a few new ones: the default view and --since read only
  // the end, in little memory.
  fs::create_directories(fs::path(audit_).parent_path());
  {
    std::ofstream out(audit_, std::ios::binary);
    std::string row = R"({"time":"2020-01-01T00:00:00.000Z","persona":"work","ability":"fs",)"
                      R"("tool":"old","decision":"allowed","rule":"","durationMs":1,)"
                      R"("resultBytes":0,"isError":false,"arguments":["path"]})"
                      "\n";
    std::string block;
    while (block.size() < 1024 * 1024) block += row;
    for (int i = 0; i < 100; ++i) out << block;
  }
  ASSERT_GT(fs::file_size(audit_), 100u * 1000 * 1000);
  ASSERT_EQ(call("read_text_file", {{"path", "~/rw/keep.txt"}}).exitCode, 0);

  auto recent = kaja({"audit", "--json", "--since", "1h"});
  ASSERT_EQ(recent.exitCode, 0) << recent.err;
  auto rows = jsonLines(recent.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["tool"], "read_text_file");
  if (kaja::testing::kMemoryIsMeasured) {
    EXPECT_LT(recent.peakRssKb, 64 * 1024);
  }
  EXPECT_LT(recent.seconds, 1.0);  // reading it all takes seconds

  auto last = kaja({"audit", "--json"});
  ASSERT_EQ(last.exitCode, 0) << last.err;
  EXPECT_EQ(jsonLines(last.out).size(), 50u);
  EXPECT_EQ(jsonLines(last.out).back()["tool"], "read_text_file");
  if (kaja::testing::kMemoryIsMeasured) {
    EXPECT_LT(last.peakRssKb, 64 * 1024);
  }
  EXPECT_LT(last.seconds, 1.0);
}

}  // namespace
}  // namespace kaja::cli
