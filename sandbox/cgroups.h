#pragma once
// Memory and pids limits per confined server. At start the worker looks for a cgroup tree
// it may write below its own cgroup: the unified v2 tree (memory and pids in
// cgroup.controllers, and enabled, or enableable, in cgroup.subtree_control), else the v1
// memory and pids hierarchies. It makes one parent group for itself there and one group per
// server inside it. `kaja sandbox enter` (enter.h) moves a server's first process into its
// group before it execs bwrap, so everything the server ever starts is counted and can be
// killed together.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace kaja::sandbox {

/// Returns the folder of this process's cgroup for `controller` ("memory", "pids"; "" for
/// the unified v2 tree), given the text of /proc/self/mountinfo and /proc/self/cgroup: the
/// mount of that hierarchy plus the process's path below the mount's root. nullopt when no
/// mount shows it.
std::optional<std::string> cgroupFolder(std::string_view mountinfo, std::string_view cgroup,
                                        std::string_view controller);

/// The limits of one server's group; 0 means no limit.
struct CgroupLimits {
  std::uint64_t memoryBytes = 0;  ///< memory (and, where the kernel counts it, swap)
  std::uint64_t pids = 0;         ///< processes and threads
};

/// One server's cgroup: its folders (one on v2; a memory and a pids folder on v1). Move-only;
/// destroying it removes it as remove() does.
class ServerCgroup {
 public:
  ServerCgroup() = default;
  ServerCgroup(ServerCgroup&& other) noexcept;
  ServerCgroup& operator=(ServerCgroup&& other) noexcept;
  ServerCgroup(const ServerCgroup&) = delete;
  ServerCgroup& operator=(const ServerCgroup&) = delete;
  ~ServerCgroup();

  /// Returns the folders to give Confinement::cgroups (empty once removed).
  [[nodiscard]] const std::vector<std::string>& folders() const { return folders_; }
  /// Returns the pids now in the group (the union over its folders).
  [[nodiscard]] std::vector<pid_t> pids() const;
  /// Kills everything still in the group (cgroup.kill on v2, else SIGKILL to every pid in
  /// cgroup.procs until none is left) and removes its folders. Fails with kIo, one sentence,
  /// when a folder could not be removed within about 2 s. Blocks until then (usually a few
  /// milliseconds), so an event loop should call it from another thread.
  core::Result<void> remove();

 private:
  friend class CgroupTree;
  std::vector<std::string> folders_;
  bool unified_ = false;
};

/// The writable cgroup tree found at start, with the worker's parent group in it. Move-only;
/// destroying it removes the parent group (which fails, harmlessly, while a server's group
/// is still in it).
class CgroupTree {
 public:
  /// Finds a writable tree below this process's own cgroups and makes the parent group
  /// `name` ([A-Za-z0-9._-], unique per worker, such as "kaja-sandbox-PID") there. When
  /// none is writable, fails with kIo whose message is the one sentence the worker prints
  /// at start.
  static core::Result<CgroupTree> open(const std::string& name);

  CgroupTree(CgroupTree&& other) noexcept;
  CgroupTree& operator=(CgroupTree&& other) noexcept;
  CgroupTree(const CgroupTree&) = delete;
  CgroupTree& operator=(const CgroupTree&) = delete;
  ~CgroupTree();

  /// Returns true on the unified v2 tree, false on v1.
  [[nodiscard]] bool unified() const { return unified_; }
  /// Returns the parent group's folders (one on v2; memory and pids on v1).
  [[nodiscard]] const std::vector<std::string>& parents() const { return parents_; }

  /// Makes the group `name` ([A-Za-z0-9._-]) for one server, with `limits`. Fails with
  /// kInvalidConfig for a bad name and kIo (naming the call and errno) when the kernel
  /// refuses; nothing is left behind then.
  core::Result<ServerCgroup> create(const std::string& name, const CgroupLimits& limits) const;

 private:
  CgroupTree() = default;
  std::vector<std::string> parents_;
  bool unified_ = false;
};

}  // namespace kaja::sandbox
