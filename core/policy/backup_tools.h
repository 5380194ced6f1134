#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "core/manifest/persona.h"
#include "core/mcp/types.h"
#include "core/policy/approval.h"

namespace kaja::core::policy {

/// The name under which kaja serves its own tools (`mcp__kaja__list_backups`).
inline constexpr const char* kKajaAbility = "kaja";

/// Returns true when any of `entries` gives a folder with `backup = true` (K16), so the
/// persona gets list_backups and restore_backup.
bool offersBackupTools(const std::vector<PersonaEntry>& entries);

/// Returns the definitions of list_backups (read-only) and restore_backup.
std::vector<mcp::Tool> backupTools();

/// Serves list_backups and restore_backup for the backed-up folders among `entries`.
/// A path outside those folders is refused; a restore is always asked for through
/// `approvals` and first backs up the file it replaces, so it can be undone.
class BackupTools {
 public:
  BackupTools(std::vector<PersonaEntry> entries, std::string home, std::string backupsDir,
              ApprovalSession& approvals);

  /// Runs `tool` with `arguments`. kRefused when a rule or the approver says no,
  /// kUsage for bad arguments, kNotFound for an unknown copy.
  Result<mcp::ToolResult> call(const std::string& tool, const mcp::Json& arguments);

 private:
  Result<std::string> backedUpPath(const mcp::Json& arguments) const;

  std::vector<PersonaEntry> entries_;
  std::string home_;
  std::string backupsDir_;
  ApprovalSession& approvals_;
};

}  // namespace kaja::core::policy
