#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mcp/json_rpc.h"

namespace kaja::core::server {

using mcp::Json;

/// Where one client's outgoing messages go: a stdio front writes them as lines, an HTTP
/// front puts each on the right response stream. Call only on the front's io_context thread.
class Outbox {
 public:
  virtual ~Outbox() = default;
  /// Sends `message` (a whole JSON-RPC object) to the client. `relatedTo` is the id of the
  /// client request it belongs to: that request's response, or a progress notification or
  /// server request (elicitation) made while it runs. It is null for anything else
  /// (list_changed, log messages), which HTTP sends on the session's GET stream.
  virtual void send(Json message, const Json& relatedTo) = 0;
};

/// The Mcp-Param-* headers of one HTTP request: what follows "Mcp-Param-", lower-cased, to
/// each value it came with (trimmed), in the order they came.
using ParamHeaders = std::map<std::string, std::vector<std::string>>;

/// One client's conversation with kaja's server side. A front creates one per client (per
/// stdio connection, per HTTP session, or per request of a stateless 2026-07-28 client) and
/// calls it only on its io_context thread.
class Session {
 public:
  virtual ~Session() = default;
  /// Handles one message the client sent (already parsed and bounded by the front).
  virtual void receive(mcp::Message message) = 0;
  /// The client is gone (stdin closed, DELETE, the connection dropped, the session timed
  /// out): cancel its calls and pending requests. Nothing is sent after this.
  virtual void end() = 0;
  /// Returns one sentence saying how the Mcp-Param-* `headers` of a 2026-07-28 HTTP request
  /// disagree with `request` (the arguments a tool's schema marks with x-mcp-header), or
  /// nullopt when they agree. The HTTP front asks before receive() and answers a
  /// disagreement itself; a session that knows no tool schemas finds none.
  [[nodiscard]] virtual std::optional<std::string> paramHeaderMismatch(
      const mcp::Request& request, const ParamHeaders& headers) const {
    (void)request;
    (void)headers;
    return std::nullopt;
  }
};

/// Makes the session for a new client, which sends through `outbox`.
using SessionFactory = std::function<std::shared_ptr<Session>(std::shared_ptr<Outbox> outbox)>;

/// The protocol versions kaja's server side answers, newest first.
inline constexpr const char* kServerProtocolVersions[] = {"2026-07-28", "2025-11-25", "2025-06-18",
                                                          "2025-03-26", "2024-11-05"};

/// Returns whether kaja's server side speaks protocol `version`.
inline bool supportedVersion(std::string_view version) {
  for (const char* known : kServerProtocolVersions) {
    if (version == known) return true;
  }
  return false;
}

}  // namespace kaja::core::server
