#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

namespace kaja::sandbox {

/// The worker's signing key: the whole content of its key file.
struct WorkerKey {
  std::string bytes;
};

/// The shortest key the worker accepts.
inline constexpr std::size_t kMinKeyBytes = 32;
/// The longest a token may live: a token cannot be taken back short of a new key, so the
/// worker refuses one that claims to expire later than this from now.
inline constexpr std::int64_t kMaxTokenSeconds = 366LL * 24 * 3600;

/// Reads the key file at `path`. Refuses (kUsage, one sentence saying what to do) a file
/// that is missing, not a regular file, shorter than kMinKeyBytes, or that its group or
/// others may read or write.
core::Result<WorkerKey> readKeyFile(const std::string& path);

/// Returns whether `name` is a valid user id or ability name for the worker:
/// 1 to 64 characters of [a-z0-9._-], and not "." or "..".
bool validName(std::string_view name);

/// Makes a bearer token for `user` that expires at `expires` (seconds since the epoch):
/// "kj1_<expires>_<user>_<mac>", where mac is HMAC-SHA256 under `key` of everything
/// before it, in hex. `user` must be validName.
core::Result<std::string> makeToken(const WorkerKey& key, std::string_view user,
                                    std::int64_t expires);

/// Checks `token` against `key` at time `now` (seconds since the epoch) and returns the
/// user it was made for. Fails with kRefused when it is malformed, signed under another
/// key (compared in constant time) or expired.
core::Result<std::string> verifyToken(const WorkerKey& key, std::string_view token,
                                      std::int64_t now);

/// Returns the current time in seconds since the epoch.
std::int64_t unixNow();

}  // namespace kaja::sandbox
