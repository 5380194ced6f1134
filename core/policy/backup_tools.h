#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/manifest/persona.h"
#include "core/mcp/types.h"
#include "core/policy/approval.h"
#include "core/policy/audit_log.h"

namespace kaja::core::policy {

/// The name under which kaja serves its own tools (`mcp__kaja__list_backups`).
inline constexpr const char* kKajaAbility = "kaja";

/// Returns true when any of `entries` gives a folder with `backup = true` (K16), so the
/// persona gets list_backups and restore_backup.
bool offersBackupTools(const std::vector<PersonaEntry>& entries);

/// Returns the definitions of list_backups (read-only) and restore_backup.
std::vector<mcp::Tool> backupTools();

/// Serves list_backups and restore_backup for the backed-up folders among `entries`.
/// A path outside those folders is refused. A restore is a write: it passes the same folder
/// check as any call (so never into a read-only folder, whatever folder holds it), is always
/// asked for through `approvals`, and first backs up the file it replaces, so it can be undone.
/// Each call writes one audit row when `audit` is given.
class BackupTools {
 public:
  /// `approvals` and `audit` (may be null) must outlive the tools.
  BackupTools(std::vector<PersonaEntry> entries, std::string home, std::string backupsDir,
              ApprovalSession& approvals, AuditLog* audit = nullptr, std::string persona = {},
              std::vector<std::string> kajaFolders = {});

  /// Runs `tool` with `arguments`. kRefused when a rule or the approver says no,
  /// kUsage for bad arguments, kNotFound for an unknown copy.
  Result<mcp::ToolResult> call(const std::string& tool, const mcp::Json& arguments);

  /// call() for an event loop, where the approver may answer later. The tools must stay
  /// alive until `done` runs.
  void callAsync(const std::string& tool, const mcp::Json& arguments,
                 std::function<void(Result<mcp::ToolResult>)> done);

 private:
  Result<mcp::ToolResult> audited(const std::string& tool, const mcp::Json& arguments,
                                  std::chrono::steady_clock::time_point started,
                                  Result<mcp::ToolResult> result);
  Result<mcp::ToolResult> run(const std::string& tool, const mcp::Json& arguments);
  Result<std::string> listedPath(const mcp::Json& arguments) const;
  Result<std::string> restorablePath(const mcp::Json& arguments) const;

  std::vector<PersonaEntry> entries_;
  std::string home_;
  std::string backupsDir_;
  ApprovalSession& approvals_;
  AuditLog* audit_;
  std::string persona_;
  std::vector<std::string> kajaFolders_;
};

}  // namespace kaja::core::policy
