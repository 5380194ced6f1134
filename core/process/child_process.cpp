#include "core/process/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/process/fork_exec.h"
#include "core/process/guardian.h"
#include "core/process/process_tree.h"
#include "core/process/subreaper.h"
#include "core/util/sys.h"

namespace kaja::core {
namespace {

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

Result<Pipe> makePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return fail(ErrorCode::kIo, syscallMessage("pipe2", "O_CLOEXEC", errno));
  }
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

}  // namespace

void ignoreSigpipe() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      struct sigaction ignore {};
      ignore.sa_handler = SIG_IGN;
      ::sigemptyset(&ignore.sa_mask);
      ::sigaction(SIGPIPE, &ignore, nullptr);
    }
  });
}

std::string ExitStatus::describe() const {
  if (!signaled) return "exited with status " + std::to_string(code);
  const char* name = ::strsignal(code);
  return "was killed by signal " + std::to_string(code) +
         (name ? std::string(" (") + name + ")" : "");
}

Result<std::unique_ptr<ChildProcess>> ChildProcess::start(const LaunchPlan& plan) {
  if (plan.argv.empty()) return fail(ErrorCode::kSpawn, "The launch plan has no command to run.");
  const std::string& program = plan.argv.front();
  if (program.empty() || program.front() != '/') {
    return fail(ErrorCode::kSpawn,
                "The command \"" + program + "\" is not an absolute path; kaja runs only those.");
  }
  ignoreSigpipe();

  auto in = makePipe();
  if (!in) return std::unexpected(in.error());
  auto out = makePipe();
  if (!out) return std::unexpected(out.error());
  auto err = makePipe();
  if (!err) return std::unexpected(err.error());

  ExecSpec spec;
  spec.argv = plan.argv;
  spec.env.reserve(plan.env.size());
  for (const auto& var : plan.env) spec.env.push_back(var.name + "=" + var.value);
  spec.workingDir = plan.workingDir;
  spec.stdinFd = in->read.get();
  spec.stdoutFd = out->write.get();
  spec.stderrFd = err->write.get();
  spec.niceness = plan.niceness;
  if (!guardianProgram().empty() && kajaGonePipe() >= 0) {
    spec.argv.insert(spec.argv.begin(), {guardianProgram(), kGuardianFlag});
    spec.guardFd = kajaGonePipe();
    spec.name = program;
  }
  auto pid = forkExec(spec);
  if (!pid) return std::unexpected(pid.error());

  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->pid_ = *pid;
  child->stdin_ = std::move(in->write);
  child->stdout_ = std::move(out->read);
  child->stderr_ = std::move(err->read);
  // pidfds are always close-on-exec. Without one (old kernels) callers poll exitStatus().
  // (glibc 2.36's <sys/pidfd.h> lacks extern "C", so the raw syscall is used.)
  child->pidfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, *pid, 0)));
  return child;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) terminate(grace_);
}

std::optional<ExitStatus> ChildProcess::exitStatus() {
  if (reaped_) return status_;
  siginfo_t info{};
  info.si_pid = 0;
  const int rc =
      retryOnEintr([&] { return ::waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT); });
  if (rc != 0 || info.si_pid == 0) return std::nullopt;
  if (info.si_code == CLD_EXITED) return ExitStatus{false, info.si_status};
  return ExitStatus{true, info.si_status};
}

void ChildProcess::killGroup(int signal) {
  if (pid_ <= 0 || reaped_) return;
  if (signal == SIGKILL) {
    // Frozen first, so that nothing in the group forks while the tree is walked.
    ::kill(-pid_, SIGSTOP);
    signalDescendants(pid_, SIGKILL);
  } else {
    signalDescendants(pid_, signal);
  }
  ::kill(-pid_, signal);
}

std::optional<ExitStatus> ChildProcess::waitFor(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto status = exitStatus()) return status;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    if (pidfd_.valid()) {
      // No EINTR retry needed: the loop re-checks the exit and the time left anyway.
      pollfd entry{pidfd_.get(), POLLIN, 0};
      ::poll(&entry, 1, static_cast<int>(left.count()));
    } else {
      std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(10)));
    }
  }
}

ExitStatus ChildProcess::terminate(std::chrono::milliseconds grace) {
  if (reaped_) return status_;
  stdin_.reset();
  if (!waitFor(grace)) {
    killGroup(SIGTERM);
    if (!waitFor(grace)) killGroup(SIGKILL);
  }
  // The leader is now a zombie (or about to be), so its group id is still ours: end
  // whatever it left behind before reaping it.
  killGroup(SIGKILL);
  return reap();
}

ExitStatus ChildProcess::reap() {
  // Wait for the exit without reaping, then reap and unregister in one step under the
  // Subreaper's lock: a registered pid is never a reused one.
  siginfo_t info{};
  retryOnEintr([&] { return ::waitid(P_PID, pid_, &info, WEXITED | WNOWAIT); });
  const auto raw = Subreaper::instance().reapOwned(pid_);
  reaped_ = true;
  if (raw) {
    status_ =
        WIFSIGNALED(*raw) ? ExitStatus{true, WTERMSIG(*raw)} : ExitStatus{false, WEXITSTATUS(*raw)};
  }
  return status_;
}

}  // namespace kaja::core
