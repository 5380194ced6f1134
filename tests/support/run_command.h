#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kaja::testing {

/// True in a sanitizer tree (tests/sanitize/run, ASan or TSan).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
/// False in a sanitizer tree: there a process's resident set is mostly the sanitizer's own
/// shadow memory and quarantine, so the tests check their memory bounds in a plain build only.
inline constexpr bool kMemoryIsMeasured = !kSanitized;

/// What a finished program printed and how it ended.
struct CommandResult {
  int exitCode = -1;  ///< -1 when it did not exit normally
  std::string out;
  std::string err;
  long peakRssKb = 0;     ///< the largest resident set of the program or a child it reaped
  bool timedOut = false;  ///< killed (SIGKILL to its process group) at the time limit
  double seconds = 0;     ///< how long it ran
};

/// How runCommandWith runs a program.
struct RunOptions {
  std::string input;            ///< fed on stdin
  double timeoutSeconds = 120;  ///< then the program's process group is killed
  bool ownProcessGroup = true;  ///< start it as the leader of a new process group
  std::string workingDir;       ///< where it starts; "" for the test's own folder
};

/// Runs `argv` (argv[0] absolute) with exactly `env` ("NAME=value" strings), feeding it
/// `input` on stdin, and waits for it. Output goes through temporary files, so a chatty
/// program cannot block on a full pipe.
CommandResult runCommand(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                         const std::string& input = {});

/// Runs `argv` as runCommand does, with a time limit, and reports its peak memory.
CommandResult runCommandWith(const std::vector<std::string>& argv,
                             const std::vector<std::string>& env, const RunOptions& options);

}  // namespace kaja::testing
