#pragma once

#include <string>
#include <vector>

#include "cli/context.h"
#include "core/manifest/manifest_writer.h"

namespace kaja::cli {

/// Writes `draft` as the user's own ability (`<user marketplace>/abilities/NAME/mcp.toml`),
/// its key to the secrets file, through the ability loader; refuses a name that exists
/// unless `force`. Prints what it did and returns the exit code.
int installDraft(const core::AbilityDraft& draft, bool force);

/// Returns " Did you mean \"NAME\"?"-style text for the catalog ability nearest `name`, or "".
std::string nearestAbility(const Context& context, const std::string& name);

/// Returns the personas that list `ability`, the active one first.
std::vector<std::string> personasListing(const Context& context, const std::string& ability);

}  // namespace kaja::cli
