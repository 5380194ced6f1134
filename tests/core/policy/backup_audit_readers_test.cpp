// The readers behind `kaja backups` and `kaja audit`: the whole backup store listed, a copy
// described, and the audit log read back from its end, damaged lines and all.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/policy/audit_log.h"
#include "core/policy/backup.h"
#include "core/policy/refusal.h"
#include "tests/support/temp_dir.h"

namespace kaja::core::policy {
namespace {

using kaja::testing::readFile;
using ::testing::ElementsAre;
namespace fs = std::filesystem;
using Time = std::chrono::system_clock::time_point;

Time at(int hour, int minute, int second, int millis = 0) {
  return std::chrono::sys_days{std::chrono::year{2026} / 11 / 29} + std::chrono::hours{hour} +
         std::chrono::minutes{minute} + std::chrono::seconds{second} +
         std::chrono::milliseconds{millis};
}

// A clock that starts at 19:30:00.123 and moves by `step` on each reading.
Clock steppingClock(std::chrono::milliseconds step) {
  auto now = std::make_shared<Time>(at(19, 30, 0, 123));
  return [now, step] {
    Time current = *now;
    *now += step;
    return current;
  };
}

class BackupListingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::canonical(dir_.path()).string();
    backups_ = root_ + "/data/backups";
    a_ = fs::canonical(dir_.write("docs/a.txt", "aaaa")).string();
    b_ = fs::canonical(dir_.write("docs/sub/b.txt", "bb")).string();
  }
  kaja::testing::TempDir dir_;
  std::string root_, backups_, a_, b_;
};

TEST_F(BackupListingTest, StampsReadBackAsTheTimeTheyName) {
  EXPECT_EQ(parseBackupStamp("20261129T193000.123Z"), at(19, 30, 0, 123));
  EXPECT_EQ(parseBackupStamp("20261129T193000.123Z-7"), at(19, 30, 0, 123));
  EXPECT_EQ(parseBackupStamp(formatBackupStamp(at(23, 59, 59, 999))), at(23, 59, 59, 999));
  EXPECT_FALSE(parseBackupStamp("20261329T193000.123Z"));  // month 13
  EXPECT_FALSE(parseBackupStamp("20261129T253000.123Z"));  // hour 25
  EXPECT_FALSE(parseBackupStamp("../../etc/passwd"));
  EXPECT_FALSE(parseBackupStamp(""));
}

TEST_F(BackupListingTest, ListsEveryCopyOfEveryFileNewestFirst) {
  BackupStore store(backups_, steppingClock(std::chrono::seconds{1}));
  ASSERT_TRUE(store.backupFile(a_));  // 19:30:00
  ASSERT_TRUE(store.backupFile(b_));  // 19:30:01
  dir_.write("docs/a.txt", "aaaaaaaa");
  ASSERT_TRUE(store.backupFile(a_));  // 19:30:02
  // Neither a copy still being written nor a link planted in the store is listed.
  std::ofstream(backups_ + a_ + "/.kaja-copy-abc123") << "partial";
  fs::create_symlink(a_, backups_ + b_ + "/20261129T200000.000Z");

  auto all = store.listAllBackups();
  ASSERT_TRUE(all) << all.error().describe();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].original, a_);
  EXPECT_EQ((*all)[0].entry.stamp, "20261129T193002.123Z");
  EXPECT_EQ((*all)[0].entry.size, 8u);
  EXPECT_EQ(readFile((*all)[0].entry.storedPath), "aaaaaaaa");
  EXPECT_EQ((*all)[1].original, b_);
  EXPECT_EQ((*all)[1].entry.size, 2u);
  EXPECT_EQ((*all)[2].original, a_);
  EXPECT_EQ((*all)[2].entry.stamp, "20261129T193000.123Z");
  EXPECT_EQ(readFile((*all)[2].entry.storedPath), "aaaa");
}

TEST_F(BackupListingTest, CopiesOfOneMillisecondSortByTheirSuffix) {
  BackupStore store(backups_, steppingClock(std::chrono::milliseconds{0}));
  for (int i = 0; i < 11; ++i) ASSERT_TRUE(store.backupFile(a_));
  auto all = store.listAllBackups();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 11u);
  EXPECT_EQ((*all)[0].entry.stamp, "20261129T193000.123Z-10");
  EXPECT_EQ((*all)[1].entry.stamp, "20261129T193000.123Z-9");
  EXPECT_EQ((*all)[10].entry.stamp, "20261129T193000.123Z");
}

