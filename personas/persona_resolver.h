#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/manifest/ability.h"
#include "core/manifest/persona.h"
#include "marketplace/catalog.h"

namespace kaja::personas {

/// One of a persona's folders with `~` expanded and symlinks resolved.
struct ResolvedRoot {
  std::string path;     ///< absolute, canonical
  std::string written;  ///< as the persona wrote it, for messages
  bool readOnly = false;
  bool backup = false;
};

/// One ability as a persona makes it active.
struct ActiveAbility {
  core::Ability ability;
  std::optional<std::vector<std::string>> tools;  ///< the persona entry's narrowing (K13)
  std::vector<ResolvedRoot> roots;                ///< existing folders only
  core::PersonaEntry entry;  ///< the persona's entry, its roots narrowed to existing folders
  bool off = false;          ///< true when the persona cannot use it (see offReason)
  std::string offReason;     ///< e.g. a roots ability given no folders (K14)
};

/// A persona ready for the host: its abilities with their folders, and what was skipped.
struct ResolvedPersona {
  std::string name;
  std::vector<ActiveAbility> abilities;
  std::vector<std::string> warnings;  ///< unknown or broken abilities, missing folders

  /// Returns the entry for `ability`, or nullptr.
  [[nodiscard]] const ActiveAbility* find(const std::string& ability) const;
};

/// Resolves persona `name` from `catalog`: each listed ability with its tools and folders.
/// Folders that do not exist are dropped with a warning; a `roots` ability left with no
/// folders is marked off. Fails only when the persona is unknown or broken.
core::Result<ResolvedPersona> resolvePersona(const marketplace::Catalog& catalog,
                                             const std::string& name, const std::string& home);

/// Returns `path` with `~` expanded and, when it exists, symlinks resolved; else nullopt.
std::optional<std::string> resolveFolder(const std::string& path, const std::string& home);

/// The persona used when none was chosen with `kaja persona use`.
inline constexpr const char* kDefaultPersona = "default";

/// Returns the active persona's name: the one saved in `<configDir>/persona`, else
/// "default".
std::string activePersona(const std::string& configDir);

/// Saves `name` as the active persona in `<configDir>/persona`.
core::Result<void> setActivePersona(const std::string& configDir, const std::string& name);

}  // namespace kaja::personas
