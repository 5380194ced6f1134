#pragma once
// Small pieces the gateway session's files share. Included by gateway*.cpp only.

#include <string>

#include "core/mcp/json_rpc.h"

namespace kaja::core::gateway {

namespace rpc = mcp::rpc_error;

/// Returns a request id as text, the key of the session's maps.
inline std::string idKey(const mcp::Json& id) {
  return id.dump(-1, ' ', false, mcp::Json::error_handler_t::replace);
}

/// Returns a tools/call result with one text block.
inline mcp::Json textResult(const std::string& text, bool isError) {
  return {{"content", mcp::Json::array({{{"type", "text"}, {"text", text}}})},
          {"isError", isError}};
}

/// Returns where `level` stands among MCP's eight log levels (debug 0 to emergency 7), or -1
/// when it is none of them.
inline int logLevelRank(const std::string& level) {
  static const char* const kLevels[] = {"debug", "info",     "notice", "warning",
                                        "error", "critical", "alert",  "emergency"};
  for (int rank = 0; rank < 8; ++rank) {
    if (level == kLevels[rank]) return rank;
  }
  return -1;
}

/// Returns true when a client that asked for log messages from `asked` up ("" for none)
/// wants the notifications/message whose params are `message`. A message of no known level
/// reaches only a client that asked for everything.
inline bool wantsLog(const std::string& asked, const mcp::Json& message) {
  const int least = logLevelRank(asked);
  if (least < 0) return false;
  const int rank = message.is_object() && message.contains("level") && message["level"].is_string()
                       ? logLevelRank(message["level"].get<std::string>())
                       : -1;
  return rank >= 0 ? rank >= least : least == 0;
}

/// Returns the string at `key`, or "" when `object` has none there.
inline std::string stringAt(const mcp::Json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace kaja::core::gateway
