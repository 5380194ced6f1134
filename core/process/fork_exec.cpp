#include "core/process/fork_exec.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>

#include "core/process/subreaper.h"
#include "core/util/sys.h"
#include "core/util/unique_fd.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace kaja::core {
namespace {

// The child's stack until execve; it makes only system calls.
constexpr std::size_t kChildStack = 64UL * 1024;
// close_range's flag that marks descriptors close-on-exec instead of closing them (5.11).
constexpr unsigned kCloseRangeCloexec = 1U << 2;

// The step of the child's setup that failed, sent to the parent with errno.
// kServerExecve comes from a guardian, about its server.
enum Step : int { kSetpgid = 1, kPdeathsig, kDescriptors, kChdir, kExecve, kServerExecve };
static_assert(kServerExecve == kReportedExecveFailure);

// Everything the child needs, built before it starts: the child only reads it.
struct ChildPlan {
  const char* program;
  char* const* argv;
  char* const* envp;
  const char* workingDir;  // nullptr: stay
  int fds[5];  // stdin, stdout, stderr, then (with a guardian) the guard pipe and the report
  int fdCount;
  int niceness;
  pid_t parent;
  int reportFd;
};

// Marks every descriptor from `first` up close-on-exec, so `keep` (the report pipe)
// survives until execve and nothing else reaches the program.
bool closeOnExecFrom(int first, int keep) {
  if (::syscall(SYS_close_range, static_cast<unsigned>(first), ~0U, kCloseRangeCloexec) == 0) {
    return true;
  }
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return false;
  const rlim_t last = std::min<rlim_t>(limit.rlim_cur, 1 << 20);
  for (auto fd = static_cast<rlim_t>(first); fd < last; ++fd) {
    if (static_cast<int>(fd) != keep) ::close(static_cast<int>(fd));
  }
  return true;
}

// Runs in the child, in kaja's memory: raw system calls only, then execve or _exit.
[[noreturn]] void runChild(const ChildPlan& plan) {
  int report = plan.reportFd;
  const auto die = [&report](Step step) {
    const int message[2] = {step, errno};
    [[maybe_unused]] const ssize_t ignored = ::write(report, message, sizeof message);
    ::_exit(127);
  };
  if (::setpgid(0, 0) != 0) die(kSetpgid);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) die(kPdeathsig);
  // kaja died before the request took hold: nobody will end this child, so it ends here.
  if (::getppid() != plan.parent) ::_exit(127);
  if (plan.niceness > 0) {
    errno = 0;
    const int current = ::getpriority(PRIO_PROCESS, 0);
    if (errno == 0) ::setpriority(PRIO_PROCESS, 0, std::min(19, current + plan.niceness));
  }
  restoreDefaultSignals();
  // Lift every descriptor out of the way first, so no dup2 onto 0..4 overwrites one still
  // needed.
  constexpr int kAbove = 10;
  report = ::fcntl(report, F_DUPFD_CLOEXEC, kAbove);
  if (report < 0) ::_exit(127);
  int lifted[5];
  for (int i = 0; i < plan.fdCount; ++i) {
    lifted[i] = i == 4 ? report : ::fcntl(plan.fds[i], F_DUPFD_CLOEXEC, kAbove);
    if (lifted[i] < 0) die(kDescriptors);
  }
  for (int i = 0; i < plan.fdCount; ++i) {
    if (::dup2(lifted[i], i) < 0) die(kDescriptors);  // the copy on 0..4 is not CLOEXEC
  }
  if (!closeOnExecFrom(plan.fdCount, report)) die(kDescriptors);
  if (plan.workingDir != nullptr && ::chdir(plan.workingDir) != 0) die(kChdir);
  ::execve(plan.program, plan.argv, plan.envp);
  die(kExecve);
  ::_exit(127);  // not reached: die() exits
}

int childMain(void* plan) { runChild(*static_cast<const ChildPlan*>(plan)); }

std::string stepMessage(Step step, const ExecSpec& spec, int err) {
  const std::string& name = spec.name.empty() ? spec.argv.front() : spec.name;
  switch (step) {
    case kSetpgid:
      return syscallMessage("setpgid", name, err);
    case kPdeathsig:
      return syscallMessage("prctl", "PR_SET_PDEATHSIG", err);
    case kDescriptors:
      return syscallMessage("dup2", name, err);
    case kChdir:
      return syscallMessage("chdir", spec.workingDir, err);
    case kExecve:
      return syscallMessage("execve", spec.argv.front(), err);
    case kServerExecve:
      break;
  }
  return syscallMessage("execve", name, err);
}

