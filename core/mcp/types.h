#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mcp/json_rpc.h"

namespace kaja::core::mcp {

/// The protocol version kaja offers in initialize.
inline constexpr std::string_view kLatestProtocolVersion = "2025-11-25";

/// The stateless protocol version (server/discover, per-request _meta, no session).
inline constexpr std::string_view kStatelessProtocolVersion = "2026-07-28";
/// The _meta key under which a 2026-07-28 request declares its client's capabilities.
inline constexpr const char* kMetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities";

/// Returns true when kaja speaks `version` (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25).
bool isSupportedProtocolVersion(std::string_view version);

/// What the server said about itself in its initialize result.
struct ServerInfo {
  std::string protocolVersion;
  std::string name;
  std::string version;
  std::string instructions;
  Json capabilities = Json::object();
  Json raw;  ///< the whole initialize result

  /// Returns true when the server announced the `tools` capability.
  [[nodiscard]] bool hasTools() const { return capabilities.contains("tools"); }
};

/// One tool from tools/list. The typed fields are conveniences; `raw` keeps everything.
struct Tool {
  std::string name;
  std::string title;
  std::string description;
  Json inputSchema = Json::object();
  Json raw;

  /// Returns annotations.readOnlyHint, false when absent.
  [[nodiscard]] bool readOnlyHint() const;
  /// Parses one element of a tools/list result; kProtocol with one sentence when it has no
  /// string name or a field of the wrong type (title, description, inputSchema, outputSchema,
  /// annotations).
  static Result<Tool> fromJson(const Json& value);
};

/// How ToolResult::fromJson's errors begin.
inline constexpr std::string_view kMalformedResult = "The result is malformed: ";

/// The result of tools/call, kept whole in `raw` (content of every type,
/// structuredContent, isError, _meta) with accessors for the common parts.
struct ToolResult {
  Json raw = Json::object();

  /// Checks a tools/call result and takes it over: it must be an object whose content is an
  /// array of objects with a string "type", whose known blocks (text, image, audio,
  /// resource_link, resource) have string fields where the spec puts strings, whose isError
  /// is a boolean and whose structuredContent and _meta are objects. Unknown block types are
  /// kept as they are. Returns kProtocol with one sentence naming the first bad field.
  static Result<ToolResult> fromJson(Json&& value);

  /// Returns the content array (empty array when absent).
  [[nodiscard]] const Json& content() const;
  /// Returns isError, false when absent.
  [[nodiscard]] bool isError() const;
  /// Returns structuredContent when present.
  [[nodiscard]] std::optional<Json> structuredContent() const;
  /// Returns the text of every "text" block, joined by newlines.
  [[nodiscard]] std::string text() const;
  /// Returns the content blocks whose "type" is `type` ("image", "audio", "resource_link",
  /// "resource", "text").
  [[nodiscard]] std::vector<Json> blocksOfType(std::string_view type) const;
};

/// Where a request to kaja's client comes from: a round of input_required in one of kaja's
/// own 2026-07-28 calls, or (both fields empty) a request the server sent on its own.
struct InputOrigin {
  std::string key;               ///< the request's key in the round's inputRequests
  std::int64_t callId = 0;       ///< the call's id, as callTool() or request() returned it
  std::uint64_t connection = 0;  ///< set by the host: the connection the call runs on
};

/// One notifications/progress update for a call.
struct Progress {
  double progress = 0;
  std::optional<double> total;
  std::string message;
};

/// One notifications/message (logging) from the server.
// NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json members fool the check.
struct LogMessage {
  std::string level;  ///< "debug" … "emergency"
  std::string logger;
  Json data;
};

/// One root the host exposes to servers (roots/list).
struct Root {
  std::string uri;   ///< a file:// URI
  std::string name;  ///< optional label
};

/// Returns the roots as a roots/list result's array: [{uri, name?}, …].
Json rootsToJson(const std::vector<Root>& roots);

/// Returns a file:// URI for an absolute path, percent-encoding what needs it.
std::string fileUri(std::string_view absolutePath);

}  // namespace kaja::core::mcp
