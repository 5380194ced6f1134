// `kaja sandbox enter`: join a cgroup, then exec the confined server's command line.
#include "sandbox/enter.h"

#include <cstdio>

namespace kaja::sandbox {

int runEnter(std::span<const std::string> /*args*/) {
  std::fprintf(stderr, "kaja: sandbox enter is not available in this build\n");
  return 126;
}

}  // namespace kaja::sandbox
