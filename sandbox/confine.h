#pragma once
// How one stdio server is confined: the bubblewrap (bwrap) command line that gives it its
// own pid, mount, ipc, uts, cgroup, user and network namespaces, the filesystem it sees
// (mounts.h) and, when limits apply, the cgroup it starts in (cgroups.h, enter.h).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/process/launch_plan.h"
#include "sandbox/run_as.h"

namespace kaja::sandbox {

/// Where HOME appears inside every confined server unless Confinement says otherwise.
inline constexpr const char* kDefaultInsideHome = "/home/user";
/// Where the server's private tmp folder appears inside (TMPDIR).
inline constexpr const char* kInsideTmp = "/tmp";
/// Where the worker's egress proxy socket appears inside.
inline constexpr const char* kInsideEgressSocket = "/run/kaja/egress.sock";

/// Where one confined server lives and what it may see.
struct Confinement {
  std::string kaja;  ///< absolute path of the kaja binary (runs `kaja sandbox enter`/`bridge`)
  std::string home;  ///< host folder private to this (user, ability): its HOME, writable
  std::string tmp;   ///< host folder private to it: its /tmp, writable; best emptied before
                     ///< each start (paths shown below /tmp get their mount points there)
  std::vector<std::string> readOnly;  ///< extra host paths it sees read-only at the same path
                                      ///< (the marketplace, node_modules, kaja's own folder);
                                      ///< ones that do not exist are left out
  std::vector<std::string> hidden;    ///< host paths it must never see (the worker's key file,
                                      ///< the worker's state folder with other users' homes),
                                      ///< even inside a read-only path; home and tmp stay
                                      ///< visible when they lie inside one
  std::string egressSocket;           ///< host path of the worker's egress proxy unix socket, bound
                             ///< inside at kInsideEgressSocket; "" gives it no way out at all
  std::uint16_t proxyPort = 3128;    ///< where `kaja sandbox bridge` listens inside
  std::vector<std::string> cgroups;  ///< cgroup folders made for it (v1: memory and pids), or none
  std::string insideHome = kDefaultInsideHome;  ///< where home appears inside (its HOME);
                                                ///< resolve the server's plan against it
  /// Lets the server make user namespaces of its own (Chromium's sandbox does). false (the
  /// default) adds bwrap's --disable-userns, which shrinks what the kernel exposes to it.
  bool nestedUserNamespaces = false;
  std::string bwrap;  ///< the bwrap program; "" looks in /usr/bin, /usr/local/bin, then PATH
  /// The unprivileged user the server runs as (a root worker's servers never run as root):
  /// `kaja sandbox enter --user` becomes it before bwrap starts. nullopt runs it as the
  /// worker's own user (a worker that is not root).
  std::optional<RunAs> runAs;
};

/// Returns the command line that runs `server` confined: when cgroups or runAs are given,
/// `kaja sandbox enter [--cgroup DIR]… [--user UID:GID] --` first; then bwrap with its own pid,
/// mount, ipc, uts, cgroup, user and network namespaces (--unshare-all), --die-with-parent,
/// --new-session, no capabilities, the filesystem of mountArgs (mounts.h), and the
/// working folder (the plan's when set, else HOME); then, when egressSocket is set,
/// `kaja sandbox bridge --listen 127.0.0.1:PORT --socket kInsideEgressSocket --` and the
/// server's argv. The environment is the server's own with HOME and TMPDIR set to the inside
/// paths and, with egress, egressProxyEnvironment(PORT) (egress_proxy.h). Variables that steer the
/// dynamic loader (LD_*, GCONV_PATH, GLIBC_TUNABLES…) reach only the server, through bwrap's
/// --setenv, never the steps that run outside it. Fails with kSpawn when bwrap is missing
/// and kInvalidConfig when `where` is incomplete or runAs is root, each with one sentence.
core::Result<core::LaunchPlan> confine(const core::LaunchPlan& server, const Confinement& where);

/// Returns the bwrap program confine() would use for `where`, or kSpawn with one sentence
/// saying to install bubblewrap.
core::Result<std::string> findBwrap(const Confinement& where);

}  // namespace kaja::sandbox
