#include "core/process/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

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

// Owns posix_spawn's attribute and file-action objects for the length of one start().
class SpawnSetup {
 public:
  SpawnSetup() {
    ::posix_spawn_file_actions_init(&actions_);
    ::posix_spawnattr_init(&attr_);
  }
  ~SpawnSetup() {
    ::posix_spawn_file_actions_destroy(&actions_);
    ::posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
};

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

  SpawnSetup setup;
  // dup2 onto 0/1/2 clears O_CLOEXEC on the copies only; closefrom(3) then drops every
  // other descriptor, including any another thread opened without O_CLOEXEC.
  int rc = ::posix_spawn_file_actions_adddup2(&setup.actions_, in->read.get(), STDIN_FILENO);
  if (rc == 0)
    rc = ::posix_spawn_file_actions_adddup2(&setup.actions_, out->write.get(), STDOUT_FILENO);
  if (rc == 0)
    rc = ::posix_spawn_file_actions_adddup2(&setup.actions_, err->write.get(), STDERR_FILENO);
  if (rc == 0) rc = ::posix_spawn_file_actions_addclosefrom_np(&setup.actions_, 3);
  if (rc == 0 && !plan.workingDir.empty())
    rc = ::posix_spawn_file_actions_addchdir_np(&setup.actions_, plan.workingDir.c_str());
  if (rc != 0) {
    return fail(ErrorCode::kSpawn, syscallMessage("posix_spawn_file_actions", program, rc));
  }

  sigset_t noSignals;
  sigset_t allSignals;
  ::sigemptyset(&noSignals);
  ::sigfillset(&allSignals);
  rc = ::posix_spawnattr_setflags(
      &setup.attr_, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  if (rc == 0) rc = ::posix_spawnattr_setpgroup(&setup.attr_, 0);
  if (rc == 0) rc = ::posix_spawnattr_setsigmask(&setup.attr_, &noSignals);
  if (rc == 0) rc = ::posix_spawnattr_setsigdefault(&setup.attr_, &allSignals);
  if (rc != 0) return fail(ErrorCode::kSpawn, syscallMessage("posix_spawnattr", program, rc));

  std::vector<char*> argv;
  argv.reserve(plan.argv.size() + 1);
  for (const auto& arg : plan.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> envStrings;
  envStrings.reserve(plan.env.size());
  for (const auto& var : plan.env) envStrings.push_back(var.name + "=" + var.value);
  std::vector<char*> envp;
  envp.reserve(envStrings.size() + 1);
  for (auto& entry : envStrings) envp.push_back(entry.data());
  envp.push_back(nullptr);

  pid_t pid = -1;
  auto spawn = [&] {
    return ::posix_spawn(&pid, program.c_str(), &setup.actions_, &setup.attr_, argv.data(),
                         envp.data());
  };
  bool spawned = false;
  if (plan.niceness > 0) {
    // A child inherits the nice value of the thread that spawns it, and lowering one's own
    // priority cannot be undone without privilege, so a thread of its own lowers its
    // priority, spawns and ends. Without a thread to spare the child starts at ours.
    try {
      std::thread([&] {
        const auto self = static_cast<id_t>(::gettid());
        errno = 0;
        const int current = ::getpriority(PRIO_PROCESS, self);
        if (errno == 0) ::setpriority(PRIO_PROCESS, self, std::min(19, current + plan.niceness));
        rc = spawn();
      }).join();
      spawned = true;
    } catch (const std::system_error&) {
    }
  }
  if (!spawned) rc = spawn();
  if (rc != 0) {
    // The working directory is named too: addchdir_np fails with ENOENT just the same.
    return fail(
        ErrorCode::kSpawn, syscallMessage("execve", program, rc), {},
        plan.workingDir.empty() ? "" : "The working directory was " + plan.workingDir + ".");
  }

  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->pid_ = pid;
  child->stdin_ = std::move(in->write);
  child->stdout_ = std::move(out->read);
  child->stderr_ = std::move(err->read);
  // pidfds are always close-on-exec. Without one (old kernels) callers poll exitStatus().
  // (glibc 2.36's <sys/pidfd.h> lacks extern "C", so the raw syscall is used.)
  child->pidfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
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
  if (pid_ > 0 && !reaped_) ::kill(-pid_, signal);
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
  int raw = 0;
  const pid_t rc = retryOnEintr([&] { return ::waitpid(pid_, &raw, 0); });
  reaped_ = true;
  if (rc == pid_) {
    status_ =
        WIFSIGNALED(raw) ? ExitStatus{true, WTERMSIG(raw)} : ExitStatus{false, WEXITSTATUS(raw)};
  }
  return status_;
}

}  // namespace kaja::core
