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

/// Returns the string at `key`, or "" when `object` has none there.
inline std::string stringAt(const mcp::Json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace kaja::core::gateway
