#pragma once

// kaja hands temporary folders to servers (doctor gives roots servers an empty one), and a
// server may fill them with anything: deep trees, folders without permissions, symlinks
// out. Each folder is registered while it lives, so an exit on a signal removes it as
// well as the destructor does, and removal never follows a symlink and copes with trees
// deeper than PATH_MAX.

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "core/error.h"

namespace kaja::core {

/// A folder made with mkdtemp under $TMPDIR (or /tmp), mode 0700, removed with everything
/// in it when this object is destroyed or removeAllTempFolders() runs. While it lives it
/// holds an flock on the folder, which the kernel releases however kaja ends, so a later
/// run can tell a folder left by a killed kaja from one in use (removeStaleTempFolders).
class TempFolder {
 public:
  /// Makes "<$TMPDIR or /tmp>/<prefix>XXXXXX". Returns kIo naming mkdtemp and errno when
  /// it cannot.
  static Result<std::unique_ptr<TempFolder>> create(std::string_view prefix);

  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  /// Removes the folder and everything in it.
  ~TempFolder();

  /// Returns the folder's absolute path.
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  TempFolder(std::string path, int lock) : path_(std::move(path)), lock_(lock) {}
  std::string path_;
  int lock_;  ///< the open folder that holds the flock; closed after removal
};

/// Removes the folders "<$TMPDIR or /tmp>/<prefix>*" that a kaja killed outright left
/// behind: real folders (not symlinks) owned by this user, whose flock nobody holds, and
/// untouched for `minimumAge` (so a folder being made this instant is spared). Returns how
/// many it removed.
int removeStaleTempFolders(std::string_view prefix, std::chrono::seconds minimumAge);

/// Removes every TempFolder still alive, for an exit that skips destructors. Thread-safe.
void removeAllTempFolders();

/// Removes `path` and everything under it without following symlinks, making folders
/// writable and searchable as needed, for at most a few thousand passes. Returns true
/// when `path` is gone.
bool removeTree(const std::string& path);

}  // namespace kaja::core
