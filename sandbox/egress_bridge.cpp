// `kaja sandbox bridge`: relay a namespace's proxy port to the worker's egress socket.
//
// It runs once per confined server, so it stays small: one thread, poll(), and two 16 KiB
// buffers per open connection. It starts PROGRAM, forwards the signals that end it, reaps
// every child (it may be the namespace's init) and exits with PROGRAM's status. Signals
// reach it through a self-pipe whose handlers are process-wide, so it does not matter
// which of kaja's threads the kernel picks to deliver them.
#include "sandbox/egress_bridge.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/net/address_guard.h"
#include "core/util/sys.h"
#include "core/util/unique_fd.h"

namespace kaja::sandbox {
namespace {

constexpr int kExitUsage = 2;
constexpr int kExitCannotStart = 126;
constexpr std::size_t kBuffer = std::size_t{16} * 1024;
constexpr std::size_t kMaxRelays = 512;

struct Usage {
  sockaddr_storage listen{};
  socklen_t listenLength = 0;
  std::string socketPath;
  std::vector<std::string> program;
};

int complain(int code, const std::string& sentence) {
  std::fprintf(stderr, "kaja: %s\n", sentence.c_str());
  return code;
}

// Parses "127.0.0.1:PORT" or "[::1]:PORT" into `usage`.
bool parseListen(const std::string& text, Usage& usage) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return false;
  const auto address = core::net::parseIpAddress(text.substr(0, colon));
  const std::string_view port(text.data() + colon + 1, text.size() - colon - 1);
  int number = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (!address || port.empty() || error != std::errc() || end != port.data() + port.size() ||
      number < 1 || number > 65535) {
    return false;
  }
  if (address->v6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&usage.listen);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<std::uint16_t>(number));
    std::memcpy(&in6->sin6_addr, address->bytes.data(), 16);
    usage.listenLength = sizeof(sockaddr_in6);
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(&usage.listen);
    in->sin_family = AF_INET;
    in->sin_port = htons(static_cast<std::uint16_t>(number));
    std::memcpy(&in->sin_addr, address->bytes.data(), 4);
    usage.listenLength = sizeof(sockaddr_in);
  }
  return true;
}

std::optional<Usage> parseUsage(std::span<const std::string> args) {
  Usage usage;
  bool listen = false;
  std::size_t i = 0;
  for (; i < args.size() && args[i] != "--"; ++i) {
    if (i + 1 >= args.size()) return std::nullopt;
    if (args[i] == "--listen") {
      listen = parseListen(args[++i], usage);
      if (!listen) return std::nullopt;
    } else if (args[i] == "--socket") {
      usage.socketPath = args[++i];
    } else {
      return std::nullopt;
    }
  }
  if (!listen || usage.socketPath.empty() || i + 1 >= args.size()) return std::nullopt;
  usage.program.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
  if (!usage.program.front().starts_with('/')) return std::nullopt;
  return usage;
}

// A fresh network namespace starts with lo down; bring it up if this process may.
void bringLoopbackUp() {
  core::UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  if (fd.get() < 0 || ::ioctl(fd.get(), SIOCGIFFLAGS, &request) != 0) return;
  request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
  (void)::ioctl(fd.get(), SIOCSIFFLAGS, &request);
}

core::UniqueFd listenOn(const Usage& usage, std::string& problem) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    core::UniqueFd fd(
        ::socket(usage.listen.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) {
      problem = core::syscallMessage("socket", "the bridge's listener", errno);
      return {};
    }
    const int on = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&usage.listen), usage.listenLength) ==
            0 &&
        ::listen(fd.get(), 64) == 0) {
      return fd;
    }
    const int err = errno;
    problem = core::syscallMessage("bind", "the bridge's listen address", err);
    if (err != EADDRNOTAVAIL) break;
    bringLoopbackUp();
  }
  return {};
}

