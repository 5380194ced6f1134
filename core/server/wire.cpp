#include "core/server/wire.h"

namespace kaja::core::server::wire {

mcp::Json errorObject(std::int64_t code, std::string message) {
  return mcp::Json{{"jsonrpc", "2.0"},
                   {"id", nullptr},
                   {"error", {{"code", code}, {"message", std::move(message)}}}};
}

std::int64_t parseErrorCode(const Error& error) {
  return error.message.starts_with("The line is not JSON") ? mcp::rpc_error::kParseError
                                                           : mcp::rpc_error::kInvalidRequest;
}

void appendJson(const mcp::Json& message, std::string& out) {
  out += message.dump(-1, ' ', false, mcp::Json::error_handler_t::replace);
}

std::string formatBytes(std::size_t bytes) {
  constexpr std::size_t kMegabyte = std::size_t{1024} * 1024;
  if (bytes % kMegabyte == 0) return std::to_string(bytes / kMegabyte) + " MB";
  if (bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KB";
  return std::to_string(bytes) + " bytes";
}

bool isResponse(const mcp::Json& message) {
  return message.is_object() && message.contains("id") && !message.contains("method") &&
         (message.contains("result") || message.contains("error"));
}

}  // namespace kaja::core::server::wire
