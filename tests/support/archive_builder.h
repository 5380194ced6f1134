#pragma once

// Builds archives in memory with libarchive, hostile ones included (names with "..",
// links out, devices), for the marketplace tests.
#include <string>
#include <vector>

namespace kaja::testing {

/// One entry of an archive to build.
struct ArchiveEntry {
  enum class Kind { kFile, kFolder, kSymlink, kHardlink, kFifo, kCharDevice };
  std::string name;  ///< written exactly as given, "../x" and "/etc/x" included
  std::string data;  ///< a file's bytes
  Kind kind = Kind::kFile;
  std::string target;  ///< a link's target
  unsigned mode = 0644;
};

/// The container and compression of a built archive.
enum class ArchiveFormat { kTar, kTarGz, kTarZst, kTarXz, kZip };

/// Returns the archive's bytes; aborts the test program if libarchive refuses to write.
std::string buildArchive(const std::vector<ArchiveEntry>& entries,
                         ArchiveFormat format = ArchiveFormat::kTarGz);

/// Returns entries for a marketplace of `count` abilities (`ability-N`, each a `/bin/cat`
/// command) and one persona `team` naming them all, under `top/` when `top` is not empty.
std::vector<ArchiveEntry> marketplaceEntries(int count, const std::string& top = "");

}  // namespace kaja::testing
