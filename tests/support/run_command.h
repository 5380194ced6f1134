#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kaja::testing {

/// What a finished program printed and how it ended.
struct CommandResult {
  int exitCode = -1;  ///< -1 when it did not exit normally
  std::string out;
  std::string err;
};

/// Runs `argv` (argv[0] absolute) with exactly `env` ("NAME=value" strings), feeding it
/// `input` on stdin, and waits for it. Output goes through temporary files, so a chatty
/// program cannot block on a full pipe.
CommandResult runCommand(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                         const std::string& input = {});

}  // namespace kaja::testing