// Starts the child from the calling thread; the Subreaper lock is held throughout, so no
// other thread takes the child for an orphan before it is adopted.
Result<pid_t> startOnThisThread(const ExecSpec& spec, const ChildPlan& base) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    return fail(ErrorCode::kIo, syscallMessage("pipe2", "O_CLOEXEC", errno));
  }
  UniqueFd reportRead(report[0]);
  UniqueFd reportWrite(report[1]);
  ChildPlan plan = base;
  plan.reportFd = reportWrite.get();

  auto& subreaper = Subreaper::instance();
  auto held = subreaper.lock();
  if (!subreaper.acceptsChildren(held)) {
    return fail(ErrorCode::kSpawn, "kaja is shutting down, so it starts no more servers.");
  }
  // The child shares kaja's memory until execve (as in posix_spawn), which spares copying
  // kaja's page tables, and runs on a stack of its own. It starts with every signal blocked
  // until its handlers are back to the defaults, so none of kaja's handlers ever runs in it.
  void* stack = ::mmap(nullptr, kChildStack, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    return fail(ErrorCode::kSpawn, syscallMessage("mmap", "a stack for the child", errno));
  }
  sigset_t all;
  sigset_t previous;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, &previous);
  // CLONE_VFORK: this thread waits until the child has called execve or exited.
#if defined(__SANITIZE_THREAD__)
  // Under ThreadSanitizer the child gets a copy of the memory instead: the child's own
  // instrumented steps would otherwise update this thread's race-detector state, which
  // ThreadSanitizer then reads as races in code the parent ran.
  constexpr int kShareMemory = 0;
#else
  constexpr int kShareMemory = CLONE_VM;
#endif
  const pid_t pid = ::clone(childMain, static_cast<char*>(stack) + kChildStack,
                            kShareMemory | CLONE_VFORK | SIGCHLD, &plan);
  const int cloneErrno = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
#if defined(__SANITIZE_ADDRESS__)
  // The child never returned from the frames it ran on this stack, so ASan still marks their
  // guard zones; whatever the kernel maps here next would read as a stack overflow.
  __asan_unpoison_memory_region(stack, kChildStack);
#endif
  ::munmap(stack, kChildStack);
  if (pid < 0) {
    return fail(ErrorCode::kSpawn, syscallMessage("clone", spec.argv.front(), cloneErrno));
  }
  reportWrite.reset();
  int message[2] = {0, 0};
  const ssize_t got =
      retryOnEintr([&] { return ::read(reportRead.get(), message, sizeof message); });
  if (got <= 0) {
    subreaper.adopt(pid, held);
    return pid;
  }
  retryOnEintr([&] { return ::waitpid(pid, nullptr, 0); });
  const auto step = got == sizeof message ? static_cast<Step>(message[0]) : kExecve;
  return fail(ErrorCode::kSpawn, stepMessage(step, spec, message[1]), {},
              spec.workingDir.empty() ? "" : "The working directory was " + spec.workingDir + ".");
}

// The one thread that starts every child; it lives (blocked) until the process ends, so a
// child's parent-death signal fires only when kaja itself dies.
class SpawnThread {
 public:
  // Leaked on purpose: it must outlive every static destructor.
  static SpawnThread& instance() {
    static auto* thread = new SpawnThread();
    return *thread;
  }

  // Runs `job` on the spawn thread and waits for it; false when there is no such thread.
  bool run(const std::function<void()>& job) {
    if (!running_) return false;
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return job_ == nullptr; });
    job_ = &job;
    const auto ticket = ++submitted_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return finished_ >= ticket; });
    return true;
  }

 private:
  SpawnThread() {
    try {
      std::thread([this] { loop(); }).detach();
      running_ = true;
    } catch (const std::system_error&) {
    }
  }

  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return job_ != nullptr; });
      const auto* job = job_;
      lock.unlock();
      (*job)();
      lock.lock();
      job_ = nullptr;
      ++finished_;
      changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  const std::function<void()>* job_ = nullptr;
  unsigned long submitted_ = 0;
  unsigned long finished_ = 0;
  bool running_ = false;
};

}  // namespace

Result<pid_t> forkExec(const ExecSpec& spec) {
  if (spec.argv.empty()) return fail(ErrorCode::kSpawn, "The launch plan has no command to run.");
  std::vector<char*> argv;
  argv.reserve(spec.argv.size() + 1);
  for (const auto& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(spec.env.size() + 1);
  for (const auto& entry : spec.env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);
  ChildPlan plan{spec.argv.front().c_str(),
                 argv.data(),
                 envp.data(),
                 spec.workingDir.empty() ? nullptr : spec.workingDir.c_str(),
                 {spec.stdinFd, spec.stdoutFd, spec.stderrFd, spec.guardFd, -1},
                 spec.guardFd >= 0 ? 5 : 3,
                 spec.niceness,
                 ::getpid(),
                 -1};
  Result<pid_t> result = fail(ErrorCode::kSpawn, "The spawn thread did not run.");
  const std::function<void()> job = [&] { result = startOnThisThread(spec, plan); };
  // Without a spawn thread to spare the child is started from here; its parent-death signal then
  // follows this thread.
  if (!SpawnThread::instance().run(job)) job();
  return result;
}

void restoreDefaultSignals() {
  struct sigaction byDefault {};
  byDefault.sa_handler = SIG_DFL;
  ::sigemptyset(&byDefault.sa_mask);
  for (int signal = 1; signal < NSIG; ++signal) ::sigaction(signal, &byDefault, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace kaja::core
