#pragma once

#include <cstdio>
#include <span>
#include <string>
#include <string_view>

#include "cli/command.h"

namespace kaja::cli {

/// Prints the overview `kaja --help` shows: every command with its synopsis and summary,
/// and the exit codes.
void printUsage(std::FILE* out);

/// Prints `kaja NAME --help`: the command's synopsis and its full help text.
void printCommandHelp(const Command& command);

/// Returns the command named `name`, or nullptr.
const Command* findCommand(std::string_view name);

/// Returns the sentence for an unknown command, with the nearest command's name when one is
/// close.
std::string unknownCommand(std::string_view name);

/// Returns the manual page kaja(1) in roff, made from the same text as `--help`: the
/// overview, then one section per command with its synopsis and full help.
std::string manPage();

}  // namespace kaja::cli
