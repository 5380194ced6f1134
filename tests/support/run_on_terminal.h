#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kaja::testing {

/// What a program run on a terminal wrote and how it ended.
struct TerminalRun {
  int exitCode = -1;   ///< -1 when it did not exit normally or was killed at the time limit
  std::string output;  ///< everything written to the terminal, echoed answers included
};

/// Runs `argv` (argv[0] absolute) with exactly `env` on a new pseudo-terminal, which is its
/// stdin, stdout, stderr and controlling terminal (so /dev/tty works), and types each
/// answer (plus a newline) once its prompt has appeared after the previous one. Gives it
/// 90 s, then kills it. A prompt that never came fails the calling test.
TerminalRun runOnTerminal(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                          const std::vector<std::pair<std::string, std::string>>& answers);

}  // namespace kaja::testing
