#pragma once

#include <optional>
#include <string>

namespace kaja::cli {

/// Returns true when both stdin and stderr are terminals, so kaja may ask questions.
bool canPrompt();

/// Reads a secret: from a masked prompt on the terminal (one '*' per character) when
/// stdin is a terminal, else all of stdin without the trailing newline. An empty string
/// means the user gave up (Ctrl-C, Ctrl-D) or gave nothing.
std::string readKey(const std::string& prompt);

/// Asks a yes/no question on the terminal; false unless the answer starts with y/Y.
bool askYesNo(const std::string& question);

}  // namespace kaja::cli
