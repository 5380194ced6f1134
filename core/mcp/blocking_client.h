#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/mcp/client.h"
#include "core/mcp/stdio_transport.h"
#include "core/runner/launch_plan.h"
#include "core/util/loop_thread.h"

namespace kaja::core::mcp {

/// A synchronous MCP client for the CLI: one connection, one private io_context on a
/// thread of its own. Each method blocks until its answer, error or timeout. Call it
/// from one thread at a time, never from inside one of its own callbacks. connect()
/// again after a failure or close() to reconnect.
class BlockingClient {
 public:
  /// Starts the private io_context thread; `options` applies to every connection.
  explicit BlockingClient(ClientOptions options = {});
  /// Closes the connection (ending the server) and stops the thread.
  ~BlockingClient();
  BlockingClient(const BlockingClient&) = delete;
  BlockingClient& operator=(const BlockingClient&) = delete;

  /// Starts `plan` and runs the initialize handshake (closing any earlier connection).
  /// `stdio.serverName` names the server in errors.
  Result<ServerInfo> connect(const LaunchPlan& plan, StdioOptions stdio = {});

  /// Lists every tool (all pages).
  Result<std::vector<Tool>> listTools();

  /// Calls `name` with `arguments` (an object). `onProgress` runs on the client's thread.
  Result<ToolResult> callTool(const std::string& name, const Json& arguments,
                              std::chrono::milliseconds timeout = std::chrono::seconds(15),
                              std::function<void(const Progress&)> onProgress = {});

  /// Sends ping.
  Result<void> ping();

  /// Tells the server its roots changed, so it asks the roots provider again.
  void notifyRootsChanged();

  /// Closes the connection gracefully and waits until the server is gone.
  void close();

  /// Returns true while connected and initialized.
  [[nodiscard]] bool isConnected();

  /// Sets a roots provider used by the next connect() (called on the client's thread).
  void setRootsProvider(std::function<std::vector<Root>()> provider) {
    rootsProvider_ = std::move(provider);
  }
  /// Sets a receiver for warnings and log messages used by the next connect() (called on
  /// the client's thread).
  void setWarningHandler(std::function<void(const std::string&)> handler) {
    warningHandler_ = std::move(handler);
  }

 private:
  template <class T>
  T runOnLoop(std::function<void(std::function<void(T)>)> work);

  ClientOptions options_;
  LoopThread loop_;
  std::shared_ptr<Client> client_;  // touched only on the loop thread
  std::function<std::vector<Root>()> rootsProvider_;
  std::function<void(const std::string&)> warningHandler_;
};

}  // namespace kaja::core::mcp
