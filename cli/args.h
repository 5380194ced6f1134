#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace kaja::cli {

/// A subcommand's arguments split into flags and positionals.
struct ParsedArgs {
  std::vector<std::string> flags;
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> values;  ///< options that take a value

  /// Returns the value given to option `flag`, or nullopt.
  [[nodiscard]] std::optional<std::string> value(std::string_view flag) const;

  /// Returns true when `flag` was given.
  [[nodiscard]] bool has(std::string_view flag) const;
};

/// Splits `args`; any flag not in `known` or `valued` (and not --help or --verbose, which
/// every command takes) is a usage error that names it and suggests the nearest. Options
/// in `valued` take a value as `--name VALUE` or `--name=VALUE`. "--" ends flags.
core::Result<ParsedArgs> parseArgs(std::span<const std::string> args,
                                   std::initializer_list<std::string_view> known,
                                   std::initializer_list<std::string_view> valued = {});

/// Parses HOST:PORT given to `flag` ([::1]:PORT for IPv6; localhost is 127.0.0.1). The
/// error shows `example` ("127.0.0.1:8931") as the form to use.
core::Result<std::pair<std::string, std::uint16_t>> parseHostPort(std::string_view flag,
                                                                  const std::string& text,
                                                                  std::string_view example);

/// Parses a whole number above 0 given to `flag`; the error says it takes `what` ("a
/// positive number of seconds").
core::Result<std::int64_t> parsePositive(std::string_view flag, const std::string& text,
                                         std::string_view what);

}  // namespace kaja::cli
