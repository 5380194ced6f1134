#include "tests/support/run_on_terminal.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>

namespace kaja::testing {

TerminalRun runOnTerminal(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                          const std::vector<std::pair<std::string, std::string>>& answers) {
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::vector<char*> vars;
  for (const auto& var : env) vars.push_back(const_cast<char*>(var.c_str()));
  vars.push_back(nullptr);
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    ::execve(args[0], args.data(), vars.data());
    ::_exit(127);
  }
  TerminalRun run;
  if (pid < 0) return run;
  size_t next = 0;
  size_t seen = 0;  // answers look only at what came after the last one
  int status = 0;
  bool exited = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd fd{master, POLLIN, 0};
    int ready = ::poll(&fd, 1, exited ? 200 : 100);
    if (ready > 0) {
      char buffer[4096];
      ssize_t n = ::read(master, buffer, sizeof buffer);
      if (n <= 0) break;  // EIO: every holder of the terminal has gone
      run.output.append(buffer, static_cast<size_t>(n));
    } else if (exited) {
      break;
    }
    if (next < answers.size()) {
      size_t at = run.output.find(answers[next].first, seen);
      if (at != std::string::npos) {
        std::string typed = answers[next].second + "\n";
        EXPECT_EQ(::write(master, typed.data(), typed.size()), static_cast<ssize_t>(typed.size()));
        seen = at + answers[next].first.size();
        ++next;
      }
    }
    if (!exited && ::waitpid(pid, &status, WNOHANG) == pid) exited = true;
  }
  // The terminal closes as the program exits; give it a moment to be reaped.
  while (!exited && std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
    } else {
      ::usleep(10'000);
    }
  }
  if (!exited) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  ::close(master);
  run.exitCode = exited && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  EXPECT_EQ(next, answers.size()) << "not every question was asked:\n" << run.output;
  return run;
}

}  // namespace kaja::testing
