#pragma once
// The folders personas give abilities, as Docker bind mounts (K25): each at its own path,
// read-only only when every persona that names it marks it read-only.

#include <string>
#include <vector>

#include "marketplace/catalog.h"

namespace kaja::personas {

/// One folder to mount.
struct DockerMount {
  std::string source;                  ///< the folder on the host: absolute, symlinks resolved
  std::string path;                    ///< where it is mounted: the persona's path, `~` expanded
  bool readOnly = true;                ///< every persona entry naming it marks it read-only
  std::vector<std::string> personas;   ///< the personas that name it, sorted
  std::vector<std::string> abilities;  ///< the abilities it is given to, sorted
};

/// The mounts, and what could not be mounted.
struct DockerMountPlan {
  std::vector<DockerMount> mounts;  ///< sorted by path, so a parent comes before its children
  /// Folders skipped because they do not exist (or are not folders), and broken personas.
  std::vector<std::string> warnings;
  /// Folders `-v` or a shell cannot carry (a space, ":", ",", "*", "?", "[" or a control
  /// character in the path).
  std::vector<std::string> refused;
};

/// Plans the mounts for every folder any persona of `catalog` gives any ability, or, when
/// `ability` is not empty, gives that ability. `~` expands to `home`. Each folder is mounted
/// at the path its persona names (a symlink's own path), from the folder it resolves to.
DockerMountPlan planDockerMounts(const marketplace::Catalog& catalog, const std::string& home,
                                 const std::string& ability = "");

/// Returns the value of `docker run -v` for `mount`: "SOURCE:PATH" or "SOURCE:PATH:ro".
std::string volumeOf(const DockerMount& mount);

}  // namespace kaja::personas
