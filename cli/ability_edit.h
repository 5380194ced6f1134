#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/context.h"
#include "core/manifest/manifest_writer.h"

namespace kaja::cli {

/// Writes `draft` as the user's own ability (`<user marketplace>/abilities/NAME/mcp.toml`),
/// its key to the secrets file, through the ability loader; refuses a name that exists
/// unless `force`. Prints what it did and returns the exit code.
int installDraft(const core::AbilityDraft& draft, bool force);

/// Returns `text` parsed as JSON, with the comments and trailing commas VS Code and Cursor
/// allow in their files. A malformed or too deeply nested text is a kUsage error that starts
/// with `subject` ("the JSON", "the JSON in FILE"), names the line and column, never quotes
/// the text (it may hold a key) and ends "nothing was written".
core::Result<nlohmann::json> parseClientJson(std::string text, const std::string& subject);

/// Returns the draft of ability `name` from one server's entry as clients keep them under
/// `mcpServers` (VS Code: `servers`): command, args, env, cwd for a server kaja starts; type,
/// url, headers for a remote one; description. Values are kept as written, `${VAR}`
/// references included. A relative `cwd` is taken against `baseDir`, and refused when it is
/// empty. Any other key, or a value of the wrong type, is a kUsage error of one sentence.
core::Result<core::AbilityDraft> draftFromEntry(const std::string& name,
                                                const nlohmann::json& entry,
                                                const std::string& baseDir = "");

/// Returns " Did you mean \"NAME\"?"-style text for the catalog ability nearest `name`, or "".
std::string nearestAbility(const Context& context, const std::string& name);

/// Returns the personas that list `ability`, the active one first.
std::vector<std::string> personasListing(const Context& context, const std::string& ability);

}  // namespace kaja::cli
