#pragma once

#include <string>

#include "core/error.h"
#include "core/manifest/persona.h"
#include "core/manifest/toml_value.h"

namespace kaja::core {

/// Reads `marketplace/personas/<name>.toml` into a Persona named after the file (K3).
/// Errors name the file, line and key. Whether the named abilities exist is checked by
/// the catalog, which knows them.
Result<Persona> loadPersona(const std::string& file);

/// Builds a Persona from parsed TOML; `file` is used in errors.
Result<Persona> personaFromToml(const TomlValue& root, const std::string& name,
                                const std::string& file);

}  // namespace kaja::core
