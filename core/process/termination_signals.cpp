#include "core/process/termination_signals.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <thread>

#include "core/util/sys.h"

namespace kaja::core {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Written by the handler, read by the signal thread. Plain ints and a lock-free atomic:
// the only state a handler may touch.
int wakeWrite = -1;
std::atomic<int> received{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void onTerminationSignal(int signal) {
  const int saved = errno;
  int expected = 0;
  // Only the first signal is passed on; the thread is already ending kaja for it.
  if (received.compare_exchange_strong(expected, signal)) {
    const unsigned char byte = static_cast<unsigned char>(signal);
    [[maybe_unused]] const ssize_t ignored = ::write(wakeWrite, &byte, 1);
  }
  errno = saved;
}

}  // namespace

Result<void> exitCleanlyOnSignals(std::function<void(int)> cleanup) {
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC) != 0) {
    return fail(ErrorCode::kIo, syscallMessage("pipe2", "O_CLOEXEC", errno));
  }
  const int wakeRead = wake[0];
  wakeWrite = wake[1];
  try {
    std::thread([wakeRead, cleanup = std::move(cleanup)] {
      // A byte with no signal recorded here came from a child between fork and exec,
      // which shares the pipe but not this memory; it is not kaja's signal.
      int signal = 0;
      while (signal == 0) {
        unsigned char byte = 0;
        if (retryOnEintr([&] { return ::read(wakeRead, &byte, 1); }) != 1) return;
        signal = received.load();
      }
      cleanup(signal);
      ::_exit(128 + signal);
    }).detach();
  } catch (const std::system_error& error) {
    return fail(ErrorCode::kIo,
                "Could not start kaja's signal thread: " + std::string(error.what()));
  }
  for (const int signal : kSignals) {
    struct sigaction current {};
    if (::sigaction(signal, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = onTerminationSignal;
    ::sigemptyset(&action.sa_mask);
    // Interrupted system calls restart, so the rest of kaja sees no extra EINTR.
    action.sa_flags = SA_RESTART;
    if (::sigaction(signal, &action, nullptr) != 0) {
      return fail(ErrorCode::kIo, syscallMessage("sigaction", ::strsignal(signal), errno));
    }
  }
  return {};
}

int terminationSignal() { return received.load(); }

void waitForSignalExit() {
  for (;;) ::pause();
}

}  // namespace kaja::core
