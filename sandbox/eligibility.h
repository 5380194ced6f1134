#pragma once

#include <optional>
#include <string>

#include "core/manifest/ability.h"

namespace kaja::sandbox {

/// Returns why the worker must not run `ability` for cloud users, or nullopt when it may
/// (K19, K23): it is a stdio server (a remote one is reached directly, not through a
/// sandbox), it lists its `tools`, it is not local-only (`localOnly` or `roots`), it needs
/// no key, and in a `shared` worker it is not `trustedSandbox`. The reason is one sentence.
std::optional<std::string> cloudRefusal(const core::Ability& ability, bool shared);

}  // namespace kaja::sandbox