TEST_F(BackupListingTest, AnEmptyOrMissingStoreListsNothing) {
  BackupStore store(backups_);
  auto none = store.listAllBackups();
  ASSERT_TRUE(none) << none.error().describe();
  EXPECT_TRUE(none->empty());
  fs::create_directories(backups_);
  auto empty = store.listAllBackups();
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

TEST_F(BackupListingTest, DescribesOnlyCopiesOfItsOwnStore) {
  BackupStore store(backups_, steppingClock(std::chrono::seconds{1}));
  auto copy = store.backupFile(a_);
  ASSERT_TRUE(copy && copy->has_value());
  auto described = store.describeCopy(**copy);
  ASSERT_TRUE(described);
  EXPECT_EQ(described->original, a_);
  EXPECT_EQ(described->entry.stamp, "20261129T193000.123Z");
  EXPECT_EQ(described->entry.size, 4u);
  EXPECT_EQ(described->entry.storedPath, **copy);

  // A store whose name is a prefix of another folder's does not claim that folder.
  std::string lookalike = root_ + "/data/backups-other" + a_ + "/20261129T193000.123Z";
  fs::create_directories(fs::path(lookalike).parent_path());
  std::ofstream(lookalike) << "x";
  EXPECT_FALSE(store.describeCopy(lookalike));
  EXPECT_FALSE(store.describeCopy(backups_ + a_ + "/not-a-stamp"));
  EXPECT_FALSE(store.describeCopy(backups_ + a_ + "/20261129T193009.000Z"));  // no such file
  EXPECT_FALSE(store.describeCopy(backups_ + a_));                            // a folder
}

TEST_F(BackupListingTest, RestoreReturnsTheCopyOfWhatItReplaced) {
  BackupStore store(backups_, steppingClock(std::chrono::seconds{1}));
  ASSERT_TRUE(store.backupFile(a_));
  dir_.write("docs/a.txt", "changed");
  auto kept = store.restoreBackup(a_, "20261129T193000.123Z");
  ASSERT_TRUE(kept) << kept.error().describe();
  ASSERT_TRUE(kept->has_value());
  EXPECT_EQ(readFile(**kept), "changed");
  EXPECT_EQ(readFile(a_), "aaaa");

  fs::remove(a_);
  auto nothing = store.restoreBackup(a_, "20261129T193000.123Z");
  ASSERT_TRUE(nothing);
  EXPECT_FALSE(nothing->has_value());  // there was no file to keep
  EXPECT_EQ(readFile(a_), "aaaa");
}

// --- the audit log ---

AuditRecord row(Time time, const std::string& ability, const std::string& tool) {
  AuditRecord record;
  record.time = time;
  record.persona = "work";
  record.ability = ability;
  record.tool = tool;
  record.duration = std::chrono::milliseconds{3};
  record.argumentNames = {"path"};
  return record;
}

class AuditReaderTest : public ::testing::Test {
 protected:
  void SetUp() override { path_ = dir_.path() + "/audit.jsonl"; }
  void write(const std::string& text) const {
    std::ofstream out(path_, std::ios::app | std::ios::binary);
    out << text;
  }
  std::vector<AuditRecord> read(const AuditQuery& query, AuditReadReport* report = nullptr) const {
    std::vector<AuditRecord> rows;
    auto done = readAuditLog(path_, query, [&](const AuditRecord& r) { rows.push_back(r); });
    EXPECT_TRUE(done) << done.error().describe();
    if (done && report != nullptr) *report = *done;
    return rows;
  }
  static std::vector<std::string> tools(const std::vector<AuditRecord>& rows) {
    std::vector<std::string> names;
    for (const auto& r : rows) names.push_back(r.tool);
    return names;
  }
  kaja::testing::TempDir dir_;
  std::string path_;
};

TEST_F(AuditReaderTest, TimesAndRowsReadBackAsWritten) {
  EXPECT_EQ(parseIsoUtc(formatIsoUtc(at(19, 30, 0, 5))), at(19, 30, 0, 5));
  EXPECT_FALSE(parseIsoUtc("2026-11-29T19:30:00Z"));
  EXPECT_FALSE(parseIsoUtc("2026-13-29T19:30:00.000Z"));
  EXPECT_FALSE(parseIsoUtc("banana"));

  AuditRecord written = row(at(19, 30, 0, 5), "fs", "write_file");
  written.decision = AuditDecision::kRefused;
  written.rule = std::string(rule::kReadOnlyFolder);
  written.resultBytes = 12;
  written.isError = true;
  auto parsed = parseAuditLine(formatAuditLine(written));
  ASSERT_TRUE(parsed) << parsed.error().describe();
  EXPECT_EQ(parsed->time, written.time);
  EXPECT_EQ(parsed->decision, AuditDecision::kRefused);
  EXPECT_EQ(parsed->rule, written.rule);
  EXPECT_EQ(parsed->duration, written.duration);
  EXPECT_EQ(parsed->resultBytes, 12u);
  EXPECT_TRUE(parsed->isError);
  EXPECT_THAT(parsed->argumentNames, ElementsAre("path"));
  EXPECT_EQ(formatAuditLine(*parsed), formatAuditLine(written));

  for (const char* bad : {"not json", "[1,2]", "{}", R"({"time":"x","ability":"a","tool":"t"})",
                          R"({"time":"2026-11-29T19:30:00.000Z","ability":"a","tool":"t",)"
                          R"("decision":"maybe"})",
                          R"({"time":"2026-11-29T19:30:00.000Z","ability":1,"tool":"t",)"
                          R"("decision":"allowed"})",
                          R"({"time":"2026-11-29T19:30:00.000Z","ability":"a","tool":"t",)"
                          R"("decision":"allowed","arguments":[1]})"}) {
    EXPECT_FALSE(parseAuditLine(bad)) << bad;
  }
}

TEST_F(AuditReaderTest, AMissingLogIsNoError) {
  AuditReadReport report;
  EXPECT_TRUE(read({}, &report).empty());
  EXPECT_TRUE(report.missing);
}

TEST_F(AuditReaderTest, TheLimitKeepsTheNewestRowsInTheOrderWritten) {
  for (int i = 0; i < 5; ++i)
    write(formatAuditLine(row(at(10, 0, i), "fs", "t" + std::to_string(i))));
  AuditReadReport report;
  EXPECT_THAT(tools(read({std::nullopt, "", 2}, &report)), ElementsAre("t3", "t4"));
  EXPECT_TRUE(report.earlier);
  EXPECT_EQ(report.rows, 2u);
  EXPECT_THAT(tools(read({std::nullopt, "", 0}, &report)),
              ElementsAre("t0", "t1", "t2", "t3", "t4"));
  EXPECT_FALSE(report.earlier);
  EXPECT_EQ(read({std::nullopt, "", 5}, &report).size(), 5u);
  EXPECT_FALSE(report.earlier);
}

TEST_F(AuditReaderTest, SinceAndAbilityNarrowTheRows) {
  write(formatAuditLine(row(at(9, 0, 0), "fs", "old")));
  write(formatAuditLine(row(at(10, 0, 0), "kaja", "list_backups")));
  write(formatAuditLine(row(at(10, 0, 30), "fs", "read")));
  // Written later, but by a process whose call ended earlier: within the slack, still read.
  write(formatAuditLine(row(at(9, 59, 30), "fs", "late")));
  write(formatAuditLine(row(at(10, 1, 0), "fs", "write")));
  EXPECT_THAT(tools(read({at(9, 59, 45), "", 0})), ElementsAre("list_backups", "read", "write"));
  EXPECT_THAT(tools(read({at(9, 59, 0), "fs", 0})), ElementsAre("read", "late", "write"));
  EXPECT_THAT(tools(read({at(9, 59, 0), "fs", 1})), ElementsAre("write"));
  EXPECT_THAT(tools(read({std::nullopt, "kaja", 0})), ElementsAre("list_backups"));
  EXPECT_TRUE(read({at(11, 0, 0), "", 0}).empty());
}

TEST_F(AuditReaderTest, DamagedLinesAreSkippedAndCounted) {
  write(formatAuditLine(row(at(10, 0, 0), "fs", "first")));
  write("this is not json\n");
  write("[\"an\", \"array\"]\n");
  write(std::string(kMaxAuditLine + 10, 'x') + "\n");  // too long to hold
  write("\n");                                         // blank lines are no damage
  write(std::string(100000, '[') + "\n");              // deep, and not JSON
  write(formatAuditLine(row(at(10, 0, 1), "fs", "second")));
  write(R"({"time":"2026-11-29T10:00:02.000Z","ability":"fs","tool":"cut)");  // no newline
  AuditReadReport report;
  EXPECT_THAT(tools(read({}, &report)), ElementsAre("first", "second"));
  EXPECT_EQ(report.damaged, 5u);
  // Read from the end too, the same rows and the same count.
  EXPECT_THAT(tools(read({std::nullopt, "", 10}, &report)), ElementsAre("first", "second"));
  EXPECT_EQ(report.damaged, 5u);
  EXPECT_THAT(tools(read({std::nullopt, "", 1}, &report)), ElementsAre("second"));
  EXPECT_EQ(report.damaged, 1u);  // only the cut-off line after it was read
}

TEST_F(AuditReaderTest, LinesAcrossReadChunksComeWhole) {
  // Rows of uneven length, so that line ends fall everywhere in the 64 KB chunks.
  std::string text;
  for (int i = 0; i < 4000; ++i) {
    AuditRecord r = row(at(10, 0, 0) + std::chrono::milliseconds(i), "fs", std::to_string(i));
    r.argumentNames = {std::string(static_cast<size_t>(i % 97), 'a')};
    text += formatAuditLine(r);
  }
  write(text);
  ASSERT_GT(text.size(), 4u * 64 * 1024);
  AuditReadReport report;
  auto rows = read({std::nullopt, "", 3000}, &report);
  ASSERT_EQ(rows.size(), 3000u);
  EXPECT_EQ(report.damaged, 0u);
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].tool, std::to_string(i + 1000));
    ASSERT_EQ(rows[i].argumentNames.front().size(), (i + 1000) % 97);
  }
  auto all = read({});
  EXPECT_EQ(all.size(), 4000u);
}

}  // namespace
}  // namespace kaja::core::policy
