// T8: one JSON line per call, names of arguments only.
#include "core/policy/audit_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <random>
#include <sstream>

#include "core/policy/refusal.h"
#include "tests/support/temp_dir.h"

namespace kaja::core::policy {
namespace {

using kaja::testing::readFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<mcp::Json> rows(const std::string& path) {
  std::vector<mcp::Json> out;
  std::istringstream in(readFile(path));
  for (std::string line; std::getline(in, line);) out.push_back(mcp::Json::parse(line));
  return out;
}

AuditRecord sample(const mcp::Json& arguments) {
  AuditRecord record;
  record.time = std::chrono::sys_days{std::chrono::year{2026} / 11 / 29} + std::chrono::hours{19} +
                std::chrono::milliseconds{5};
  record.persona = "writer";
  record.ability = "filesystem";
  record.tool = "write_file";
  record.decision = AuditDecision::kRefused;
  record.rule = std::string(rule::kReadOnlyFolder);
  record.duration = std::chrono::milliseconds{12};
  record.resultBytes = 345;
  record.isError = true;
  record.argumentNames = argumentNames(arguments, {"path", "content", "options", "list"});
  return record;
}

TEST(AuditLogTest, WritesOneJsonLinePerCallWithEveryField) {
  kaja::testing::TempDir dir;
  auto log = AuditLog::open(dir.path() + "/data/kaja");
  ASSERT_TRUE(log) << log.error().describe();
  ASSERT_TRUE(log->append(sample({{"path", "/x"}, {"content", "y"}})));
  AuditRecord allowed = sample({});
  allowed.decision = AuditDecision::kAllowed;
  allowed.rule.clear();
  ASSERT_TRUE(log->append(allowed));
  auto lines = rows(dir.path() + "/data/kaja/audit.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  const auto& row = lines[0];
  EXPECT_EQ(row["time"], "2026-11-29T19:00:00.005Z");
  EXPECT_EQ(row["persona"], "writer");
  EXPECT_EQ(row["ability"], "filesystem");
  EXPECT_EQ(row["tool"], "write_file");
  EXPECT_EQ(row["decision"], "refused");
  EXPECT_EQ(row["rule"], "K15 read-only folder");
  EXPECT_EQ(row["durationMs"], 12);
  EXPECT_EQ(row["resultBytes"], 345);
  EXPECT_EQ(row["isError"], true);
  EXPECT_EQ(row["arguments"], mcp::Json::array({"content", "path"}));
  EXPECT_EQ(lines[1]["decision"], "allowed");
  struct stat info {};
  ASSERT_EQ(::stat(log->path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
}

TEST(AuditLogTest, AFifoInThePlaceOfTheLogIsRefusedAtOnce) {
  testing::TempDir dir;
  ASSERT_EQ(::mkfifo(auditLogPath(dir.path()).c_str(), 0600), 0);
  // No reader: a blocking open would wait for one for ever.
  auto log = AuditLog::open(dir.path());
  ASSERT_FALSE(log);
  EXPECT_THAT(log.error().message, HasSubstr("not a regular file"));
}

TEST(AuditLogTest, ArgumentValuesNeverAppear) {
  kaja::testing::TempDir dir;
  auto log = AuditLog::open(dir.path());
  ASSERT_TRUE(log);
  mcp::Json arguments = {{"path", "/home/u/SECRET-PATH-1"},
                         {"content", "hunter2-SECRET-VALUE"},
                         {"options", {{"token", "SECRET-NESTED-3"}}},
                         {"list", {"SECRET-IN-ARRAY-4"}}};
  ASSERT_TRUE(log->append(sample(arguments)));
  std::string text = readFile(log->path());
  EXPECT_THAT(text, Not(HasSubstr("SECRET")));
  EXPECT_THAT(text, Not(HasSubstr("hunter2")));
  EXPECT_THAT(text, HasSubstr("\"arguments\":[\"content\",\"list\",\"options\",\"path\"]"));
  EXPECT_THAT(argumentNames(arguments, {"path", "content", "options", "list"}),
              ElementsAre("content", "list", "options", "path"));
  EXPECT_TRUE(argumentNames(mcp::Json::array({"x"}), {"x"}).empty());
}

TEST(AuditLogTest, AppendsAcrossReopensAndKeepsHostileNamesOnOneLine) {
  kaja::testing::TempDir dir;
  {
    auto first = AuditLog::open(dir.path());
    ASSERT_TRUE(first);
    ASSERT_TRUE(first->append(sample({})));
  }
  auto second = AuditLog::open(dir.path());
  ASSERT_TRUE(second);
  AuditRecord hostile = sample({});
  hostile.tool = "evil\n{\"decision\":\"allowed\"}";
  ASSERT_TRUE(second->append(hostile));
  auto lines = rows(second->path());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["tool"], hostile.tool);
}

// Found by an outside review: a model can write anything as an argument's name. A name of
// 1.1 MB made the row longer than kaja audit reads, so the call vanished from the log, and a
// secret sent as a name was written to it. Only names the tool's schema declares are kept.
TEST(AuditLogTest, ArgumentNamesTheSchemaDoesNotDeclareAreCountedNotWritten) {
  kaja::testing::TempDir dir;
  auto log = AuditLog::open(dir.path());
  ASSERT_TRUE(log);
  const mcp::Json schema = {{"type", "object"},
                            {"properties", {{"path", {{"type", "string"}}}, {"mode", {}}}}};
  const std::vector<std::string> declared = declaredArguments(schema);
  mcp::Json arguments = {
      {"path", "/x"}, {"sk-live-SECRET-AS-A-NAME", 1}, {std::string(1100 * 1024, 'k'), 2}};
  AuditRecord record = sample({});
  record.tool = std::string(1024 * 1024, 't');
  record.argumentNames = argumentNames(arguments, declared);
  EXPECT_THAT(record.argumentNames, ElementsAre("path", "(2 undeclared)"));
  ASSERT_TRUE(log->append(record));
  const std::string text = readFile(log->path());
  EXPECT_THAT(text, Not(HasSubstr("SECRET")));
  EXPECT_LT(text.size(), 4096u);
  // kaja audit reads the row back.
  std::vector<AuditRecord> back;
  auto read = readAuditLog(log->path(), {}, [&](const AuditRecord& row) { back.push_back(row); });
  ASSERT_TRUE(read) << read.error().describe();
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(read->damaged, 0u);
  EXPECT_EQ(back[0].tool.size(), kMaxAuditTool);

  // A schema that declares a flood of long names still makes a bounded row.
  mcp::Json many = mcp::Json::object();
  std::vector<std::string> wide;
  for (int i = 0; i < 500; ++i) {
    wide.push_back(std::to_string(i) + std::string(300, 'n'));
    many[wide.back()] = i;
  }
  auto names = argumentNames(many, wide);
  ASSERT_EQ(names.size(), kMaxAuditNames + 1);
  EXPECT_EQ(names.back(), "(436 more)");
  EXPECT_EQ(names.front().size(), kMaxAuditName);
  EXPECT_TRUE(declaredArguments(mcp::Json::array()).empty());
  EXPECT_TRUE(declaredArguments({{"properties", "x"}}).empty());
}

TEST(AuditLogTest, OpenFailureNamesTheCall) {
  kaja::testing::TempDir dir;
  std::string file = dir.write("file", "x");
  auto log = AuditLog::open(file + "/sub");
  ASSERT_FALSE(log);
  EXPECT_THAT(log.error().message, HasSubstr("mkdir("));
}

// The row is written directly, not through a JSON object; it must be the very text the
// object would dump, whatever the strings hold: quotes, backslashes, control characters that
// could start a new row, bytes that are not UTF-8, a tool name cut inside a character.
TEST(AuditLogTest, TheRowIsTheTextOfItsJsonWhateverTheStringsHold) {
  std::mt19937 random(20261206);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 24);
  const auto noise = [&] {
    std::string text;
    for (int i = length(random); i > 0; --i) text += static_cast<char>(byte(random));
    return text;
  };
  std::vector<AuditRecord> records;
  AuditRecord plain;
  plain.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1796000000123));
  plain.persona = "work";
  plain.ability = "fs";
  plain.tool = "read_text_file";
  plain.argumentNames = {"path", "(2 undeclared)"};
  plain.duration = std::chrono::milliseconds(42);
  plain.resultBytes = 1234;
  records.push_back(plain);
  AuditRecord hostile = plain;
  hostile.tool = "x\"},\n{\"forged\":true\\ \u00e9\u202e" + std::string(300, 'e') + "\u00e9";
  hostile.ability = std::string(
      "a\0"
      "b\x7f\xff\xc3",
      6);  // a NUL between a and b
  hostile.decision = AuditDecision::kRefused;
  hostile.rule = rule::kReadOnlyFolder;
  hostile.isError = true;
  hostile.argumentNames = {"", "\t", "\xe2\x80"};
  records.push_back(hostile);
  for (int i = 0; i < 500; ++i) {
    AuditRecord row = plain;
    row.persona = noise();
    row.ability = noise();
    row.tool = noise() + std::string(kMaxAuditTool - 2, 'z') + "\u00e9\u00e9";
    row.rule = noise();
    row.argumentNames = {noise(), noise()};
    row.resultBytes = static_cast<uint64_t>(random()) << 20;
    records.push_back(row);
  }
  for (const auto& record : records) {
    const std::string expected =
        auditRowJson(record).dump(-1, ' ', false, mcp::Json::error_handler_t::replace) + "\n";
    ASSERT_EQ(formatAuditLine(record), expected);
    EXPECT_EQ(std::count(expected.begin(), expected.end(), '\n'), 1);
  }
}

}  // namespace
}  // namespace kaja::core::policy
