#pragma once

// Runs the kaja binary next to a benchmark, timed, as the benchmarks that measure whole
// commands do.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace kaja::bench {

/// One timed run of kaja.
struct Run {
  double wallMs = 0;
  int exitCode = -1;
  nlohmann::json report;  ///< stdout parsed as JSON (discarded when it is not)
};

/// Returns the folder of the running benchmark, where kaja is built too.
inline std::string binDir() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path().string();
}

/// Runs kaja with `args` and exactly `env`, `input` on stdin (from a file; nothing when empty),
/// stdout to a file, stderr dropped; returns its wall time, exit status and parsed stdout.
inline Run runKaja(const std::vector<std::string>& args, const std::vector<std::string>& env,
                   const std::string& input = {}) {
  namespace fs = std::filesystem;
  using Clock = std::chrono::steady_clock;
  std::string out = fs::temp_directory_path() / ("kaja-bench-" + std::to_string(::getpid()));
  const std::string in = input.empty() ? "/dev/null" : out + ".in";
  if (!input.empty()) std::ofstream(in, std::ios::binary) << input;
  std::vector<std::string> argv = {binDir() + "/kaja"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& arg : argv) cargv.push_back(arg.data());
  cargv.push_back(nullptr);
  std::vector<std::string> envCopy = env;
  std::vector<char*> cenv;
  for (auto& var : envCopy) cenv.push_back(var.data());
  cenv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, in.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  auto started = Clock::now();
  pid_t pid = 0;
  Run run;
  if (posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), cenv.data()) == 0) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
    }
    if (WIFEXITED(status)) run.exitCode = WEXITSTATUS(status);
  }
  run.wallMs = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  posix_spawn_file_actions_destroy(&actions);
  std::ifstream stdoutFile(out);
  std::stringstream text;
  text << stdoutFile.rdbuf();
  run.report = nlohmann::json::parse(text.str(), nullptr, false);
  fs::remove(out);
  if (!input.empty()) fs::remove(in);
  return run;
}

/// Returns the median of `values` (0 for none).
inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace kaja::bench
