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

/// Returns a usage error naming `stamp` (escaped) when it is not one isBackupStamp accepts.
Result<void> checkBackupStamp(std::string_view stamp);

/// Returns the time `stamp` names (a "-N" suffix does not change it), or nullopt when it is
/// not a stamp isBackupStamp accepts or names no real date and time.
std::optional<std::chrono::system_clock::time_point> parseBackupStamp(std::string_view stamp);

/// One stored copy of a file.
struct BackupEntry {
  std::string stamp;       ///< the copy's file name
  std::string storedPath;  ///< <backupsDir>/<the file's full path>/<stamp>
  uint64_t size = 0;
};

/// One copy found by looking through the whole store: the file it was taken of, and the copy.
struct StoredCopy {
  std::string original;  ///< the absolute path of the file the copy was taken of
  BackupEntry entry;
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

  /// Returns every copy the store holds, of every file, newest first (copies of one
  /// millisecond by their "-N" suffix, highest first, then by the original's path). Links in
  /// the store are not followed and names that are not stamps (a copy still being written)
  /// are left out. Empty when nothing was ever kept; kIo naming the folder it could not read.
  [[nodiscard]] Result<std::vector<StoredCopy>> listAllBackups() const;

  /// Returns what the copy at `storedPath` (a path backupFile returned) is a copy of, with
  /// its stamp and size; nullopt when `storedPath` is no regular file of this store.
  [[nodiscard]] std::optional<StoredCopy> describeCopy(const std::string& storedPath) const;

  /// Puts copy `stamp` back at `resolvedPath`, first backing up the file it replaces (so a
  /// restore can be undone), then replacing it atomically. Returns the copy kept of the file
  /// it replaced (nullopt when there was none). kNotFound for an unknown stamp, kUsage for a
  /// malformed one; the caller asks the person first and checks the folder.
  [[nodiscard]] Result<std::optional<std::string>> restoreBackup(const std::string& resolvedPath,
                                                                 const std::string& stamp) const;

  /// Returns the folder that holds the copies of `resolvedPath`.
  [[nodiscard]] std::string folderFor(const std::string& resolvedPath) const;

 private:
  std::string backupsDir_;
  Clock clock_;
  TreeLimits treeLimits_;
};

}  // namespace kaja::core::policy
