#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/mcp/types.h"
#include "core/util/unique_fd.h"

namespace kaja::core::policy {

/// What happened to a call, as an audit row says it.
enum class AuditDecision {
  kAllowed,   ///< the call ran
  kRefused,   ///< a policy rule stopped it (filter, folder check, backup)
  kDeclined,  ///< approval was asked for and not given
  kFailed,    ///< it was allowed but the server or transport failed
};

/// Returns "allowed", "refused", "declined" or "failed".
const char* toString(AuditDecision decision);

/// One call. Deliberately has no field for argument values or refusal messages (a message
/// can quote a path): only the names of the arguments are kept.
struct AuditRecord {
  std::chrono::system_clock::time_point time;
  std::string persona;
  std::string ability;
  std::string tool;
  AuditDecision decision = AuditDecision::kAllowed;
  std::string rule;  ///< the refusing rule (a `rule::k…` value), empty when allowed
  std::chrono::milliseconds duration{0};
  uint64_t resultBytes = 0;
  bool isError = false;
  std::vector<std::string> argumentNames;
};

/// Returns the names the tool's `inputSchema` declares (the keys of its "properties").
std::vector<std::string> declaredArguments(const mcp::Json& inputSchema);

/// Returns the top-level keys of a call's arguments for its audit row, sorted; values are
/// never read. Only names in `declared` (the tool's schema) are kept as they are, each cut to
/// kMaxAuditName bytes, at most kMaxAuditNames of them: a model can write anything as a key,
/// a secret or a megabyte, so any other names are counted in one last entry,
/// "(N undeclared)", and the rest past the limit in "(N more)".
std::vector<std::string> argumentNames(const mcp::Json& arguments,
                                       const std::vector<std::string>& declared);

/// Bounds on what an audit row keeps of a call's argument names and tool name.
inline constexpr size_t kMaxAuditName = 64;
inline constexpr size_t kMaxAuditNames = 64;
inline constexpr size_t kMaxAuditTool = 200;

/// Returns `time` as ISO-8601 UTC with milliseconds: "2026-11-29T19:30:00.123Z".
std::string formatIsoUtc(std::chrono::system_clock::time_point time);

/// Returns `time` on this machine's clock (TZ) to the second: "2026-11-29 20:30:00".
std::string formatLocalTime(std::chrono::system_clock::time_point time);

/// Returns one audit row as the JSON object formatAuditLine writes.
mcp::Json auditRowJson(const AuditRecord& record);

/// Returns one audit row as a JSON object on one line, ending in '\n'.
std::string formatAuditLine(const AuditRecord& record);

/// Returns "allowed", "refused", "declined" or "failed" as a decision; nullopt otherwise.
std::optional<AuditDecision> parseAuditDecision(std::string_view text);

/// Returns the time formatIsoUtc wrote ("2026-11-29T19:30:00.123Z"); nullopt for other text.
std::optional<std::chrono::system_clock::time_point> parseIsoUtc(std::string_view text);

/// Reads back one row formatAuditLine wrote (with or without its '\n'). kProtocol saying
/// what is wrong for a line that is no row: not JSON, no object, or a field missing
/// (time, ability, tool, decision) or of the wrong type. Fields it does not know are ignored.
Result<AuditRecord> parseAuditLine(std::string_view line);

/// Returns `<dataDir>/audit.jsonl`, the file AuditLog::open writes.
std::string auditLogPath(const std::string& dataDir);

/// The longest line readAuditLog takes for a row; a longer one is skipped as damaged without
/// being held in memory. A real row is a few hundred bytes.
inline constexpr size_t kMaxAuditLine = size_t{1024} * 1024;

/// Which rows readAuditLog hands back.
struct AuditQuery {
  /// Only rows at or after this time.
  std::optional<std::chrono::system_clock::time_point> since;
  std::string ability;  ///< only this ability's rows; "" for every ability
  size_t limit = 0;     ///< only the newest this many of the rows selected; 0 for all
};

/// What readAuditLog found besides the rows.
struct AuditReadReport {
  bool missing = false;  ///< there is no log yet: no call has been audited
  size_t rows = 0;       ///< rows handed on
  size_t damaged = 0;    ///< lines skipped as no row (not JSON, cut off, longer than the limit)
  bool earlier = false;  ///< the limit left out lines written before the first row handed on
};

/// Reads the audit log at `path` and calls `row` for each row `query` selects, oldest first
/// (as they were written). Memory stays at one line whatever the file's size: it walks
/// back from the end to where the rows it needs begin (the newest `limit`, or the first
/// written less than a minute before `since`, the slack for rows of several processes written
/// out of order), then reads forward from there. Rows appended meanwhile are not read.
/// Damaged lines within that stretch are skipped and counted. kIo naming the call when the
/// file cannot be read.
Result<AuditReadReport> readAuditLog(const std::string& path, const AuditQuery& query,
                                     const std::function<void(const AuditRecord&)>& row);

/// The audit step (T8): `<dataDir>/audit.jsonl`, one JSON line per call. Opened with
/// O_APPEND|O_CLOEXEC and mode 0600; each line goes out in a single write(), so rows from
/// several kaja processes never interleave. Move-only; closes the file on destruction.
class AuditLog {
 public:
  /// Opens (creating it and `dataDir`, 0700, when missing) `<dataDir>/audit.jsonl`.
  static Result<AuditLog> open(const std::string& dataDir);

  /// Appends one row; kIo naming write() on failure or a short write.
  Result<void> append(const AuditRecord& record);

  /// Returns the file's path.
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  AuditLog(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}

  UniqueFd fd_;
  std::string path_;
};

}  // namespace kaja::core::policy
