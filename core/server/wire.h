#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/mcp/json_rpc.h"

/// Small pieces both fronts use to put JSON-RPC on the wire.
namespace kaja::core::server::wire {

/// Returns {"jsonrpc":"2.0","id":null,"error":{"code":code,"message":message}}.
mcp::Json errorObject(std::int64_t code, std::string message);

/// Returns -32700 for a text that is not JSON at all, else -32600, for the error that
/// mcp::parseMessages returned.
std::int64_t parseErrorCode(const Error& error);

/// Appends `message` as compact JSON (invalid UTF-8 replaced, never thrown) to `out`.
void appendJson(const mcp::Json& message, std::string& out);

/// Returns whether `message` is a JSON-RPC response: an id, a result or an error, no method.
bool isResponse(const mcp::Json& message);

/// Returns `bytes` as "4 MB", "64 KB" or "123 bytes".
std::string formatBytes(std::size_t bytes);

}  // namespace kaja::core::server::wire
