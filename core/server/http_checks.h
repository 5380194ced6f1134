#pragma once

// The header checks of the HTTP front, as plain functions over header values.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/mcp/json_rpc.h"
#include "core/server/session.h"

namespace kaja::core::server::http_checks {

/// Returns whether an Accept header value admits `mediaType` ("text/event-stream"):
/// wildcards count, a range with q=0 does not. An absent (empty) header admits anything.
bool accepts(std::string_view accept, std::string_view mediaType);

/// Returns whether `origin` (an Origin header value) may call kaja: a loopback host
/// (localhost, 127.0.0.0/8, [::1]), or a host or whole origin listed in `allowed`.
bool originAllowed(std::string_view origin, const std::vector<std::string>& allowed);

/// Returns whether `host` (a Host header value, with or without a port) names a loopback
/// host (localhost, 127.0.0.0/8, [::1]) or the host of an entry of `allowed` (a host or an
/// origin). A front bound to loopback checks it, so that a page whose name was re-pointed
/// at 127.0.0.1 (DNS rebinding) is refused even on requests without an Origin.
bool hostAllowed(std::string_view host, const std::vector<std::string>& allowed);

/// Returns whether `address` (an IP address to bind) is a loopback one.
bool isLoopbackAddress(const std::string& address);

/// Returns whether `authorization` is "Bearer <token>", compared in constant time.
bool bearerMatches(std::string_view authorization, const std::string& token);

/// Returns a fresh session id: 32 random bytes (OpenSSL RAND_bytes) as 64 hex digits.
Result<std::string> newSessionId();

/// Returns the 2026-07-28 protocol version a message claims in params._meta, or "".
std::string metaProtocolVersion(const mcp::Json& message);

/// The 2026-07-28 standard headers of one POST.
struct StandardHeaders {
  std::string protocolVersion;        ///< MCP-Protocol-Version, "" when absent
  std::optional<std::string> method;  ///< Mcp-Method
  std::optional<std::string> name;    ///< Mcp-Name
};

/// Returns one sentence saying how the standard headers disagree with `message` (a request
/// of protocol 2026-07-28), or nullopt when they agree: MCP-Protocol-Version must equal the
/// _meta version, Mcp-Method the method, Mcp-Name (base64 sentinel decoded) params.name or
/// params.uri for tools/call, prompts/get and resources/read.
std::optional<std::string> standardHeaderMismatch(const mcp::Json& message,
                                                  const StandardHeaders& headers);

/// Returns one sentence saying what the params._meta of `message` (a 2026-07-28 request)
/// lacks: it must be an object with io.modelcontextprotocol/protocolVersion (a string) and
/// io.modelcontextprotocol/clientCapabilities (an object). Returns nullopt when both are there.
std::optional<std::string> requestMetaProblem(const mcp::Json& message);

/// Returns the text of a header value in the base64 sentinel form ("=?base64?SGk=?=") decoded,
/// any other value as it is, or nullopt when the sentinel's payload is not canonical base64
/// (characters outside the alphabet, missing or misplaced padding).
std::optional<std::string> decodeHeaderValue(std::string_view value);

/// Returns one sentence saying how the Mcp-Param-* `headers` disagree with `arguments` of a
/// call to a tool whose input schema is `inputSchema`, or nullopt when they agree. Each
/// property of the schema's top-level "properties" that names a header in "x-mcp-header"
/// must travel in that header exactly when the argument is given (not null): once, equal to
/// the argument after the base64 sentinel is decoded (strings as they are, booleans as true
/// or false, numbers by value). Headers the schema does not name are ignored.
std::optional<std::string> paramHeaderMismatch(const mcp::Json& inputSchema,
                                               const mcp::Json& arguments,
                                               const ParamHeaders& headers);

/// Returns the HTTP status of a 2026-07-28 reply whose first message is `message`: 404 for
/// a response with error -32601 (method not found), 400 for -32020 (header mismatch), -32021
/// (missing client capability) and -32022 (unsupported version), else 200.
unsigned statelessStatus(const mcp::Json& message);

}  // namespace kaja::core::server::http_checks
