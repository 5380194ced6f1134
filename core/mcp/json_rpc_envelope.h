#pragma once

#include <string_view>

#include "core/mcp/json_rpc.h"

namespace kaja::core::mcp {

/// Returns the id of the request `text` holds when it names a "method" and a valid id, however
/// malformed the rest ("jsonrpc" missing, "params" a string), so that the error refusing it can
/// answer that id as JSON-RPC asks; null otherwise, and for anything but one JSON object. Reads
/// only the envelope ("jsonrpc", "id", "method"), so any size or depth is safe.
Json refusedRequestId(std::string_view text);

}  // namespace kaja::core::mcp
