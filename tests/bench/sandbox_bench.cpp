// sandbox_bench: what one sandbox worker (`kaja sandbox serve`) costs, measured on this
// machine. The server is tests/bench/echo_server, the ability "echo" of a private
// marketplace.
//
//   build/bin/sandbox_bench [--servers N] [--calls N] [--reap N] [--cycles N]
//
// 1. latency: p50 of a tools/call through the worker (HTTP, one keep-alive connection,
//    JSON replies) beside the same call made directly to echo_server over its pipes, in
//    alternating rounds in one run;
// 2. memory: the worker's own RSS with one warm server and with --servers warm servers
//    (one per user), and the growth per server;
// 3. reaping: --reap users call once; with --idle 2 each server should be gone within 1 s
//    of its deadline (2 s after its call ended);
// 4. cycles: --cycles turns of a --shared worker (initialize, call, DELETE), then the
//    worker's zombies, processes and open fds, beside the counts before.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/process/process_tree.h"
#include "sandbox/token.h"
#include "sandbox/worker.h"
#include "tests/bench/client_bench_workers.h"
#include "tests/support/build_paths.h"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Options {
  int servers = 200;
  int calls = 2000;
  int rounds = 3;
  int reap = 20;
  int cycles = 1000;
};

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1));
  return values[rank];
}

long statusField(pid_t pid, const char* field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(field)) return std::strtol(line.c_str() + std::strlen(field), nullptr, 10);
  }
  return 0;
}

std::size_t openFds(pid_t pid) {
  std::error_code ec;
  std::size_t count = 0;
  for (auto it = fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    ++count;
  }
  return count;
}

