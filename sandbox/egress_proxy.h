#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "sandbox/cidr.h"
#include "sandbox/run_as.h"

namespace boost::asio {
class io_context;
}

namespace kaja::sandbox {

/// How the worker's egress proxy listens and what it lets through.
struct EgressOptions {
  std::string socketPath;  ///< the unix socket it listens on (made 0600)
  /// Who owns the socket (and so alone may connect): the servers' user of a root worker;
  /// nullopt leaves it the worker's own.
  std::optional<RunAs> socketOwner;
  std::vector<Cidr> allowPrivate;  ///< operator's --allow-private ranges; none by default
  std::chrono::milliseconds connectTimeout{10000};  ///< resolving and dialling, then 504
  std::chrono::milliseconds idleTimeout{std::chrono::minutes(5)};  ///< a silent tunnel closes
  std::chrono::milliseconds requestTimeout{10000};  ///< for the request head to arrive
  std::size_t maxConnections = 1024;                ///< then new ones get 503
  /// One line per refused or bad request, for the operator; called on the threads that
  /// run the io_context, so it must be safe to call from them.
  std::function<void(const std::string&)> log;
};

/// What the proxy has done since it started.
struct EgressCounters {
  std::uint64_t connections = 0;  ///< accepted on the socket
  std::uint64_t tunnels = 0;      ///< CONNECT requests relayed
  std::uint64_t forwarded = 0;    ///< plain HTTP requests relayed
  std::uint64_t refused = 0;      ///< 403: the destination is not public
  std::uint64_t badRequests = 0;  ///< 400
  std::uint64_t failed = 0;       ///< 502 and 504: the origin could not be reached
  std::uint64_t busy = 0;         ///< 503: too many connections
  std::size_t active = 0;         ///< connections open now
};

/// The worker's egress proxy (K22): a confined server's only way out. It listens on a unix
/// socket (which the server's bridge relays to) and speaks HTTP CONNECT and absolute-form
/// plain HTTP. For each request it resolves the host once, refuses with 403 when any
/// address is not public (unless in an `allowPrivate` range), and dials exactly the
/// addresses it checked, so a second DNS answer cannot redirect it. Bad requests get 400,
/// unreachable origins 502, timeouts 504. Runs on the io_context it is given, which may be
/// run by several threads (each connection lives on a strand). Async name resolution uses
/// Asio's resolver thread.
class EgressProxy {
 public:
  /// Binds `options.socketPath` (replacing a stale socket there, never another kind of
  /// file) with mode 0600, and listens. Fails with kIo naming the call and errno.
  static core::Result<std::unique_ptr<EgressProxy>> create(boost::asio::io_context& io,
                                                           EgressOptions options);
  /// Stops (see stop()). Destroy the proxy before its io_context.
  ~EgressProxy();
  EgressProxy(const EgressProxy&) = delete;
  EgressProxy& operator=(const EgressProxy&) = delete;

  /// Starts accepting connections on the io_context.
  void start();
  /// Stops accepting, closes every open connection and removes the socket file. Safe to
  /// call from any thread, and more than once.
  void stop();
  /// Returns the counters so far; safe from any thread.
  [[nodiscard]] EgressCounters counters() const;

  struct Shared;

 private:
  explicit EgressProxy(std::shared_ptr<Shared> shared);
  std::shared_ptr<Shared> shared_;
};

/// Returns the environment that makes a confined server's HTTP clients go out through its
/// bridge at 127.0.0.1:`port`: HTTP_PROXY and HTTPS_PROXY (and the lower-case forms, which
/// curl reads), and NO_PROXY for the namespace's own loopback, replacing whatever the
/// server's environment said. Chromium on Linux without a desktop session reads the same
/// variables (tests/sandbox/worker_chrome_test.cpp), so no Chrome flag is needed.
std::vector<std::pair<std::string, std::string>> egressProxyEnvironment(std::uint16_t port);

}  // namespace kaja::sandbox
