#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/util/unique_fd.h"

namespace kaja::core {

/// Returns "call(what): strerror(err)", the shape of every syscall error kaja reports.
std::string syscallMessage(std::string_view call, std::string_view what, int err);

/// Calls `fn` again while it fails with EINTR; the one place kaja retries EINTR.
template <class Fn>
auto retryOnEintr(Fn fn) -> decltype(fn()) {
  decltype(fn()) result;
  do {
    result = fn();
  } while (result == -1 && errno == EINTR);
  return result;
}

/// Creates `dir` and its parents with `mode` for the ones it creates.
Result<void> makeDirectories(const std::string& dir, mode_t mode);

/// Returns the whole contents of `path`, or nullopt when it cannot be read or is no regular
/// file (it is opened without blocking, so a FIFO there cannot hang the caller).
std::optional<std::string> readTextFile(const std::string& path);

/// Reads `path` only when it is a regular file of at most `maxBytes`, opened non-blocking
/// so that a FIFO or a device can neither block the read nor feed it without end. Fails
/// with kNotFound when it does not exist, kUsage naming `shown` when it is a folder, not a
/// regular file or too large, and kIo otherwise.
Result<std::string> readRegularFile(const std::string& path, std::size_t maxBytes,
                                    std::string_view shown);

/// Replaces `path` with `content` so that a reader sees the old or the new file, never a
/// mix: writes a temporary file in the same folder with `mode`, fsyncs it, renames it into
/// place and fsyncs the folder. Creates the folder (0700) when missing.
Result<void> writeFileAtomically(const std::string& path, std::string_view content, mode_t mode);

/// Opens (creating it 0600) `lockFile` and takes an exclusive flock on it, waiting for any
/// other holder; the lock lasts while the returned descriptor is open, and the kernel drops
/// it however the process ends. kIo naming the call on failure.
Result<UniqueFd> lockExclusive(const std::string& lockFile);

}  // namespace kaja::core
