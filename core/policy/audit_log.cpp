#include "core/policy/audit_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>

#include "core/util/sys.h"

namespace kaja::core::policy {

const char* toString(AuditDecision decision) {
  switch (decision) {
    case AuditDecision::kAllowed:
      return "allowed";
    case AuditDecision::kRefused:
      return "refused";
    case AuditDecision::kDeclined:
      return "declined";
    case AuditDecision::kFailed:
      return "failed";
  }
  return "failed";
}

std::vector<std::string> argumentNames(const mcp::Json& arguments) {
  std::vector<std::string> names;
  if (!arguments.is_object()) return names;
  for (const auto& item : arguments.items()) names.push_back(item.key());
  std::sort(names.begin(), names.end());
  return names;
}

std::string formatIsoUtc(std::chrono::system_clock::time_point time) {
  auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  int fraction = static_cast<int>(millis % 1000);
  if (fraction < 0) {
    fraction += 1000;
    --seconds;
  }
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char text[80];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, fraction);
  return text;
}

std::string formatAuditLine(const AuditRecord& record) {
  mcp::Json row = {
      {"time", formatIsoUtc(record.time)},
      {"persona", record.persona},
      {"ability", record.ability},
      {"tool", record.tool},
      {"decision", toString(record.decision)},
      {"rule", record.rule},
      {"durationMs", record.duration.count()},
      {"resultBytes", record.resultBytes},
      {"isError", record.isError},
      {"arguments", record.argumentNames},
  };
  // nlohmann escapes control characters, so a hostile tool name cannot start a new row.
  return row.dump(-1, ' ', false, mcp::Json::error_handler_t::replace) + "\n";
}

Result<AuditLog> AuditLog::open(const std::string& dataDir) {
  if (auto made = makeDirectories(dataDir, 0700); !made) return std::unexpected(made.error());
  std::string path = dataDir + "/audit.jsonl";
  int fd = retryOnEintr(
      [&] { return ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600); });
  if (fd < 0) return fail(ErrorCode::kIo, syscallMessage("open", path, errno));
  return AuditLog(UniqueFd(fd), std::move(path));
}

Result<void> AuditLog::append(const AuditRecord& record) {
  std::string line = formatAuditLine(record);
  ssize_t written = retryOnEintr([&] { return ::write(fd_.get(), line.data(), line.size()); });
  if (written < 0) return fail(ErrorCode::kIo, syscallMessage("write", path_, errno));
  if (static_cast<size_t>(written) != line.size()) {
    return fail(ErrorCode::kIo, "write(" + path_ + "): wrote " + std::to_string(written) + " of " +
                                    std::to_string(line.size()) + " bytes of an audit row");
  }
  return {};
}

}  // namespace kaja::core::policy
