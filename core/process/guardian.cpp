#include "core/process/guardian.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "core/process/fork_exec.h"
#include "core/process/process_tree.h"
#include "core/util/unique_fd.h"

extern char** environ;

namespace kaja::core {
namespace {

using namespace std::chrono_literals;

// Where a guardian finds the pipe that reports kaja gone, and the start-failure report.
constexpr int kGoneFd = 3;
constexpr int kReportFd = 4;
// How long a guardian keeps killing what is under it.
constexpr std::chrono::milliseconds kEndLimit{2000};

// Leaked on purpose, like every process-wide object here: nothing to destroy at exit.
std::string& configuredProgram() {
  static auto* program = new std::string();
  return *program;
}

// Kills every process under the guardian and reaps it. A killed process's children become
// the guardian's (it is their subreaper), so this repeats until none is left.
void endEverythingBelow() {
  const auto deadline = std::chrono::steady_clock::now() + kEndLimit;
  for (;;) {
    const auto children = childrenOf(0);
    if (children.empty()) return;
    for (const pid_t child : children) {
      ::kill(child, SIGSTOP);
      signalDescendants(child, SIGKILL);
      ::kill(child, SIGKILL);
    }
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    if (std::chrono::steady_clock::now() >= deadline) return;
    std::this_thread::sleep_for(2ms);
  }
}

// Ends the guardian the way its server ended: the same exit code, or the same signal.
[[noreturn]] void exitAs(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) ::_exit(info.si_status);
  const int signal = info.si_status;
  const rlimit noCore{0, 0};
  ::setrlimit(RLIMIT_CORE, &noCore);
  ::signal(signal, SIG_DFL);
  sigset_t only;
  ::sigemptyset(&only);
  ::sigaddset(&only, signal);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::kill(::getpid(), signal);
  ::_exit(128 + signal);
}

// Runs in the guardian's child: back to default signals, then the server.
[[noreturn]] void execServer(char** argv, pid_t guardian) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (::getppid() != guardian) ::_exit(127);
  restoreDefaultSignals();
  ::execve(argv[0], argv, environ);
  const int message[2] = {kReportedExecveFailure, errno};
  [[maybe_unused]] const ssize_t ignored = ::write(kReportFd, message, sizeof message);
  ::_exit(127);
}

}  // namespace

void useGuardian(std::string program) { configuredProgram() = std::move(program); }

const std::string& guardianProgram() { return configuredProgram(); }

int kajaGonePipe() {
  static const int readEnd = [] {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
    // fds[1] stays open, unwritten, until kaja exits; it is close-on-exec, and children
    // close every descriptor but their own, so no other process holds it.
    return fds[0];
  }();
  return readEnd;
}

void runGuardian(int argc, char** argv) {
  if (argc < 3) ::_exit(127);
  // The guardian outlives kaja just long enough to end its server's tree.
  ::prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  // The group's signals are for the server, which shares the group.
  for (const int signal : {SIGTERM, SIGINT, SIGHUP, SIGPIPE}) ::signal(signal, SIG_IGN);
  ::fcntl(kGoneFd, F_SETFD, FD_CLOEXEC);
  ::fcntl(kReportFd, F_SETFD, FD_CLOEXEC);
  pollfd gone{kGoneFd, POLLIN, 0};
  if (::poll(&gone, 1, 0) != 0) ::_exit(127);  // kaja is gone already

  const pid_t self = ::getpid();
  const pid_t server = ::fork();
  if (server == 0) execServer(argv + 2, self);
  if (server < 0) {
    const int message[2] = {kReportedExecveFailure, errno};
    [[maybe_unused]] const ssize_t ignored = ::write(kReportFd, message, sizeof message);
    ::_exit(127);
  }
  ::close(kReportFd);
  // The guardian holds none of the server's pipes, so they close when the server's ends do.
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);

  UniqueFd serverExit(static_cast<int>(::syscall(SYS_pidfd_open, server, 0)));
  pollfd watched[2] = {{kGoneFd, POLLIN, 0}, {serverExit.get(), POLLIN, 0}};
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_PID, server, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == server) {
      endEverythingBelow();
      exitAs(info);
    }
    // Without a pidfd the server's exit is polled for.
    ::poll(watched, serverExit.valid() ? 2 : 1, serverExit.valid() ? -1 : 50);
    if (watched[0].revents != 0) {
      endEverythingBelow();
      ::_exit(128 + SIGKILL);
    }
  }
}

}  // namespace kaja::core
