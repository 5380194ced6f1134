#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/manifest/persona.h"

namespace kaja::personas {

/// Answers whether the ability of this name takes folders (its manifest has roots = true).
using TakesFolders = std::function<bool(const std::string& ability)>;

/// Adds `ability` to `persona`, narrowed to `tools` when given; when it is already listed,
/// sets its tools to `tools` (when given) and keeps its folders. Returns false when nothing
/// changed.
bool addAbility(core::Persona& persona, const std::string& ability,
                const std::optional<std::vector<std::string>>& tools);

/// Removes `ability` (with its tools and folders) from `persona`. Fails with one sentence
/// (and the nearest listed name) when it is not listed.
core::Result<void> removeAbility(core::Persona& persona, const std::string& ability);

/// Returns `given` as a persona folder: absolute or `~/…`, without a trailing '/'. Fails
/// for a relative path or another user's `~name`.
core::Result<std::string> folderPath(const std::string& given);

/// Returns the entry of `persona` that gets folders: the one for `named` when given (it
/// must be listed and take folders), else the only listed ability that takes folders.
core::Result<core::PersonaEntry*> folderEntry(core::Persona& persona,
                                              const std::optional<std::string>& named,
                                              const TakesFolders& takesFolders);

/// Adds `root` to `entry`, or sets the flags of the same path when it is there. Returns
/// false when nothing changed.
bool addFolder(core::PersonaEntry& entry, const core::PersonaRoot& root);

/// Removes the folder `path` (as folderPath() gives it) from the entry of `named`, or from
/// whichever entry has it. Fails with one sentence naming the persona's folders when no
/// entry has it.
core::Result<void> removeFolder(core::Persona& persona, const std::string& path,
                                const std::optional<std::string>& named);

}  // namespace kaja::personas
