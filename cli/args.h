#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace kaja::cli {

/// A subcommand's arguments split into flags and positionals.
struct ParsedArgs {
  std::vector<std::string> flags;
  std::vector<std::string> positional;

  /// Returns true when `flag` was given.
  [[nodiscard]] bool has(std::string_view flag) const;
};

/// Splits `args`; any flag not in `known` (and not --help or --verbose, which every
/// command takes) is a usage error that names it and suggests the nearest. "--" ends flags.
core::Result<ParsedArgs> parseArgs(std::span<const std::string> args,
                                   std::initializer_list<std::string_view> known);

}  // namespace kaja::cli
