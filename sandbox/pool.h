#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/gateway/gateway.h"
#include "core/host/host_types.h"
#include "core/server/session.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace kaja::sandbox {

/// Which server: one user's copy of one ability, and in a shared worker, of one turn.
struct ServerKey {
  std::string user;
  std::string ability;
  std::string turn;  ///< "" unless the worker is shared

  /// Returns "user/ability" or "user/ability@turn".
  [[nodiscard]] std::string text() const;
  friend bool operator==(const ServerKey&, const ServerKey&) = default;
  friend auto operator<=>(const ServerKey&, const ServerKey&) = default;
};

/// What one live server is doing, for `kaja sandbox status`.
struct ServerStatus {
  ServerKey key;
  std::optional<pid_t> pid;  ///< the top of its process tree, once it runs
  bool ready = false;        ///< connected and listing its tools
  std::size_t sessions = 0;  ///< clients attached
  std::size_t inFlight = 0;  ///< requests being answered
  double idleSeconds = 0;    ///< since its last request ended (0 while one runs)
  std::uint64_t calls = 0;   ///< tools/call requests answered
};

/// How the pool runs its servers.
struct PoolOptions {
  /// A server with no request in flight for this long is stopped (K21).
  std::chrono::milliseconds idle{std::chrono::minutes(10)};
  /// A shared worker: a server stops as soon as its last session ends (the turn is over).
  bool shared = false;
  /// How often idle servers are looked for; reaping happens within this of the deadline.
  std::chrono::milliseconds sweep{std::chrono::milliseconds(200)};
  /// Makes what the gateway runs for `key`: the ability, resolved and confined. Called on
  /// each start of the server.
  std::function<core::Result<core::Activation>(const ServerKey& key)> activation;
  /// Called once a server has stopped (its processes are gone), to remove what it left.
  std::function<void(const ServerKey& key)> stopped;
  /// The settings of each server's gateway (names, pipeline, host timeouts, log).
  core::gateway::GatewayOptions gateway;
};

/// The worker's servers: one per ServerKey, started on its first client message, kept warm
/// between requests, and stopped once idle (or, shared, once its turn ends). A server whose
/// idle deadline passes while a request runs is kept until the request ends, and the clock
/// starts again then. A client whose server was stopped keeps its session: its next message
/// starts the server again and kaja initializes it as the client did. Runs on `io`; call
/// every method on its thread.
class ServerPool {
 public:
  ServerPool(boost::asio::io_context& io, PoolOptions options);
  // NOLINTNEXTLINE(bugprone-exception-escape): the timer's cancel reports errors as values.
  ~ServerPool();
  ServerPool(const ServerPool&) = delete;
  ServerPool& operator=(const ServerPool&) = delete;

  /// Returns the factory that makes the sessions of `key`'s clients.
  core::server::SessionFactory sessions(const ServerKey& key);
  /// Stops every server of `user`'s turn `turn`; returns how many were running.
  std::size_t endTurn(const std::string& user, const std::string& turn);
  /// Returns every live server, in key order.
  [[nodiscard]] std::vector<ServerStatus> status() const;
  /// Returns how many servers are live (starting or ready).
  [[nodiscard]] std::size_t size() const;
  /// Returns how many of them are `user`'s.
  [[nodiscard]] std::size_t countFor(const std::string& user) const;
  /// Returns whether `key`'s server is live.
  [[nodiscard]] bool contains(const ServerKey& key) const;
  /// Stops every server; `done` runs once all are gone.
  void stop(std::function<void()> done);

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace kaja::sandbox
