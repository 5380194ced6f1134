#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace kaja::core::policy {

/// Returns the real path `absolutePath` names or would name once created: every existing
/// component is resolved (symlinks followed, including dangling ones and ones reached after a
/// `..`), and from the first component that does not exist the rest is appended lexically,
/// each `..` removing one component, never climbing above `/`. A write to the returned path
/// lands where the kernel would put it at the time of the check.
///
/// Fails with kUsage for a relative path, kIo naming the call (lstat, readlink) when a
/// component cannot be inspected or symlinks loop (more than 40 hops), and kRefused for a
/// path through a link in /proc (/proc/self, a process's cwd, root or fd, /dev/fd), which
/// each process reads as its own.
Result<std::string> resolvePath(std::string_view absolutePath);

/// Returns `absolutePath` with repeated slashes removed and `.` and `..` collapsed in the
/// text, before any symlink is looked at, as Node's `path.resolve` and Python's
/// `os.path.normpath` do. Never climbs above `/`.
std::string collapseLexically(std::string_view absolutePath);

/// Returns true when some server could take file names `a` and `b` for one another: equal
/// bytes, equal ignoring ASCII case, or the same confusable skeleton of their NFKC_Casefold
/// forms (so "Cafe" + U+0301 matches "Café", U+212A KELVIN SIGN + "ids" matches "Kids", and
/// Cyrillic "а" matches Latin "a"). Deliberately wider than any one server's rule.
bool equivalentNames(std::string_view a, std::string_view b);

/// Bounds on resolveInterpretations.
struct InterpretLimits {
  std::size_t maxInterpretations = 16;       ///< more readings than this make the path refused
  std::size_t maxDirectoryEntries = 100000;  ///< entries read to find equivalent names
};

/// Returns every real path that `absolutePath` may name to a server, without duplicates and
/// the physical reading (what resolvePath returns) first; then the lexical one
/// (collapseLexically, then resolved), and for each reading whose next component does not
/// exist, one more reading for each existing name in that folder with the same NFKC_Casefold
/// form (a server may map a missing name to an existing equivalent one, as server-filesystem
/// does with NFC, or a case-insensitive mount with case). Look-alike letters are left to
/// isWithinEquivalent: no server maps them, but a folder spelled with them is refused.
///
/// Fails as resolvePath does, and with kRefused when there are more readings than
/// `limits.maxInterpretations` or a folder holds more than `limits.maxDirectoryEntries`.
Result<std::vector<std::string>> resolveInterpretations(std::string_view absolutePath,
                                                        const InterpretLimits& limits = {});

/// Returns true when `path` is `folder` or inside it. Both must be resolved and absolute.
bool isWithin(std::string_view path, std::string_view folder);

/// Returns true when `path` is `folder` or inside it once every component is compared with
/// equivalentNames() rather than byte for byte. Both must be resolved and absolute.
bool isWithinEquivalent(std::string_view path, std::string_view folder);

/// Returns the number of components of an absolute path ("/" has none).
std::size_t componentCount(std::string_view absolutePath);

}  // namespace kaja::core::policy
