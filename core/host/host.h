#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/host/host_types.h"
#include "core/mcp/types.h"

namespace kaja::core {

/// AsyncHost on an event loop of its own, for a program that waits for each step (the CLI).
/// Every public method blocks until its work is done and may be called from any one thread
/// at a time. A gateway drives an AsyncHost on its own loop instead.
class Host {
 public:
  explicit Host(HostOptions options = {});
  /// Closes every connection (ending the servers) and stops the loop.
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  /// Makes exactly `wanted` connected: connects the new ones in parallel (at most
  /// maxParallelStdio stdio servers starting at once), closes those no longer wanted, and
  /// sends new roots to kept `roots` servers (notifications/roots/list_changed) without
  /// restarting them. Returns one report per wanted ability, in order.
  std::vector<ConnectReport> activate(std::vector<Activation> wanted);

  /// Returns the names of the connected abilities.
  [[nodiscard]] std::vector<std::string> connected();
  /// Returns the tools `ability` listed (refreshed on list_changed).
  Result<std::vector<mcp::Tool>> tools(const std::string& ability);
  /// Calls `tool` on `ability`. `timeout` 0 means the host's callTimeout.
  Result<mcp::ToolResult> callTool(
      const std::string& ability, const std::string& tool, const mcp::Json& arguments,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  /// Returns the pid of a connected stdio server.
  std::optional<pid_t> serverPid(const std::string& ability);
  /// Closes every connection and waits until the servers are gone.
  void closeAll();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kaja::core
