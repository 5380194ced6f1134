#pragma once

#include <functional>
#include <string>

#include "core/error.h"
#include "core/mcp/json_rpc.h"
#include "core/mcp/mcp_headers.h"

namespace kaja::core::mcp {

/// What a Transport reports to its owner. Every callback runs on the transport's
/// io_context thread, never inside send() or close().
struct TransportHandlers {
  /// A message arrived from the server.
  std::function<void(Message)> onMessage;
  /// Something worth a warning that did not end the connection (a banner line on stdout).
  std::function<void(const std::string&)> onWarning;
  /// The connection ended. Called exactly once, after which no onMessage follows. The
  /// Error says why: the server exited (status, stderr tail), broke the protocol, or
  /// close() was called (kConnect, "closed").
  std::function<void(const Error&)> onClosed;
  /// The request with `id` failed without an answer while the connection stays usable
  /// (an HTTP error status on the POST that carried it). When unset, such a failure ends
  /// the connection through onClosed instead.
  std::function<void(const Json& id, const Error&)> onRequestFailed;

  /// Ends the delivery: drops every handler, then calls onClosed (if set) with `error`, so
  /// onClosed runs once and nothing reaches the owner after it.
  void endWith(const Error& error) {
    auto closed = std::move(onClosed);
    *this = {};
    if (closed) closed(error);
  }
};

/// One connection to one MCP server that carries JSON-RPC messages both ways: stdio
/// now, Streamable HTTP and legacy SSE later. Implementations are driven by one
/// io_context and are not thread-safe: call them only from that io_context's thread.
/// Hold them by std::shared_ptr; pending asynchronous work keeps them alive.
class Transport {
 public:
  virtual ~Transport() = default;

  /// Starts delivering messages to `handlers`. Call once, before send().
  virtual void start(TransportHandlers handlers) = 0;

  /// Queues `message` for the server. Failures surface through onClosed.
  virtual void send(const Message& message) = 0;

  /// Ends the connection gracefully (for stdio: close stdin, wait, SIGTERM, SIGKILL);
  /// onClosed follows once it is over. Safe to call more than once.
  virtual void close() = 0;

  /// Returns true until onClosed has been called (or is about to be).
  [[nodiscard]] virtual bool isOpen() const = 0;

  /// Returns the server's name, as used in Error::context ("filesystem").
  [[nodiscard]] virtual std::string name() const = 0;

  /// Returns recent text that helps explain a silent server (stdio: the stderr tail), for
  /// the detail of timeout errors. Empty when there is none.
  [[nodiscard]] virtual std::string diagnostics() const { return {}; }

  /// Returns a short name for errors, such as "server 'filesystem'".
  [[nodiscard]] virtual std::string describe() const = 0;

  /// Sets the protocol version an HTTP transport names in MCP-Protocol-Version ("" for
  /// none); at 2026-07-28 it also sends the standard Mcp-Method/Mcp-Name headers. Other
  /// transports ignore it.
  // By value: the HTTP transports keep it. NOLINTNEXTLINE(performance-unnecessary-value-param)
  virtual void setProtocolVersion(std::string version) { (void)version; }

  /// Sets which tools/call arguments an HTTP transport mirrors into Mcp-Param-* headers
  /// (2026-07-28). Other transports ignore it.
  // NOLINTNEXTLINE(performance-unnecessary-value-param): the HTTP transport keeps them.
  virtual void setToolParamHeaders(ToolParamHeaders headers) { (void)headers; }
};

}  // namespace kaja::core::mcp
