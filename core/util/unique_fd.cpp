#include "core/util/unique_fd.h"

#include <unistd.h>

namespace kaja::core {

void UniqueFd::reset(int fd) {
  if (fd_ >= 0 && fd_ != fd) {
    // close() must not be retried on EINTR on Linux: the descriptor is already gone.
    ::close(fd_);
  }
  fd_ = fd;
}

}  // namespace kaja::core
