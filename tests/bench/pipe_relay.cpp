// pipe_relay: the least a process between a client and a stdio server can do. It starts the
// server (its arguments) and copies bytes both ways, one blocking thread per direction, with
// no parsing at all. gateway_bench runs it as a third side beside the direct call and
// `kaja serve`, so the cost of the extra process and its two pipe hops is measured apart
// from what kaja does with each message.
//
//   build/bin/pipe_relay SERVER [ARGS...]

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <thread>

namespace {

// Copies `from` to `to` until end of input or an error, then closes `to`.
void copy(int from, int to) {
  std::array<char, 65536> buffer{};
  while (true) {
    const ssize_t got = ::read(from, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    ssize_t done = 0;
    while (done < got) {
      const ssize_t put = ::write(to, buffer.data() + done, static_cast<size_t>(got - done));
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) {
        ::close(to);
        return;
      }
      done += put;
    }
  }
  ::close(to);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: pipe_relay SERVER [ARGS...]\n");
    return 2;
  }
  int toServer[2];
  int fromServer[2];
  if (::pipe2(toServer, O_CLOEXEC) != 0 || ::pipe2(fromServer, O_CLOEXEC) != 0) {
    std::perror("pipe_relay: pipe");
    return 1;
  }
  const pid_t child = ::fork();
  if (child < 0) {
    std::perror("pipe_relay: fork");
    return 1;
  }
  if (child == 0) {
    ::dup2(toServer[0], 0);
    ::dup2(fromServer[1], 1);
    ::execvp(argv[1], argv + 1);
    std::perror("pipe_relay: exec");
    ::_exit(127);
  }
  ::close(toServer[0]);
  ::close(fromServer[1]);
  std::thread up([&] { copy(0, toServer[1]); });
  copy(fromServer[0], 1);
  up.detach();  // the client may keep stdin open after the server is gone
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
