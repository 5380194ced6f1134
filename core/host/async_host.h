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
#include "core/host/host_types.h"
#include "core/mcp/types.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace kaja::core {

/// One request sent through the host, which cancel() accepts.
struct HostCall {
  std::string ability;
  std::int64_t id = 0;
  std::uint64_t connection = 0;  ///< which of the ability's connections (ids start over)
};

/// The host's connections on an event loop that its owner runs (a gateway's, or the blocking
/// Host's own thread). Every method must be called on that loop's thread, and every callback
/// runs there, exactly once. A failing or silent server is reported and skipped; the others
/// go on (K9, S4). Destroy it only once the loop has stopped running its handlers, or after
/// closeAll() has finished.
class AsyncHost {
 public:
  AsyncHost(boost::asio::io_context& io, HostOptions options);
  ~AsyncHost();
  AsyncHost(const AsyncHost&) = delete;
  AsyncHost& operator=(const AsyncHost&) = delete;

  /// Makes exactly `wanted` connected (see Host::activate); `done` gets one report per
  /// wanted ability, in order.
  void activate(std::vector<Activation> wanted,
                std::function<void(std::vector<ConnectReport>)> done);

  /// Returns the names of the connected abilities.
  [[nodiscard]] std::vector<std::string> connected() const;
  /// Returns the tools `ability` listed (refreshed on list_changed).
  [[nodiscard]] Result<std::vector<mcp::Tool>> tools(const std::string& ability) const;
  /// Returns what `ability`'s server said about itself, or null when it is not connected.
  [[nodiscard]] const mcp::ServerInfo* serverInfo(const std::string& ability) const;
  /// Returns how long `ability`'s server said its tool listing may be reused, if it said.
  [[nodiscard]] std::optional<std::chrono::milliseconds> toolsTtl(const std::string& ability) const;
  /// Returns the pid of a connected stdio server.
  [[nodiscard]] std::optional<pid_t> serverPid(const std::string& ability) const;

  /// Calls `tool` on `ability` with progress and a deadline. Returns what cancel() needs.
  HostCall callTool(const std::string& ability, const std::string& tool, mcp::Json arguments,
                    HostCallOptions options, std::function<void(Result<mcp::ToolResult>)> done);
  /// Sends any other request to `ability` (resources/read, prompts/get, …): its result
  /// object, or an Error. `timeout` 0 is the host's callTimeout. `capabilities`, when an
  /// object, is what a 2026-07-28 server is told the client can do (see HostCallOptions).
  HostCall request(const std::string& ability, const std::string& method, mcp::Json params,
                   std::chrono::milliseconds timeout, std::function<void(Result<mcp::Json>)> done,
                   std::function<void(const mcp::Progress&)> onProgress = {},
                   mcp::Json capabilities = nullptr);
  /// Sends a notification to `ability` (dropped when it is not connected).
  void notify(const std::string& ability, const std::string& method, mcp::Json params);
  /// Cancels a call or request: the server is told (notifications/cancelled) and its
  /// callback fails with kRefused. Returns false when it is no longer pending.
  bool cancel(const HostCall& call, const std::string& reason = "cancelled by the client");

  /// Closes every connection; `done` runs once the servers are gone.
  void closeAll(std::function<void()> done);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kaja::core