// The processes below `pid`, and how many of them are zombies.
std::pair<std::size_t, std::size_t> descendants(pid_t pid) {
  std::size_t all = 0;
  std::size_t zombies = 0;
  std::vector<pid_t> todo = kaja::core::childrenOf(pid);
  while (!todo.empty()) {
    const pid_t next = todo.back();
    todo.pop_back();
    ++all;
    std::ifstream stat("/proc/" + std::to_string(next) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    const auto close = text.rfind(')');
    if (close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z') ++zombies;
    for (const pid_t child : kaja::core::childrenOf(next)) todo.push_back(child);
  }
  return {all, zombies};
}

// One keep-alive HTTP/1.1 connection to 127.0.0.1.
class Connection {
 public:
  explicit Connection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      std::perror("connect");
      std::exit(1);
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~Connection() { ::close(fd_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends one request and returns (status, headers text, body).
  std::tuple<int, std::string, std::string> request(
      const std::string& method, const std::string& path, const std::string& body,
      const std::vector<std::pair<std::string, std::string>>& headers) {
    std::string text = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    for (const auto& [name, value] : headers) text += name + ": " + value + "\r\n";
    text += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    for (std::size_t sent = 0; sent < text.size();) {
      const ssize_t n = ::write(fd_, text.data() + sent, text.size() - sent);
      if (n <= 0) return {0, "", ""};
      sent += static_cast<std::size_t>(n);
    }
    std::size_t headEnd = std::string::npos;
    while ((headEnd = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return {0, "", ""};
    }
    std::string head = buffer_.substr(0, headEnd);
    buffer_.erase(0, headEnd + 4);
    std::string lower = head;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    std::size_t length = 0;
    if (const auto at = lower.find("content-length:"); at != std::string::npos) {
      length = std::strtoull(lower.c_str() + at + 15, nullptr, 10);
    }
    while (buffer_.size() < length) {
      if (!fill()) return {0, "", ""};
    }
    std::string replyBody = buffer_.substr(0, length);
    buffer_.erase(0, length);
    return {std::atoi(head.c_str() + 9), head, replyBody};
  }

 private:
  bool fill() {
    char chunk[65536];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
  int fd_ = -1;
  std::string buffer_;
};

std::string headerValue(const std::string& head, std::string name) {
  std::string lower = head;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  const auto at = lower.find("\r\n" + name + ":");
  if (at == std::string::npos) return {};
  const auto start = head.find_first_not_of(' ', at + name.size() + 3);
  return head.substr(start, head.find("\r\n", start) - start);
}

struct Worker {
  pid_t pid = -1;
  int port = 0;
  std::string state;
};

class Bench {
 public:
  explicit Bench(Options options) : options_(options) {
    root_ = fs::temp_directory_path() / ("kaja-sandbox-bench-" + std::to_string(::getpid()));
    fs::create_directories(root_ + "/market/abilities/echo");
    std::ofstream(root_ + "/market/abilities/echo/mcp.toml")
        << "command = \"" << kaja::test::binDir() << "/echo_server\"\ntools = [\"echo\"]\n";
    key_.bytes = std::string(32, 'b');
    std::ofstream(root_ + "/key") << key_.bytes;
    fs::permissions(root_ + "/key", fs::perms::owner_read | fs::perms::owner_write);
  }
  ~Bench() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  Worker start(const std::string& name, const std::vector<std::string>& extra) {
    Worker worker;
    worker.state = root_ + "/" + name;
    int err[2];
    if (::pipe2(err, O_CLOEXEC) != 0) std::exit(1);
    worker.pid = ::fork();
    if (worker.pid == 0) {
      ::dup2(err[1], 2);
      ::setenv("HOME", root_.c_str(), 1);
      ::setenv("XDG_CONFIG_HOME", (root_ + "/config").c_str(), 1);
      ::setenv("XDG_DATA_HOME", (root_ + "/data").c_str(), 1);
      ::setenv("KAJA_SHIPPED_MARKETPLACE", (root_ + "/market").c_str(), 1);
      std::vector<std::string> args{std::string(kaja::test::binDir()) + "/kaja",
                                    "sandbox",
                                    "serve",
                                    "--listen",
                                    "127.0.0.1:0",
                                    "--key-file",
                                    root_ + "/key",
                                    "--state",
                                    worker.state};
      args.insert(args.end(), extra.begin(), extra.end());
      std::vector<char*> argv;
      for (auto& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(err[1]);
    std::string text;
    char chunk[4096];
    while (text.find("/users/USER") == std::string::npos) {
      const ssize_t n = ::read(err[0], chunk, sizeof chunk);
      if (n <= 0) {
        std::fprintf(stderr, "the worker did not start:\n%s\n", text.c_str());
        std::exit(1);
      }
      text.append(chunk, static_cast<std::size_t>(n));
    }
    const auto at = text.find("127.0.0.1:", text.find("listening"));
    worker.port = std::atoi(text.c_str() + at + 10);
    // The worker's later warnings go to our stderr.
    std::thread([fd = err[0]] {
      char buffer[4096];
      while (::read(fd, buffer, sizeof buffer) > 0) {
      }
      ::close(fd);
    }).detach();
    return worker;
  }

  static void stop(const Worker& worker) {
    ::kill(worker.pid, SIGTERM);
    int status = 0;
    ::waitpid(worker.pid, &status, 0);
  }

  [[nodiscard]] std::vector<std::pair<std::string, std::string>> headers(
      const std::string& user, const std::string& session = {},
      const std::string& turn = {}) const {
    std::vector<std::pair<std::string, std::string>> out{
        {"Accept", "application/json"},
        {"Content-Type", "application/json"},
        {"Authorization",
         "Bearer " + *kaja::sandbox::makeToken(key_, user, kaja::sandbox::unixNow() + 3600)}};
    if (!session.empty()) out.emplace_back("Mcp-Session-Id", session);
    if (!turn.empty()) out.emplace_back("Kaja-Turn", turn);
    return out;
  }

  // Initializes `user`'s session on `connection`; returns its id.
  std::string initialize(Connection& connection, const Worker& worker, const std::string& user,
                         const std::string& turn = {}) {
    const std::string path = "/users/" + user + "/abilities/echo/mcp";
    const auto [status, head, body] = connection.request(
        "POST", path,
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":)"
        R"("2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})",
        headers(user, {}, turn));
    const std::string session = headerValue(head, "mcp-session-id");
    if (status != 200 || session.empty()) {
      std::fprintf(stderr, "initialize for %s failed: %d %s\n", user.c_str(), status, body.c_str());
      std::exit(1);
    }
    connection.request("POST", path, R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                       headers(user, session, turn));
    (void)worker;
    return session;
  }

  static std::string callBody(int id) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
           R"(,"method":"tools/call","params":{"name":"echo","arguments":{"message":"kaja"}}})";
  }

  bool call(Connection& connection, const std::string& user, const std::string& session, int id,
            const std::string& turn = {}) {
    return callWith(connection, "/users/" + user + "/abilities/echo/mcp", id,
                    headers(user, session, turn));
  }

  static bool callWith(Connection& connection, const std::string& path, int id,
                       const std::vector<std::pair<std::string, std::string>>& headers) {
    const auto [status, head, body] = connection.request("POST", path, callBody(id), headers);
    return status == 200 && body.find("kaja") != std::string::npos &&
           body.find("\"error\"") == std::string::npos;
  }

  // The floor for any process that relays HTTP to a stdio server: a child that accepts one
  // connection and, with blocking reads and writes and no parsing beyond Content-Length,
  // passes each request body to echo_server as a line and its reply line back. Its p50
  // is what the TCP hop and the extra process cost on this machine before any work.
  std::vector<double> relayFloor(int calls) {
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener, 1) != 0 ||
        ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      std::perror("relay");
      std::exit(1);
    }
    const pid_t relay = ::fork();
    if (relay == 0) {
      int in[2];
      int out[2];
      if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) ::_exit(1);
      const pid_t server = ::fork();
      if (server == 0) {
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        const std::string path = std::string(kaja::test::binDir()) + "/echo_server";
        ::execl(path.c_str(), path.c_str(), nullptr);
        ::_exit(127);
      }
      const int peer = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      int one = 1;
      ::setsockopt(peer, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      std::string request;
      std::string reply;
      char chunk[65536];
      for (;;) {
        std::size_t headEnd = 0;
        while ((headEnd = request.find("\r\n\r\n")) == std::string::npos) {
          const ssize_t n = ::read(peer, chunk, sizeof chunk);
          if (n <= 0) ::_exit(0);
          request.append(chunk, static_cast<std::size_t>(n));
        }
        const auto at = request.find("Content-Length: ");
        const std::size_t size = std::strtoull(request.c_str() + at + 16, nullptr, 10);
        while (request.size() < headEnd + 4 + size) {
          const ssize_t n = ::read(peer, chunk, sizeof chunk);
          if (n <= 0) ::_exit(0);
          request.append(chunk, static_cast<std::size_t>(n));
        }
        const std::string line = request.substr(headEnd + 4, size) + "\n";
        request.erase(0, headEnd + 4 + size);
        if (::write(in[1], line.data(), line.size()) < 0) ::_exit(1);
        std::size_t end = 0;
        while ((end = reply.find('\n')) == std::string::npos) {
          const ssize_t n = ::read(out[0], chunk, sizeof chunk);
          if (n <= 0) ::_exit(1);
          reply.append(chunk, static_cast<std::size_t>(n));
        }
        const std::string text = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(end) +
                                 "\r\n\r\n" + reply.substr(0, end);
        reply.erase(0, end + 1);
        if (::write(peer, text.data(), text.size()) < 0) ::_exit(0);
      }
    }
    ::close(listener);
    std::vector<double> latencies;
    {
      Connection connection(ntohs(address.sin_port));
      const std::vector<std::pair<std::string, std::string>> none;
      for (int i = 0; i < calls + 100; ++i) {
        const auto begin = Clock::now();
        if (!callWith(connection, "/", i + 1, none)) {
          std::fprintf(stderr, "a call through the floor relay failed\n");
          std::exit(1);
        }
        if (i >= 100) {
          latencies.push_back(
              std::chrono::duration<double, std::micro>(Clock::now() - begin).count());
        }
      }
    }
    ::waitpid(relay, nullptr, 0);
    return latencies;
  }

  // The same call straight to echo_server over its pipes.
  std::vector<double> direct(int calls) {
    int in[2];
    int out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) std::exit(1);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      const std::string path = std::string(kaja::test::binDir()) + "/echo_server";
      ::execl(path.c_str(), path.c_str(), nullptr);
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    std::string buffer;
    auto roundTrip = [&](const std::string& line) {
      const std::string text = line + "\n";
      if (::write(in[1], text.data(), text.size()) < 0) std::exit(1);
      std::size_t end = 0;
      while ((end = buffer.find('\n')) == std::string::npos) {
        char chunk[65536];
        const ssize_t n = ::read(out[0], chunk, sizeof chunk);
        if (n <= 0) std::exit(1);
        buffer.append(chunk, static_cast<std::size_t>(n));
      }
      buffer.erase(0, end + 1);
    };
    roundTrip(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}})");
    std::vector<double> latencies;
    for (int i = 0; i < calls + 100; ++i) {
      const auto begin = Clock::now();
      roundTrip(callBody(i + 1));
      if (i >= 100) {
        latencies.push_back(
            std::chrono::duration<double, std::micro>(Clock::now() - begin).count());
      }
    }
    ::close(in[1]);
    ::close(out[0]);
    ::waitpid(pid, nullptr, 0);
    return latencies;
  }

  std::vector<double> through(Connection& connection, const std::string& session, int calls) {
    std::vector<double> latencies;
    const auto sent = headers("u0", session);  // the client signs its token once, not per call
    for (int i = 0; i < calls + 100; ++i) {
      const auto begin = Clock::now();
      if (!callWith(connection, "/users/u0/abilities/echo/mcp", i + 1, sent)) {
        std::fprintf(stderr, "a call through the worker failed\n");
        std::exit(1);
      }
      if (i >= 100) {
        latencies.push_back(
            std::chrono::duration<double, std::micro>(Clock::now() - begin).count());
      }
    }
    return latencies;
  }

  void latencyAndMemory() {
    const Worker worker = start("warm", {});
    Connection connection(worker.port);
    const std::string session = initialize(connection, worker, "u0");
    std::vector<double> directP50;
    std::vector<double> clientP50;
    std::vector<double> workerP50;
    std::vector<double> floorP50;
    kaja::bench::WorkerSpec spec;
    spec.server.argv = {std::string(kaja::test::binDir()) + "/echo_server"};
    spec.serverName = "echo";
    spec.calls = options_.calls;
    spec.message = "kaja";
    auto kajaClient = [&] {
      auto stats = kaja::bench::runKajaWorker(spec);
      if (!stats) {
        std::fprintf(stderr, "kaja's client failed: %s\n", stats.error().message.c_str());
        std::exit(1);
      }
      clientP50.push_back(stats->p50Us);
    };
    for (int round = 0; round < options_.rounds; ++round) {
      if (round % 2 == 0) {
        directP50.push_back(quantile(direct(options_.calls), 0.5));
        kajaClient();
        floorP50.push_back(quantile(relayFloor(options_.calls), 0.5));
        workerP50.push_back(quantile(through(connection, session, options_.calls), 0.5));
      } else {
        workerP50.push_back(quantile(through(connection, session, options_.calls), 0.5));
        floorP50.push_back(quantile(relayFloor(options_.calls), 0.5));
        kajaClient();
        directP50.push_back(quantile(direct(options_.calls), 0.5));
      }
    }
    const double d = quantile(directP50, 0.5);
    const double c = quantile(clientP50, 0.5);
    const double w = quantile(workerP50, 0.5);
    const double f = quantile(floorP50, 0.5);
    std::printf(
        "call p50 (%d calls x %d rounds): raw pipe %.1f us, kaja's stdio client %.1f us, "
        "a bare HTTP-to-pipe relay %.1f us, through the worker (HTTP) %.1f us: %.2fx the raw "
        "pipe, %.2fx kaja's client, %.2fx the bare relay\n",
        options_.calls, options_.rounds, d, c, f, w, w / d, w / c, w / f);

    const long oneServer = statusField(worker.pid, "VmRSS:");
    std::vector<std::unique_ptr<Connection>> connections;
    for (int user = 1; user < options_.servers; ++user) {
      auto next = std::make_unique<Connection>(worker.port);
      const std::string name = "u" + std::to_string(user);
      const std::string id = initialize(*next, worker, name);
      if (!call(*next, name, id, 1)) {
        std::fprintf(stderr, "the call of %s failed\n", name.c_str());
        std::exit(1);
      }
      connections.push_back(std::move(next));
    }
    const long all = statusField(worker.pid, "VmRSS:");
    const auto [processes, zombies] = descendants(worker.pid);
    std::printf(
        "memory: worker RSS %.1f MB with 1 server, %.1f MB with %d: %.0f KB per server; "
        "%zu processes below the worker\n",
        static_cast<double>(oneServer) / 1024, static_cast<double>(all) / 1024, options_.servers,
        static_cast<double>(all - oneServer) / std::max(1, options_.servers - 1), processes);
    (void)zombies;
    stop(worker);
  }

  void reaping() {
    constexpr double kIdle = 2.0;
    const Worker worker = start("reap", {"--idle", "2"});
    std::map<pid_t, Clock::time_point> ended;
    std::vector<std::unique_ptr<Connection>> connections;
    for (int user = 0; user < options_.reap; ++user) {
      auto next = std::make_unique<Connection>(worker.port);
      const std::string name = "r" + std::to_string(user);
      const std::string id = initialize(*next, worker, name);
      const auto before = descendantSet(worker.pid);
      call(*next, name, id, 1);
      const auto when = Clock::now();
      for (const pid_t child : kaja::core::childrenOf(worker.pid)) {
        if (!ended.contains(child)) ended.emplace(child, when);
      }
      (void)before;
      connections.push_back(std::move(next));
    }
    std::vector<double> late;
    const auto give = Clock::now() + std::chrono::seconds(30);
    std::map<pid_t, Clock::time_point> left = ended;
    while (!left.empty() && Clock::now() < give) {
      for (auto it = left.begin(); it != left.end();) {
        if (!fs::exists("/proc/" + std::to_string(it->first))) {
          late.push_back(std::chrono::duration<double>(Clock::now() - it->second).count() - kIdle);
          it = left.erase(it);
        } else {
          ++it;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::printf(
        "reaping: %zu of %zu servers stopped; after their deadline by p50 %.0f ms, max %.0f ms "
        "(idle %.0f s)\n",
        late.size(), ended.size(), quantile(late, 0.5) * 1000,
        late.empty() ? 0.0 : *std::max_element(late.begin(), late.end()) * 1000, kIdle);
    stop(worker);
  }

  static std::vector<pid_t> descendantSet(pid_t pid) { return kaja::core::childrenOf(pid); }

  void cycles() {
    const Worker worker = start("cycles", {"--shared"});
    Connection warmup(worker.port);
    const std::size_t fdsBefore = openFds(worker.pid);
    const auto begin = Clock::now();
    int failed = 0;
    for (int i = 0; i < options_.cycles; ++i) {
      Connection connection(worker.port);
      const std::string turn = "t" + std::to_string(i);
      const std::string id = initialize(connection, worker, "cyc", turn);
      if (!call(connection, "cyc", id, 1, turn)) ++failed;
      connection.request("DELETE", "/users/cyc/abilities/echo/mcp", "", headers("cyc", id, turn));
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
    std::this_thread::sleep_for(std::chrono::seconds(3));
    const auto [processes, zombies] = descendants(worker.pid);
    const std::size_t fdsAfter = openFds(worker.pid);
    std::printf(
        "cycles: %d start/call/stop turns in %.1f s (%.1f ms each), %d failed; afterwards %zu "
        "processes and %zu zombies below the worker, open fds %zu before and %zu after\n",
        options_.cycles, seconds, seconds * 1000 / options_.cycles, failed, processes, zombies,
        fdsBefore, fdsAfter);
    stop(worker);
  }

 private:
  Options options_;
  std::string root_;
  kaja::sandbox::WorkerKey key_;
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--servers") {
      options.servers = value;
    } else if (flag == "--calls") {
      options.calls = value;
    } else if (flag == "--rounds") {
      options.rounds = value;
    } else if (flag == "--reap") {
      options.reap = value;
    } else if (flag == "--cycles") {
      options.cycles = value;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  ::signal(SIGPIPE, SIG_IGN);
  Bench bench(options);
  bench.latencyAndMemory();
  bench.reaping();
  bench.cycles();
  return 0;
}
