// `kaja sandbox bridge`: relay a namespace's proxy port to the worker's egress socket.
#include "sandbox/egress_bridge.h"

#include <cstdio>

namespace kaja::sandbox {

int runBridge(std::span<const std::string> /*args*/) {
  std::fprintf(stderr, "kaja: sandbox bridge is not available in this build\n");
  return 126;
}

}  // namespace kaja::sandbox
