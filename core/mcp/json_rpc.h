#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/error.h"

namespace kaja::core::mcp {

using Json = nlohmann::json;

/// Standard JSON-RPC 2.0 error codes.
namespace rpc_error {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
/// 2026-07-28: the request needs a client capability its _meta did not declare.
inline constexpr int kMissingCapability = -32021;
}  // namespace rpc_error

/// A call that expects a Response with the same id. `id` is a number or a string;
/// `params` is null when absent.
struct Request {
  Json id;
  std::string method;
  Json params;
};

/// A one-way message: no id, no reply.
struct Notification {
  std::string method;
  Json params;
};

/// Bounds on one message read from a peer, so that hostile input cannot crash kaja (deep
/// nesting makes nlohmann::json's copies and dump() recurse) or bloat it.
inline constexpr std::size_t kMaxJsonDepth = 256;  ///< nested arrays and objects
/// Arrays, objects and members in one message: about 100 bytes of memory each once read.
inline constexpr std::size_t kMaxJsonValues = 1'000'000;

/// The `error` member of a failed Response.
// NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json members fool the check.
struct RpcError {
  std::int64_t code = rpc_error::kInternalError;
  std::string message;
  Json data;  ///< null when absent
};

/// The reply to a Request: exactly one of `result` and `error` is set, unless kaja could
/// not read the reply (`unreadable`).
// NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json members fool the check.
struct Response {
  Json id;
  std::optional<Json> result;
  std::optional<RpcError> error;
  /// Set instead of `result` and `error` when the peer sent something that kaja cannot read
  /// as a reply (nested too deep, too large, not JSON-RPC). `id` is the request it answers
  /// when that could be recovered, else null: the request fails with this error at once.
  std::optional<Error> unreadable;
  /// The size of the text this reply was read from (a whole batch for one in a batch), so
  /// that a receiver can bound what it accepts per method; 0 when built in memory.
  std::size_t bytes = 0;
};

/// Any JSON-RPC message.
using Message = std::variant<Request, Notification, Response>;

/// Parses one line (a message or a batch array) into messages. Ill-formed UTF-8 and lone
/// surrogate escapes are read as U+FFFD and raw control characters in strings as escapes, so
/// that malformed bytes never lose a reply. A reply that is JSON but cannot be used (nested
/// deeper than kMaxJsonDepth, more than kMaxJsonValues values, not JSON-RPC) becomes a
/// Response with `unreadable` set, for its id when it has one, so its request fails at once;
/// a batch keeps its good elements. Returns kProtocol with one sentence when the line is not
/// JSON at all, or is a single message that is neither usable nor a reply.
Result<std::vector<Message>> parseMessages(std::string_view line);

/// Parses one already-decoded JSON value as a message (kProtocol when it is not one). The
/// message takes `value`'s members over, leaving `value` unspecified.
Result<Message> parseMessage(Json&& value);

/// Returns `message` as a JSON object with "jsonrpc":"2.0".
Json toJson(const Message& message);

/// Returns `message` as compact single-line JSON text (no trailing newline). Invalid
/// UTF-8 in strings is replaced, never thrown.
std::string serialize(const Message& message);

/// Appends serialize(message) to `out`, for a caller that adds its own framing.
void serializeTo(const Message& message, std::string& out);

/// Returns an error Response to `id`.
Response makeErrorResponse(Json id, std::int64_t code, std::string message);

/// Returns a success Response to `id`.
Response makeResultResponse(Json id, Json result);

/// Hands out request ids 1, 2, 3, …; one allocator per connection.
class IdAllocator {
 public:
  /// Returns the next unused id.
  std::int64_t next() { return next_++; }

 private:
  std::int64_t next_ = 1;
};

/// Returns `text` cut to at most `limit` bytes with "…" appended when cut and control
/// characters replaced by spaces, for putting peer-supplied text into one-line messages.
std::string clip(std::string_view text, std::size_t limit = 200);

}  // namespace kaja::core::mcp
