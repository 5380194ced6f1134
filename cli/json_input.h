#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/error.h"

namespace kaja::cli {

/// Parses JSON a person typed or a file holds. On malformed text the error (kUsage) says
/// "the JSON is not valid at line L, column C (what the parser found)", without quoting the
/// text itself, which may hold a secret.
core::Result<nlohmann::json> parseJsonInput(const std::string& text);

}  // namespace kaja::cli
