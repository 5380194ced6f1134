#pragma once

// Starting, connecting and closing a Client in a test that drives its own io_context.
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/mcp/client.h"
#include "core/mcp/stdio_transport.h"
#include "tests/core/mcp/test_servers.h"

namespace kaja::testing {

/// Spawns `argv` as a stdio server named `name`, given 300 ms to close.
inline core::Result<std::shared_ptr<core::mcp::StdioTransport>> spawnStdioServer(
    boost::asio::io_context& io, const std::vector<std::string>& argv, const std::string& name) {
  core::mcp::StdioOptions stdio;
  stdio.serverName = name;
  stdio.closeGrace = std::chrono::milliseconds(300);
  return core::mcp::StdioTransport::spawn(io, minimalPlan(argv), stdio);
}

/// Connects `client`, running `io` until it has an answer; kTimeout when none came.
inline core::Result<core::mcp::ServerInfo> connectNow(boost::asio::io_context& io,
                                                      core::mcp::Client& client) {
  std::optional<core::Result<core::mcp::ServerInfo>> info;
  client.connect([&](core::Result<core::mcp::ServerInfo> result) { info = std::move(result); });
  if (!runUntil(io, [&] { return info.has_value(); })) {
    return std::unexpected(core::Error{core::ErrorCode::kTimeout, "connect never ended", "", {}});
  }
  return std::move(*info);
}

/// Closes `client` (when there is one), running `io` until it has, for at most 5 s.
inline void closeNow(boost::asio::io_context& io,
                     const std::shared_ptr<core::mcp::Client>& client) {
  if (!client) return;
  bool closed = false;
  client->close([&] { closed = true; });
  runUntil(
      io, [&] { return closed; }, std::chrono::seconds(5));
}

}  // namespace kaja::testing
