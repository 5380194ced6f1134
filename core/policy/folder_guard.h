#pragma once

#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/manifest/ability.h"
#include "core/manifest/persona.h"
#include "core/mcp/types.h"
#include "core/policy/refusal.h"

namespace kaja::core::policy {

/// One folder a persona gives, resolved.
struct GuardedFolder {
  std::string given;     ///< as written in the persona, e.g. "~/projects/site"
  std::string resolved;  ///< `~` expanded and symlinks followed (see resolvePath)
  bool readOnly = false;
  bool backup = false;
  bool kajaOwn = false;  ///< one of kaja's own folders (settings, data, backups): never written
};

/// One place a path argument may land: one reading of it (see resolveInterpretations).
struct Landing {
  std::string resolved;                   ///< where a write would land under this reading
  const GuardedFolder* folder = nullptr;  ///< the nearest folder; points into the guard
  bool backup = false;  ///< a copy is due: the nearest folder, byte for byte or through
                        ///< equivalent names, is backed up
};

/// One path argument of a call that passed the check.
struct CheckedPath {
  std::string argument;                   ///< the argument's name, from `pathArgs`
  std::string given;                      ///< the value as the model sent it
  std::string resolved;                   ///< where a write lands as the kernel reads it
  const GuardedFolder* folder = nullptr;  ///< the nearest folder; points into the guard
  std::vector<Landing> landings;          ///< every reading, the kernel's first; all writable
};

/// Returns the roots of `entry` that kaja can honour for `ability` (K15): without
/// `pathArgs` no call can be checked, so read-only and backup folders are left out.
std::vector<PersonaRoot> usableRoots(const Ability& ability, const PersonaEntry& entry);

/// The folder check step (K15): for a call that may write, each argument named in the
/// ability's `pathArgs` (a string or an array of strings) must resolve into a folder the
/// persona gives, and the nearest such folder must not be read-only. A server may read a path
/// in more than one way (`..` collapsed before or after symlinks, a missing name mapped to an
/// existing equivalent one), so every reading is judged, and a folder is also matched through
/// equivalent names: all must land in writable folders. A path that holds a read-only folder
/// or one of kaja's own is refused too (moving it would take the folder's protection away),
/// and one that holds a backed-up folder lands there as well, so that folder is copied first.
/// A path holding a control character,
/// a direction control or ill-formed UTF-8 is refused outright. Immutable after create().
class FolderGuard {
 public:
  /// Returns a guard over `roots`, each expanded with `home` and resolved. `kajaOwn` are kaja's
  /// own folders (its settings, data and backups): no call may write in them or move them,
  /// whatever folder holds them. kInvalidConfig when a root is neither absolute nor `~/…`;
  /// kIo when one cannot be resolved.
  static Result<FolderGuard> create(const std::vector<PersonaRoot>& roots, std::string home,
                                    const std::vector<std::string>& kajaOwn = {});

  /// Returns the checked path arguments of a call to `ability` that may write, or the refusal
  /// naming the argument, the path and the rule. With no folders there is nothing to guard
  /// and every path passes unchecked (an empty list). A relative path is refused while any
  /// folder is read-only or backed up, and passes unchecked otherwise.
  [[nodiscard]] std::expected<std::vector<CheckedPath>, Refusal> check(
      const Ability& ability, const mcp::Json& arguments) const;

  /// Returns the nearest (longest) folder that contains `resolvedPath`, or null.
  [[nodiscard]] const GuardedFolder* nearestFolder(const std::string& resolvedPath) const;

  /// Returns the nearest folder that contains `resolvedPath` when names are compared with
  /// equivalentNames(), the read-only one on a tie, or null.
  [[nodiscard]] const GuardedFolder* nearestEquivalentFolder(const std::string& resolvedPath) const;

  /// Returns the folders, longest resolved path first.
  [[nodiscard]] const std::vector<GuardedFolder>& folders() const { return folders_; }
  /// Returns true when any folder is read-only.
  [[nodiscard]] bool anyReadOnly() const { return anyReadOnly_; }
  /// Returns true when any folder is backed up.
  [[nodiscard]] bool anyBackup() const { return anyBackup_; }
  /// Returns true when a folder holds one of kaja's own folders.
  [[nodiscard]] bool holdsKajaOwn() const { return relativeReachesKaja_; }

 private:
  std::expected<CheckedPath, Refusal> checkOne(const Ability& ability, const std::string& argument,
                                               const std::string& given) const;
  std::optional<Refusal> judgeReading(const Ability& ability, const std::string& reading,
                                      const std::string& resolved, CheckedPath& checked) const;

  std::vector<GuardedFolder> folders_;
  std::string home_;
  bool relativeReachesKaja_ = false;  ///< a root holds one of kaja's own folders
  bool anyReadOnly_ = false;
  bool anyBackup_ = false;
};

}  // namespace kaja::core::policy
