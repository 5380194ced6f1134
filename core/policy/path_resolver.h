#pragma once

#include <string>
#include <string_view>

#include "core/error.h"

namespace kaja::core::policy {

/// Returns the real path `absolutePath` names or would name once created: every existing
/// component is resolved (symlinks followed, including dangling ones and ones reached after a
/// `..`), and from the first component that does not exist the rest is appended lexically,
/// each `..` removing one component, never climbing above `/`. A write to the returned path
/// lands where the kernel would put it at the time of the check.
///
/// Fails with kUsage for a relative path, and kIo naming the call (lstat, readlink) when a
/// component cannot be inspected or symlinks loop (more than 40 hops).
Result<std::string> resolvePath(std::string_view absolutePath);

/// Returns true when `path` is `folder` or inside it. Both must be resolved and absolute.
bool isWithin(std::string_view path, std::string_view folder);

}  // namespace kaja::core::policy
