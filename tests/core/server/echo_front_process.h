#pragma once

// tests/tools/kaja_front_echo as a child process, measured through /proc (posix_spawn, so the
// peak memory is the helper's own, not that of a forked copy of the test).

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/support/build_paths.h"

namespace kaja::testing {

inline const std::string kFrontEchoHelper = std::string(kaja::test::binDir()) + "/kaja_front_echo";

/// `kaja_front_echo MODE` as a child: its port, and its peak memory from /proc.
class EchoFrontProcess {
 public:
  explicit EchoFrontProcess(const std::string& mode) {
    int input[2];
    int output[2];
    if (::pipe2(input, O_CLOEXEC) != 0 || ::pipe2(output, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, input[0], 0);
    posix_spawn_file_actions_adddup2(&actions, output[1], 1);
    char* argv[] = {const_cast<char*>(kFrontEchoHelper.c_str()), const_cast<char*>(mode.c_str()),
                    nullptr};
    char* envp[] = {nullptr};
    if (posix_spawn(&pid_, kFrontEchoHelper.c_str(), &actions, nullptr, argv, envp) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    ::close(input[0]);
    ::close(output[1]);
    stdin_ = input[1];
    stdout_ = output[0];
    if (mode != "http") return;
    const std::string line = readLine();
    if (line.starts_with("PORT ")) port_ = std::atoi(line.c_str() + 5);
  }
  ~EchoFrontProcess() {
    closeInput();  // the helper stops when its stdin ends
    ::close(stdout_);
    if (pid_ > 0) {
      int status = 0;
      for (int i = 0; i < 100 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i) ::usleep(20000);
      if (::waitpid(pid_, &status, WNOHANG) == 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
      }
    }
  }
  EchoFrontProcess(const EchoFrontProcess&) = delete;
  EchoFrontProcess& operator=(const EchoFrontProcess&) = delete;

  [[nodiscard]] int port() const { return port_; }
  /// Writes `text` to the child's stdin; returns false when it stopped reading.
  bool write(const std::string& text) const {
    std::size_t sent = 0;
    while (sent < text.size()) {
      const auto n = ::write(stdin_, text.data() + sent, text.size() - sent);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }
  /// Reads one line of the child's stdout (blocking).
  std::string readLine() const {
    std::string line;
    char byte = 0;
    while (::read(stdout_, &byte, 1) == 1 && byte != '\n') line += byte;
    return line;
  }
  void closeInput() {
    if (stdin_ >= 0) ::close(stdin_);
    stdin_ = -1;
  }
  /// Returns the peak resident set (VmHWM) in KB.
  [[nodiscard]] long peakKb() const {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.starts_with("VmHWM:")) return std::atol(line.c_str() + 6);
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  int stdout_ = -1;
  int port_ = 0;
};

}  // namespace kaja::testing