// Forks and execs `program`; returns its pid, or -1 with
// `problem` set. A CLOEXEC pipe carries exec's errno back, so a missing program is
// reported rather than seen as a quick exit.
pid_t startProgram(const std::vector<std::string>& program, std::string& problem) {
  std::vector<char*> argv;
  argv.reserve(program.size() + 1);
  for (const auto& arg : program) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  int pipeFds[2];
  if (::pipe2(pipeFds, O_CLOEXEC) != 0) {
    problem = core::syscallMessage("pipe2", "the exec report", errno);
    return -1;
  }
  core::UniqueFd readEnd(pipeFds[0]);
  core::UniqueFd writeEnd(pipeFds[1]);
  const pid_t pid = ::fork();
  if (pid < 0) {
    problem = core::syscallMessage("fork", program.front(), errno);
    return -1;
  }
  if (pid == 0) {
    ::execv(argv[0], argv.data());
    const int err = errno;
    (void)!::write(writeEnd.get(), &err, sizeof err);
    ::_exit(127);
  }
  writeEnd.reset();
  int err = 0;
  if (core::retryOnEintr([&] { return ::read(readEnd.get(), &err, sizeof err); }) ==
      static_cast<ssize_t>(sizeof err)) {
    problem = core::syscallMessage("execv", program.front(), err);
    ::waitpid(pid, nullptr, 0);
    return -1;
  }
  return pid;
}

int gSignalPipe = -1;

void onSignal(int signal) {
  const int saved = errno;
  const auto byte = static_cast<unsigned char>(signal);
  (void)!::write(gSignalPipe, &byte, 1);
  errno = saved;
}

// Sends SIGCHLD and the signals that end a program to a non-blocking pipe and returns its
// read end. The handlers replace kaja's own: the bridge passes these signals on instead.
// Exec resets them to the default in PROGRAM.
core::UniqueFd catchSignals(std::string& problem) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    problem = core::syscallMessage("pipe2", "the bridge's signals", errno);
    return {};
  }
  gSignalPipe = fds[1];  // kept open until the bridge exits
  struct sigaction action {};
  action.sa_handler = onSignal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (const int signal : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT}) {
    ::sigaction(signal, &action, nullptr);
  }
  return core::UniqueFd(fds[0]);
}

/// One direction of a relayed connection.
struct Direction {
  int from = -1;
  int to = -1;
  char* buffer = nullptr;
  std::size_t length = 0;  ///< bytes waiting in `buffer`
  std::size_t offset = 0;  ///< of them, already written
  bool ended = false;      ///< `from` reached EOF and `to` was shut for writing

  [[nodiscard]] bool wantsRead() const { return !ended && length == 0; }
  [[nodiscard]] bool wantsWrite() const { return length > offset; }
};

/// An accepted TCP connection and its connection to the egress socket.
struct Relay {
  core::UniqueFd tcp;
  core::UniqueFd unix;
  std::unique_ptr<char[]> buffers = std::make_unique<char[]>(2 * kBuffer);
  Direction up;
  Direction down;
  bool broken = false;

  Relay(core::UniqueFd client, core::UniqueFd proxy)
      : tcp(std::move(client)), unix(std::move(proxy)) {
    up = {tcp.get(), unix.get(), buffers.get()};
    down = {unix.get(), tcp.get(), buffers.get() + kBuffer};
  }
  [[nodiscard]] bool finished() const { return broken || (up.ended && down.ended); }
};

