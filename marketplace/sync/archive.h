#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

namespace kaja::marketplace::sync {

/// Bounds on what one archive may unpack to. A marketplace is text: manifests, personas and
/// perhaps a README, so these are generous for that and small for anything else.
struct UnpackLimits {
  std::size_t maxEntries = 20000;
  std::uint64_t maxTotalBytes = 128ULL * 1024 * 1024;
  std::uint64_t maxFileBytes = 16ULL * 1024 * 1024;
  /// Unpacked bytes per archive byte; past it (once over `ratioFloorBytes`) the archive is
  /// taken for a bomb. Text compresses to about a tenth; a bomb to a thousandth or less.
  double maxRatio = 200;
  std::uint64_t ratioFloorBytes = 4ULL * 1024 * 1024;
};

/// What an unpack wrote.
struct UnpackStats {
  std::size_t files = 0;
  std::size_t folders = 0;
  std::size_t links = 0;
  std::uint64_t bytes = 0;
};

/// Unpacks `archive` (tar, optionally gzip, zstd, xz or bzip2 compressed, or zip; the format
/// is read from the bytes, not a name) into the existing empty folder `into`.
///
/// Every entry is checked before it is written, and the first one that fails stops the
/// unpack with kRefused naming `label` and the entry:
/// - a name that is absolute, holds a `..` part, a backslash or a control character;
/// - a hard link, a device, a FIFO or a socket;
/// - a symbolic link whose target is absolute or holds `..` (so no link can lead out of
///   `into`, however links chain);
/// - an entry that would be written through a link, or a second entry of the same name;
/// - more entries or bytes than `limits` allow, or a ratio beyond it.
/// Files are created with O_EXCL and O_NOFOLLOW under a descriptor of `into`, never by a
/// path that a link could redirect. A damaged archive fails with kInvalidConfig. Whatever
/// was written before a failure is left for the caller, who unpacks into a fresh folder and
/// removes it.
core::Result<UnpackStats> unpackArchive(std::string_view archive, const std::string& into,
                                        const std::string& label, const UnpackLimits& limits = {});

/// Returns the archive entry name `name` split into its parts, with `.` parts and a leading
/// `./` dropped, or the reason it is refused ("is absolute", "holds ..", …).
core::Result<std::string> cleanEntryName(std::string_view name);

}  // namespace kaja::marketplace::sync
