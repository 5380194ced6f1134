#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/mcp/json_rpc.h"

namespace kaja::core::mcp {

/// One tool argument that 2026-07-28 mirrors into an HTTP header: the top-level property
/// `property` of the tool's inputSchema, sent as `Mcp-Param-<header>`.
struct ParamHeader {
  std::string property;
  std::string header;  ///< the x-mcp-header value, as the tool spelled it
};

/// The mirrored arguments of every tool, by tool name.
using ToolParamHeaders = std::map<std::string, std::vector<ParamHeader>>;

/// Returns the x-mcp-header annotations of `inputSchema`, or kProtocol with one sentence
/// when one is invalid (empty, not a header token, on a property whose type is not
/// string, integer or boolean, or repeated ignoring case). A client must not use such a
/// tool.
Result<std::vector<ParamHeader>> paramHeaders(const Json& inputSchema);

/// Returns `value` as a header value: integers in decimal, booleans as true/false, strings
/// as they are unless they hold a byte outside 0x20–0x7E or start or end with whitespace,
/// in which case as `=?base64?<UTF-8 bytes in base64>?=`. Returns "" for other types.
std::string encodeHeaderValue(const Json& value);

/// Returns the 2026-07-28 standard headers for POSTing `message`: Mcp-Method for requests
/// and notifications, Mcp-Name for tools/call, prompts/get (name) and resources/read
/// (uri), and Mcp-Param-* for the tools/call arguments named in `tools`. Absent and null
/// arguments get no header.
std::vector<std::pair<std::string, std::string>> standardHeaders(const Message& message,
                                                                 const ToolParamHeaders& tools);

}  // namespace kaja::core::mcp