// Reads or writes what `direction` can without blocking; false on a socket error.
bool step(Direction& direction, short fromEvents, short toEvents) {
  if (direction.wantsRead() && (fromEvents & (POLLIN | POLLHUP | POLLERR)) != 0) {
    const ssize_t n = ::read(direction.from, direction.buffer, kBuffer);
    if (n < 0) return errno == EAGAIN || errno == EINTR;
    if (n == 0) {
      direction.ended = true;
      ::shutdown(direction.to, SHUT_WR);
      return true;
    }
    direction.length = static_cast<std::size_t>(n);
    direction.offset = 0;
  }
  if (direction.wantsWrite() && (toEvents & (POLLOUT | POLLERR)) != 0) {
    const ssize_t n = ::send(direction.to, direction.buffer + direction.offset,
                             direction.length - direction.offset, MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EINTR;
    direction.offset += static_cast<std::size_t>(n);
    if (direction.offset == direction.length) direction.length = direction.offset = 0;
  }
  return true;
}

short eventsFor(int fd, const Relay& relay) {
  short events = 0;
  for (const Direction* d : {&relay.up, &relay.down}) {
    if (d->from == fd && d->wantsRead()) events |= POLLIN;
    if (d->to == fd && d->wantsWrite()) events |= POLLOUT;
  }
  return events;
}

core::UniqueFd connectProxy(const std::string& path) {
  core::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  sockaddr_un address{};
  if (fd.get() < 0 || path.size() >= sizeof address.sun_path) return {};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return {};
  }
  return fd;
}

void acceptAll(int listener, const std::string& socketPath,
               std::vector<std::unique_ptr<Relay>>& relays) {
  for (;;) {
    core::UniqueFd client(::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (client.get() < 0) return;
    // When the proxy is gone or the bridge is full, the client sees its connection end.
    if (relays.size() >= kMaxRelays) continue;
    core::UniqueFd proxy = connectProxy(socketPath);
    if (proxy.get() < 0) continue;
    relays.push_back(std::make_unique<Relay>(std::move(client), std::move(proxy)));
  }
}

// Returns the exit status once `pid` has ended; reaps any other child on the way.
std::optional<int> reap(pid_t pid) {
  std::optional<int> result;
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(-1, &status, WNOHANG)) > 0) {
    if (done != pid) continue;
    result = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  }
  return result;
}

int relayUntilExit(pid_t pid, int signals, int listener, const std::string& socketPath) {
  std::vector<std::unique_ptr<Relay>> relays;
  std::vector<pollfd> fds;
  for (;;) {
    fds.assign({{signals, POLLIN, 0}, {listener, POLLIN, 0}});
    for (const auto& relay : relays) {
      // A socket with nothing to wait for is left out (fd -1): poll would still report its
      // hang-up at once, and the loop would spin until the other side drains.
      for (const int fd : {relay->tcp.get(), relay->unix.get()}) {
        const short events = eventsFor(fd, *relay);
        fds.push_back({events != 0 ? fd : -1, events, 0});
      }
    }
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return kExitCannotStart;
    if (fds[0].revents != 0) {
      unsigned char signal = 0;
      while (::read(signals, &signal, 1) == 1) {
        if (signal != SIGCHLD) ::kill(pid, signal);
      }
      if (const auto status = reap(pid)) return *status;
    }
    for (std::size_t i = 0; i < relays.size(); ++i) {
      Relay& relay = *relays[i];
      const short tcpEvents = fds[2 + 2 * i].revents;
      const short unixEvents = fds[3 + 2 * i].revents;
      relay.broken =
          !step(relay.up, tcpEvents, unixEvents) || !step(relay.down, unixEvents, tcpEvents);
    }
    std::erase_if(relays, [](const auto& relay) { return relay->finished(); });
    if ((fds[1].revents & POLLIN) != 0) acceptAll(listener, socketPath, relays);
  }
}

}  // namespace

int runBridge(std::span<const std::string> args) {
  const auto usage = parseUsage(args);
  if (!usage) {
    return complain(kExitUsage,
                    "use: kaja sandbox bridge --listen 127.0.0.1:PORT --socket PATH -- "
                    "/ABSOLUTE/PROGRAM [ARGS...]");
  }
  std::string problem;
  const core::UniqueFd listener = listenOn(*usage, problem);
  if (listener.get() < 0) return complain(kExitCannotStart, problem + ".");
  const core::UniqueFd signals = catchSignals(problem);
  if (signals.get() < 0) return complain(kExitCannotStart, problem + ".");
  const pid_t pid = startProgram(usage->program, problem);
  if (pid < 0) return complain(kExitCannotStart, problem + ".");
  return relayUntilExit(pid, signals.get(), listener.get(), usage->socketPath);
}

}  // namespace kaja::sandbox
