#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/policy/folder_guard.h"

namespace kaja::core::policy {

/// The clock seam: returns "now". Tests pass a fixed or stepping clock.
using Clock = std::function<std::chrono::system_clock::time_point()>;

/// Returns `time` as a backup stamp in UTC with milliseconds: "20261129T193000.123Z".
std::string formatBackupStamp(std::chrono::system_clock::time_point time);

/// Returns true for a stamp this module writes: formatBackupStamp's form, optionally followed
/// by "-N" when two copies fell in the same millisecond. Nothing else (no '/', no "..").
bool isBackupStamp(std::string_view stamp);

/// One stored copy of a file.
struct BackupEntry {
  std::string stamp;       ///< the copy's file name
  std::string storedPath;  ///< <backupsDir>/<the file's full path>/<stamp>
  uint64_t size = 0;
};

/// How much a folder may hold for kaja to copy it before a call moves or changes it.
struct TreeLimits {
  uint64_t maxBytes = 64ULL * 1024 * 1024;  ///< all regular files together
  uint64_t maxFiles = 10000;                ///< regular files, folders and links together
};

/// The backup step (K16): copies of files kept at `<backupsDir>/<full path>/<stamp>`, every
/// copy kept. Each copy is written to a temporary name, fsynced and linked into place, so a
/// stamp names a complete copy or nothing. Copies and their folders are private (0600/0700).
class BackupStore {
 public:
  /// Keeps copies under `backupsDir` (created on first use), stamped with `clock`.
  explicit BackupStore(std::string backupsDir, Clock clock = std::chrono::system_clock::now,
                       TreeLimits treeLimits = {});

  /// Copies the file at `resolvedPath` (absolute, symlinks already followed) and returns the
  /// copy's path; returns nullopt when there is no such file yet (nothing to keep) or it is
  /// not a regular file (folders are not copied). kIo naming the call when the copy fails.
  [[nodiscard]] Result<std::optional<std::string>> backupFile(
      const std::string& resolvedPath) const;

  /// Copies every regular file below the folder `resolvedDir` (symlinks are not followed) and
  /// returns the copies, each kept as backupFile keeps one. Counts first and copies nothing
  /// when the folder holds more than the tree limits allow (kRefused, saying why).
  [[nodiscard]] Result<std::vector<std::string>> backupTree(const std::string& resolvedDir) const;

  /// Backs up every landing of `paths` that is due a copy (Landing::backup), before a call
  /// that may change them: each file, and with `copyFolders` each folder as a tree (a move
  /// takes a folder's files out of reach of later copies). Returns the copies made; on the
  /// first failure returns an error whose message says the call must not run.
  [[nodiscard]] Result<std::vector<std::string>> backupBeforeCall(
      const std::vector<CheckedPath>& paths, bool copyFolders = true) const;

  /// Returns the copies of `resolvedPath`, oldest first (empty when there are none).
  [[nodiscard]] Result<std::vector<BackupEntry>> listBackups(const std::string& resolvedPath) const;

  /// Puts copy `stamp` back at `resolvedPath`, first backing up the file it replaces (so a
  /// restore can be undone), then replacing it atomically. kNotFound for an unknown stamp,
  /// kUsage for a malformed one; the caller asks the person first and checks the folder.
  [[nodiscard]] Result<void> restoreBackup(const std::string& resolvedPath,
                                           const std::string& stamp) const;

  /// Returns the folder that holds the copies of `resolvedPath`.
  [[nodiscard]] std::string folderFor(const std::string& resolvedPath) const;

 private:
  std::string backupsDir_;
  Clock clock_;
  TreeLimits treeLimits_;
};

}  // namespace kaja::core::policy
