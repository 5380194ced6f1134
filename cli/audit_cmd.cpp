// `kaja audit` reads the audit log back: one row per call, newest last, as a log reads.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/output.h"
#include "core/paths.h"
#include "core/policy/audit_log.h"

namespace kaja::cli {
namespace {

namespace policy = core::policy;

constexpr size_t kDefaultLimit = 50;
// About 30 years: more than any log holds, and far from overflowing a time point.
constexpr int64_t kLongestSince = int64_t{30} * 366 * 24 * 3600;
// The units --since takes, in seconds.
constexpr std::pair<char, int64_t> kUnits[] = {
    {'s', 1}, {'m', 60}, {'h', 3600}, {'d', int64_t{24} * 3600}, {'w', int64_t{7} * 24 * 3600}};

// Parses "90s", "30m", "1h", "2d", "1w" or a run of them ("1h30m") as seconds.
core::Result<std::chrono::seconds> parseDuration(const std::string& text) {
  auto bad = [&] {
    return core::fail(
        core::ErrorCode::kUsage,
        "--since takes a duration such as 90s, 30m, 1h, 2d or 1w, not \"" + oneLine(text) + "\".");
  };
  int64_t total = 0;
  size_t at = 0;
  if (text.empty()) return bad();
  while (at < text.size()) {
    int64_t number = 0;
    size_t digits = 0;
    for (; at < text.size() && text[at] >= '0' && text[at] <= '9' && digits < 12; ++at, ++digits) {
      number = number * 10 + (text[at] - '0');
    }
    if (digits == 0 || at >= text.size()) return bad();
    const auto* unit = std::find_if(std::begin(kUnits), std::end(kUnits),
                                    [&](const auto& known) { return known.first == text[at]; });
    if (unit == std::end(kUnits)) return bad();
    ++at;
    number = std::min(number, kLongestSince / unit->second);
    total = std::min(total + number * unit->second, kLongestSince);
  }
  if (total == 0) return bad();
  return std::chrono::seconds(total);
}

std::string pad(const std::string& text, size_t width) {
  std::string cut = fitWidth(text, width);
  return cut + std::string(width - std::min(width, displayWidth(cut)), ' ');
}

// What else a person reading the row wants: the rule that refused it, a tool error, the
// result's size and the names of the arguments.
std::string noteOf(const policy::AuditRecord& record) {
  std::string note;
  auto add = [&](const std::string& part) { note += (note.empty() ? "" : "; ") + part; };
  if (!record.rule.empty()) add(record.rule);
  if (record.isError && record.decision == policy::AuditDecision::kAllowed) add("tool error");
  if (record.resultBytes > 0) add(std::to_string(record.resultBytes) + " bytes back");
  std::string names;
  for (const auto& name : record.argumentNames) names += (names.empty() ? "" : ", ") + name;
  if (!names.empty()) add("arguments: " + names);
  return note;
}

void printRow(const policy::AuditRecord& record, bool asJson, bool& first) {
  if (asJson) {
    std::printf("%s\n", jsonText(policy::auditRowJson(record), -1).c_str());
    return;
  }
  if (first) {
    std::printf("%-19s  %-8s  %7s  %-12s  %-32s  %s\n", "TIME", "DECISION", "MS", "PERSONA", "CALL",
                "NOTE");
    first = false;
  }
  std::printf("%-19s  %-8s  %7lld  %s  %s  %s\n", policy::formatLocalTime(record.time).c_str(),
              policy::toString(record.decision), static_cast<long long>(record.duration.count()),
              pad(oneLine(record.persona), 12).c_str(),
              pad(oneLine(record.ability + " " + record.tool), 32).c_str(),
              oneLine(noteOf(record)).c_str());
}

// Reads the options into a query; a usage error for one that makes no sense.
core::Result<policy::AuditQuery> queryFrom(const ParsedArgs& parsed) {
  policy::AuditQuery query;
  query.limit = kDefaultLimit;
  if (parsed.has("--all") && parsed.value("--limit")) {
    return core::fail(core::ErrorCode::kUsage, "Give --limit N or --all, not both.");
  }
  if (parsed.has("--all")) query.limit = 0;
  if (auto limit = parsed.value("--limit")) {
    auto count = parsePositive("--limit", *limit, "a positive number of rows");
    if (!count) return std::unexpected(count.error());
    query.limit = static_cast<size_t>(*count);
  }
  if (auto since = parsed.value("--since")) {
    auto duration = parseDuration(*since);
    if (!duration) return std::unexpected(duration.error());
    query.since = std::chrono::system_clock::now() - *duration;
  }
  if (auto ability = parsed.value("--ability")) {
    if (ability->empty()) return core::fail(core::ErrorCode::kUsage, "--ability takes a name.");
    query.ability = *ability;
  }
  return query;
}

}  // namespace

int runAudit(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--json", "--all"}, {"--since", "--ability", "--limit"});
  if (!parsed) return reportError(parsed.error());
  if (!parsed->positional.empty()) {
    printError("kaja audit takes no arguments; narrow it with --since, --ability or --limit.");
    return kExitUsage;
  }
  auto query = queryFrom(*parsed);
  if (!query) return reportError(query.error());
  auto paths = core::Paths::fromEnvironment();
  if (!paths) return reportError(paths.error());
  const std::string path = policy::auditLogPath(paths->dataDir);
  bool asJson = parsed->has("--json");
  bool first = true;
  auto report = policy::readAuditLog(
      path, *query, [&](const policy::AuditRecord& record) { printRow(record, asJson, first); });
  if (!report) return reportError(report.error());
  if (report->missing) {
    printNote("no call has been audited yet (" + path + " does not exist).");
    return kExitOk;
  }
  if (report->damaged > 0) {
    bool one = report->damaged == 1;
    printWarning("skipped " + std::to_string(report->damaged) + (one ? " line" : " lines") +
                 " of " + path + (one ? " that is not an audit row" : " that are not audit rows") +
                 " (damaged, cut off or too long).");
  }
  if (!asJson && report->rows == 0) std::printf("No calls in the audit log match.\n");
  if (!asJson && report->earlier) {
    printNote("showed the last " + std::to_string(query->limit) +
              "; --limit N or --all shows more.");
  }
  return kExitOk;
}

}  // namespace kaja::cli
