#pragma once

#include <span>
#include <string>

namespace kaja::sandbox {

/// `kaja sandbox bridge --listen 127.0.0.1:PORT --socket PATH -- PROGRAM ARGS…`: runs
/// inside a server's network namespace, which has no route out. It starts PROGRAM as its
/// child (stdin, stdout and stderr passed through) and relays every TCP connection made to
/// the listen address to the worker's egress proxy at the unix socket PATH, until PROGRAM
/// exits. Returns PROGRAM's exit status (128+N for a signal), or 2 for bad usage and 126
/// when the listener or the child could not start (one sentence on stderr).
int runBridge(std::span<const std::string> args);

}  // namespace kaja::sandbox
