#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mcp/types.h"
#include "core/policy/refusal.h"

namespace kaja::core::policy {

/// kaja's own files (K15): its settings folder, which holds the secrets and sign-in tokens,
/// and its data folder, which holds the audit log and the backups. No request kaja passes on
/// may name anything in them, whatever folders the persona gives and whether it reads or
/// writes: not in any spelling a server may read (`..`, case, Unicode look-alikes, `~/`,
/// percent-encoding in a file: URI), not through a symlink and not through another name of
/// one of their files (a hard link). Folders kaja fills for the model to read (the whole
/// text the output guard cut) are left out. Not thread-safe: one per call or request.
class OwnFiles {
 public:
  OwnFiles() = default;
  /// `folders` and `readable` (folders inside them that may be read) are absolute; ones that
  /// cannot be resolved are left out. `home` is what `~` means.
  OwnFiles(std::vector<std::string> folders, std::vector<std::string> readable, std::string home);

  /// Returns true when there are no folders to keep. They are resolved (and those that do not
  /// exist left out) only when the first path is checked, since most calls name no path.
  [[nodiscard]] bool empty() const { return givenFolders_.empty(); }

  /// Returns the refusal when the call's arguments name kaja's own files. Each value of an
  /// argument in `pathArgs` (a string or a list of strings) is judged as a path: one that
  /// cannot be resolved is refused, and so is a relative one when `refuseRelative` (a
  /// persona folder holds kaja's folders, so the server's working folder may too); else a
  /// relative one is judged from each of `workingFolders` (where the server may run). Every
  /// other string at any depth that reads as a path (it starts with `/`, `~/` or `file:`),
  /// and every key that does, is judged too; one that cannot be resolved is judged by its
  /// text alone. Any other string or key with a `/` in it may be a relative path: it is judged
  /// from each of `workingFolders`, and passes where it cannot be resolved. `who` names the
  /// ability in the message.
  [[nodiscard]] std::optional<Refusal> checkArguments(
      const mcp::Json& arguments, const std::vector<std::string>& pathArgs, bool refuseRelative,
      std::string_view who, const std::vector<std::string>& workingFolders = {}) const;

  /// Returns the refusal when `folder`, an absolute folder a server works in (described by
  /// `what`), is in kaja's own folders or cannot be checked.
  [[nodiscard]] std::optional<Refusal> checkFolder(const std::string& folder,
                                                   const std::string& what,
                                                   std::string_view who) const;

  /// Returns the refusal when `uri`, a file: URI a server is asked to read, names kaja's own
  /// files or cannot be checked (a relative path after `file:`). Other schemes pass.
  [[nodiscard]] std::optional<Refusal> checkUri(std::string_view uri, std::string_view who) const;

 private:
  struct Folder {
    std::string given;
    std::string resolved;
  };
  /// Returns the refusal for `given`, an absolute or `~/` path, described by `what`.
  /// A path kaja cannot resolve is refused when `strict`, else judged by its text when a name
  /// in it is too long to open; with `passUnresolvable` (a relative path guessed from text
  /// that may be no path at all) it passes.
  std::optional<Refusal> checkPath(const std::string& what, const std::string& given, bool strict,
                                   std::string_view who, bool passUnresolvable = false) const;
  /// Returns the folder of kaja's that `reading` (resolved) lands in, or null.
  const Folder* landing(const std::string& reading) const;
  /// Returns the file of kaja's that `reading` is another name of, or "" (also when
  /// kaja's folders hold too many files to tell: then `unsure` is set).
  std::string sameFileAs(const std::string& reading, bool& unsure) const;

  /// Resolves the folders given, once.
  void resolveFolders() const;

  std::vector<std::string> givenFolders_;
  std::vector<std::string> givenReadable_;
  std::string home_;
  mutable bool resolved_ = false;
  mutable std::vector<Folder> folders_;
  mutable std::vector<std::string> readable_;
  /// The files in kaja's folders by device and inode, read when a file with other names is
  /// first checked.
  mutable std::optional<std::map<std::pair<dev_t, ino_t>, std::string>> ownFiles_;
  mutable bool tooManyOwnFiles_ = false;  ///< the folders hold more than the files read
};

/// Returns true when `arguments` may name a path OwnFiles::checkArguments would judge: a value
/// of an argument in `pathArgs`, or any string or key that reads as a path. Cheap: it touches
/// no file, so a call that names none need not set up the check at all.
bool mayNamePaths(const mcp::Json& arguments, const std::vector<std::string>& pathArgs);

/// Returns the path a file: URI names, percent-decoded and without its host (a server may
/// ignore "localhost" or any other host), or nullopt when `uri` has another scheme.
std::optional<std::string> fileUriPath(std::string_view uri);

}  // namespace kaja::core::policy
