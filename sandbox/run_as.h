#pragma once
// Whom a confined server runs as. A worker started as root must not hand root to its
// servers: bwrap's user namespace would map the server's uid 0 onto the host's, and the
// kernel lets the host's uid 0 write sysctls and read root's files by file mode alone. So
// a root worker runs each server's command line as an unprivileged user (`--run-as`,
// `nobody` by default), switched to by `kaja sandbox enter` before bwrap starts.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace kaja::sandbox {

/// An unprivileged host user a root worker's servers run as.
struct RunAs {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string name;  ///< the user name when it has one, else the uid, for messages
};

/// The user a root worker's servers run as when --run-as is not given.
inline constexpr const char* kDefaultRunAs = "nobody";

/// Resolves `--run-as` for a worker whose effective uid is `euid`. `given` is a user name,
/// "UID" or "UID:GID"; "" is the default. For a root worker returns the user (the default
/// is kDefaultRunAs, looked up with getpwnam); for any other worker returns nullopt (its
/// servers run as itself), and fails when `given` names someone else, whom it cannot become.
/// Fails with kUsage, one sentence, for root (uid or gid 0), an unknown name or bad text.
core::Result<std::optional<RunAs>> resolveRunAs(const std::string& given, uid_t euid);

/// Parses enter's "UID:GID". Returns nullopt for anything else, or for uid or gid 0.
std::optional<RunAs> parseUidGid(const std::string& text);

/// Makes this process `who` for good: setgroups(0, NULL), setgid, setuid, each checked, then
/// checks that setuid(0) fails. Returns an errno-style message naming the failed step, or ""
/// when it worked. Calls nothing but those syscalls (safe after fork).
const char* dropPrivileges(const RunAs& who);

/// Returns, for each of `paths`, whether `who` may access it with `mode` (access(2): F_OK,
/// X_OK…), as checked in a child that has become `who`. Fails with kIo when the child could
/// not be made or could not become `who`.
core::Result<std::vector<bool>> accessibleTo(const RunAs& who,
                                             const std::vector<std::string>& paths, int mode);

}  // namespace kaja::sandbox
