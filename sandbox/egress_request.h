#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

namespace kaja::sandbox {

/// The most bytes a request head (request line and headers) may take at the egress proxy.
inline constexpr std::size_t kMaxRequestHead = std::size_t{16} * 1024;

/// One request to the egress proxy, parsed and checked for form (not yet for where it goes).
struct ProxyRequest {
  bool tunnel = false;     ///< CONNECT host:port; otherwise plain HTTP in absolute form
  std::string host;        ///< a lower-case name or a literal address, without brackets
  std::uint16_t port = 0;  ///< never 0
  std::string summary;     ///< "CONNECT host:443" or "GET http://host/…", for logs
  /// Plain HTTP only: the head to send the origin, in origin form ("GET /path HTTP/1.1"),
  /// with Host set from the URL, hop-by-hop and proxy headers dropped and
  /// "Connection: close" added.
  std::string originHead;
};

/// Parses `head`, a request head through its blank line (CRLF CRLF). Accepts CONNECT to
/// an authority (host:port) and any other method with an absolute http:// URL. Fails
/// with kProtocol and one sentence (for a 400 answer) on anything else: a malformed line,
/// a control byte, an https:// or relative URL, user info in the URL, a bad port, folded
/// or malformed headers, or both Content-Length and Transfer-Encoding.
core::Result<ProxyRequest> parseProxyRequest(std::string_view head);

}  // namespace kaja::sandbox
