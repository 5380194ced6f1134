#pragma once

// SIGINT (Ctrl-C), SIGTERM and SIGHUP would otherwise end kaja on the spot and leave its
// servers, their descendants and its temporary folders behind. The handler does the one
// thing that is safe in a signal handler: it writes the signal's number to a pipe. A
// thread of its own reads the pipe and does the cleaning up outside any handler, then
// ends the process with 128 + the signal number (130 for SIGINT), as shells report.

#include <functional>

#include "core/error.h"

namespace kaja::core {

/// Installs the handlers for SIGINT, SIGTERM and SIGHUP (a signal ignored on entry, as
/// under nohup, stays ignored) and starts the thread that waits for them. On the first
/// signal that thread calls `cleanup(signal)` and then `_exit(128 + signal)`; later
/// signals are ignored while it runs. Call once, early in main. Returns kIo naming the
/// call and errno when the pipe, a handler or the thread cannot be set up.
Result<void> exitCleanlyOnSignals(std::function<void(int)> cleanup);

/// Returns the signal being handled, or 0 when none arrived. A main thread that finishes
/// its work while this is non-zero should call waitForSignalExit() instead of returning,
/// so that the exit status is the signal's.
int terminationSignal();

/// Blocks until the signal thread ends the process; never returns.
[[noreturn]] void waitForSignalExit();

}  // namespace kaja::core
