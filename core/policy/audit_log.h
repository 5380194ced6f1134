#pragma once

#include <chrono>
#include <cstdint>
#include <string>
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

/// Returns the top-level keys of a call's arguments, sorted; values are never read.
std::vector<std::string> argumentNames(const mcp::Json& arguments);

/// Returns `time` as ISO-8601 UTC with milliseconds: "2026-11-29T19:30:00.123Z".
std::string formatIsoUtc(std::chrono::system_clock::time_point time);

/// Returns one audit row as a JSON object on one line, ending in '\n'.
std::string formatAuditLine(const AuditRecord& record);

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
