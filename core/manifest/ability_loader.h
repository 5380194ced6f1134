#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/manifest/ability.h"
#include "core/manifest/toml_value.h"

namespace kaja::core {

/// Reads `<dir>/mcp.toml` into an Ability named after the folder, then validate()s it.
/// Every error names the file, the line and the key, and says what is allowed.
Result<Ability> loadAbility(const std::string& dir);

/// Builds an Ability from already parsed TOML; `file` is used in errors.
Result<Ability> abilityFromToml(const TomlValue& root, const std::string& name,
                                const std::string& file);

/// Returns the manifest line of a top-level key, or 0 when the key is absent.
using LineLookup = std::function<int(std::string_view key)>;

/// Checks the rules that span fields: a stdio ability has `package` or `command` (not
/// both), http/sse have an absolute http(s) `url`, no `..` in `command`, a valid name, and
/// that each setting suits the transport. `lineOf`, when given, points errors at lines.
Result<void> validate(const Ability& ability, const LineLookup& lineOf = {});

/// Returns true when `name` is 1–64 characters of [A-Za-z0-9_-], the first not a dash.
bool isValidName(std::string_view name);

/// Returns true when `name` is kept for kaja itself ("kaja": its own tools), so that no
/// ability, workspace server or marketplace may take it.
bool isReservedName(std::string_view name);

/// Returns true when `url` is an absolute http:// or https:// URL with a host.
bool isAbsoluteHttpUrl(std::string_view url);

}  // namespace kaja::core
