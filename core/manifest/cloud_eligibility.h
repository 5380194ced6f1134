#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/manifest/ability.h"

// Which abilities may run in a sandbox worker for a cloud user (K19, K23). The worker
// applies it to what it serves; kaja's host applies it to what it sends to a worker.

namespace kaja::core {

/// Returns why a sandbox worker must not run `ability` for cloud users, or nullopt when it
/// may (K19, K23): it is a stdio server (a remote one is reached directly, not through a
/// sandbox), it lists its `tools`, it is not local-only (`localOnly` or `roots`), it needs
/// no key, and in a `shared` worker it is not `trustedSandbox`. The reason is one sentence.
std::optional<std::string> cloudRefusal(const Ability& ability, bool shared);

/// Returns whether `name` may be a user id or ability name in a sandbox worker's paths:
/// 1 to 64 characters of [a-z0-9._-], and not "." or "..".
bool validWorkerName(std::string_view name);

}  // namespace kaja::core
