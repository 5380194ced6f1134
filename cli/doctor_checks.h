#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/context.h"
#include "core/error.h"

namespace kaja::cli {

/// One thing wrong with a persona, as `kaja doctor` reports it.
struct PersonaProblem {
  /// broken (the file does not load), unknown-ability, broken-ability, missing-folder,
  /// not-a-folder, unreachable-folder, unguarded-folders (read-only or backed-up folders given
  /// to an ability whose manifest names no pathArgs) or unknown-active (the chosen persona is
  /// gone).
  std::string kind;
  std::string persona;
  std::string file;        ///< the persona file (for unknown-active, the file that names it)
  int line = 0;            ///< the line in `file`, 0 when not known
  std::string detail;      ///< one sentence: what is wrong and what to do
  bool shipped = false;    ///< a persona that comes with kaja
  bool fails = false;      ///< counts toward doctor's exit status 1
  std::string folder;      ///< for folder kinds: the folder, `~` expanded
  std::string written;     ///< for folder kinds: the folder as the persona writes it
  std::string command;     ///< the shell command in `detail` that fixes it, if any
  bool creatable = false;  ///< a missing folder doctor may offer to create
  bool created = false;    ///< doctor created it during this run
};

/// Checks every persona the user can use (or, with `only`, the entries for those
/// abilities): that its file loads, that the abilities it names exist and load, and that
/// the folders it gives exist. Problems in the user's own personas fail; in shipped ones
/// they are hints. Reads files only; changes nothing.
std::vector<PersonaProblem> checkPersonas(const Context& context,
                                          const std::vector<std::string>& only);

/// Returns the problem as one line for the terminal: persona, file:line, detail.
std::string describe(const PersonaProblem& problem);

/// Returns the problems for `--json`: objects with kind, persona, file, line, detail,
/// shipped, fails, and folder and created for the folder kinds.
nlohmann::json personasJson(const std::vector<PersonaProblem>& problems);

/// Prints doctor's persona section on stdout: each problem on its own (wrapped) line,
/// marked `problem` when it fails and `hint` when it does not; with no problems, one line
/// saying how many personas were checked, unless `checked` is 0.
void printPersonaSection(const std::vector<PersonaProblem>& problems, size_t checked);

/// Asks on the terminal, once per folder, whether to create each missing folder that can
/// be, creates those the user says yes to (createFolder) and marks their problems created.
void offerFolders(std::vector<PersonaProblem>& problems);

/// Creates `folder` (absolute, `~` expanded) and its missing parents with mode 0700.
/// Existing parts are taken as they are, symlinks included, since that is where the path
/// leads; a dangling symlink is never created through, and each folder it makes is opened
/// without following symlinks, so one put in its place meanwhile makes it stop. Paths with
/// `.` or `..` parts are refused.
core::Result<void> createFolder(const std::string& folder);

/// Returns `path` with the home folder written as `~`, for messages.
std::string tildePath(const std::string& path);

/// Returns `path` as one shell word: unquoted when plain, else with `'…'` around all but a
/// leading `~/`, so the shell still expands it.
std::string shellWord(const std::string& path);

}  // namespace kaja::cli
