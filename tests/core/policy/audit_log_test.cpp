// T8: one JSON line per call, names of arguments only.
#include "core/policy/audit_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

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
  record.argumentNames = argumentNames(arguments);
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
  EXPECT_THAT(argumentNames(arguments), ElementsAre("content", "list", "options", "path"));
  EXPECT_TRUE(argumentNames(mcp::Json::array({"x"})).empty());
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

TEST(AuditLogTest, OpenFailureNamesTheCall) {
  kaja::testing::TempDir dir;
  std::string file = dir.write("file", "x");
  auto log = AuditLog::open(file + "/sub");
  ASSERT_FALSE(log);
  EXPECT_THAT(log.error().message, HasSubstr("mkdir("));
}

}  // namespace
}  // namespace kaja::core::policy
