#pragma once
// What a confined server sees: bwrap's filesystem arguments. The root is an empty tmpfs
// made read-only at the end; onto it go the private home (at insideHome) and /tmp,
// writable; then, read-only and at the same path, a whitelist of the
// system (/usr, /opt, the /bin, /sbin and /lib* links or folders, and the parts of /etc a
// program needs to start, run a TLS client and show fonts: no DNS configuration, since the
// egress proxy resolves names), then Confinement::readOnly, the server's own program and
// kaja; then every hidden path visible so far is covered (a folder by an empty read-only
// tmpfs, anything else by /dev/null), except that home and tmp themselves stay visible
// when they lie in a hidden folder; last a fresh /proc with /proc/sys read-only, a minimal
// /dev with a private /dev/shm, and the egress socket.

#include <string>
#include <vector>

#include "core/error.h"
#include "sandbox/confine.h"

namespace kaja::sandbox {

/// The parts of /etc a confined server sees, when the host has them.
const std::vector<std::string>& etcWhitelist();

/// Host paths hidden from every server whatever Confinement says (private TLS keys).
const std::vector<std::string>& alwaysHidden();

/// Returns bwrap's filesystem arguments for `where` and `program` (the server's argv[0],
/// shown read-only at its path when nothing else shows it; so is kaja, with egress, for
/// `kaja sandbox bridge`).
/// Fails with kInvalidConfig, one sentence, when home or tmp is not an existing folder, a
/// path is not absolute, a read-only path is "/", or insideHome collides with a path shown;
/// with kRefused when the server's tmp folder holds a link where a mount point must go
/// (paths shown below /tmp get their mount points in that folder).
core::Result<std::vector<std::string>> mountArgs(const Confinement& where,
                                                 const std::string& program);

}  // namespace kaja::sandbox
