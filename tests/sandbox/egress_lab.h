#pragma once

// The egress tests' small internet: tests/tools/kaja_egress_lab in a network and mount
// namespace of its own (unshare -n -m), with 93.184.216.34 (public), 10.0.0.5 (private),
// 169.254.169.254 and 100.100.100.200 (metadata), and 2606:4700::1111 (public, when the
// kernel has IPv6) on the namespace's loopback, an origin on port 80 of each and of 127.0.0.1, a
// stalled listener on 93.184.216.34:81, and a private /etc/hosts (private.example, public.example,
// mixed.example, public6.example, mixed6.example) and resolv.conf bound over the real ones. No
// packet leaves that namespace. Also a small client for the proxy's unix socket.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/core/mcp/http_test_servers.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::testing {

inline const char* kLabPath = "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";

/// Returns an empty string when `unshare -n -m` works here, else why not.
inline std::string namespaceProblem() {
  const auto result = runCommand(
      {"/usr/bin/unshare", "-n", "-m", "/bin/sh", "-c", "ip link set lo up"}, {kLabPath});
  if (result.exitCode == 0) return {};
  return "unshare -n -m is not permitted here (" + result.err.substr(0, 200) +
         "); the egress tests need a network namespace of their own";
}

/// The lab, running until destruction. Its socket is `socketPath()`.
class EgressLab {
 public:
  /// Starts the lab with `flags` added to its command line, and an origin on port 80 of each
  /// of `moreIpv6` (canonical text, put on the loopback too; "NO-ORIGIN" when the kernel has
  /// no IPv6); nullptr when it did not start.
  static std::unique_ptr<EgressLab> start(const std::vector<std::string>& flags = {},
                                          const std::vector<std::string>& moreIpv6 = {}) {
    std::unique_ptr<EgressLab> lab(new EgressLab());
    const std::string dir = lab->dir_.path();
    lab->dir_.write("hosts",
                    "127.0.0.1 localhost\n10.0.0.5 private.example\n93.184.216.34 "
                    "public.example\n93.184.216.34 mixed.example\n10.0.0.5 mixed.example\n"
                    "2606:4700::1111 public6.example\n93.184.216.34 mixed6.example\n"
                    "fd00::5 mixed6.example\n");
    lab->dir_.write("resolv.conf", "nameserver 127.0.0.1\n");
    std::string script =
        "set -e\nip link set lo up\n"
        "for a in 93.184.216.34 10.0.0.5 169.254.169.254 100.100.100.200; do\n"
        "  ip addr add $a/32 dev lo\ndone\n"
        "ip -6 addr add 2606:4700::1111/128 dev lo nodad 2>/dev/null || true\n"
        "mount --bind " +
        dir +
        "/hosts /etc/hosts\n"
        "mount --bind " +
        dir +
        "/resolv.conf /etc/resolv.conf\n"
        "exec " +
        std::string(kaja::test::binDir()) + "/kaja_egress_lab --socket " + dir +
        "/egress.sock --origin 93.184.216.34:80 --origin 10.0.0.5:80 --origin "
        "169.254.169.254:80 --origin 100.100.100.200:80 --origin 127.0.0.1:80 --origin "
        "[2606:4700::1111]:80 --stall "
        "93.184.216.34:81";
    for (const auto& flag : flags) script += " " + flag;
    std::string addresses;
    for (const auto& address : moreIpv6) {
      addresses += "ip -6 addr add " + address + "/128 dev lo nodad 2>/dev/null || true\n";
      script += " --origin [" + address + "]:80";
    }
    script.insert(script.find("mount --bind"), addresses);
    core::LaunchPlan plan;
    plan.argv = {"/usr/bin/unshare", "-n", "-m", "/bin/sh", "-c", script + "\n"};
    plan.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", false}};
    lab->server_ = ServerProcess::start(plan);
    return lab->server_ ? std::move(lab) : nullptr;
  }

  [[nodiscard]] std::string socketPath() const { return dir_.path() + "/egress.sock"; }
  [[nodiscard]] const TempDir& dir() const { return dir_; }

  /// Returns how many requests the origin at `name` ("10.0.0.5:80") has served, waiting
  /// up to 5 s for the count to reach `atLeast` (its lines are read on another thread).
  int served(const std::string& name, int atLeast = 0) {
    return count("SAW " + name + " ", atLeast);
  }
  /// Returns how many lines the lab printed that start with `prefix`, waiting up to 5 s for
  /// the count to reach `atLeast`.
  int count(const std::string& prefix, int atLeast) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    int lines = 0;
    while ((lines = server_->count(prefix)) < atLeast &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return lines;
  }

 private:
  EgressLab() = default;
  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
};

/// Sends `request` to the unix socket at `path` (then ends the sending side when
/// `endAfterSending`) and returns all it answers until it closes, or until `timeout`
/// passes. Empty when the socket does not accept.
inline std::string askProxy(const std::string& path, const std::string& request,
                            std::chrono::milliseconds timeout = std::chrono::seconds(15),
                            bool endAfterSending = false) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return {};
  }
  timeval limit{static_cast<time_t>(timeout.count() / 1000),
                static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the proxy may answer and stop reading a huge request
    sent += static_cast<std::size_t>(n);
  }
  if (endAfterSending) ::shutdown(fd, SHUT_WR);
  std::string answer;
  char buffer[8192];
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  ssize_t n = 0;
  while (std::chrono::steady_clock::now() < deadline &&
         (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0) {
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return answer;
}

/// Returns the status code of an HTTP answer, or 0 when there is none.
inline int statusOf(const std::string& answer) {
  if (!answer.starts_with("HTTP/1.1 ") || answer.size() < 12) return 0;
  return std::atoi(answer.substr(9, 3).c_str());
}

}  // namespace kaja::testing
