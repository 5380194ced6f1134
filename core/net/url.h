#pragma once

#include <string>
#include <string_view>

#include "core/error.h"

namespace kaja::core::net {

/// An absolute http(s) URL, normalised by libcurl's URL parser.
struct Url {
  std::string text;    ///< the whole URL, normalised
  std::string scheme;  ///< "http" or "https"
  std::string host;    ///< lower case; IPv6 without brackets
  int port = 0;        ///< explicit or the scheme's default
  std::string path;    ///< starts with '/'

  /// Returns "scheme://host:port", the part two URLs must share to be same-origin.
  [[nodiscard]] std::string origin() const;
  /// Returns "host:port" for messages (IPv6 in brackets).
  [[nodiscard]] std::string hostPort() const;
};

/// Parses an absolute http or https URL. Returns kInvalidConfig with one sentence when it
/// is not one (relative, another scheme, no host, user:password@ in it).
Result<Url> parseUrl(std::string_view text);

/// Resolves `reference` (absolute, or relative like "/messages?session=1") against `base`.
/// A reference with another scheme (file:, ftp:, gopher:) fails with kRefused, since it
/// comes from a server and kaja never goes there; one that is not a URL with kProtocol.
Result<Url> resolveUrl(const Url& base, std::string_view reference);

/// Returns true when `a` and `b` have the same scheme, host and port.
bool sameOrigin(const Url& a, const Url& b);

/// Returns `url` with a '/' appended to its path, or nullopt-like empty text when the path
/// already ends in '/'. The query, if any, is kept.
std::string withTrailingSlash(const Url& url);

}  // namespace kaja::core::net
