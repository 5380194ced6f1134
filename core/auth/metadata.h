#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/net/url.h"

namespace kaja::core::auth {

/// The longest metadata document, registration or token answer kaja reads (256 KB); real
/// ones are a few KB.
inline constexpr std::size_t kMaxMetadataBytes = 256UL * 1024;

/// Protected resource metadata (RFC 9728), as far as kaja uses it.
struct ResourceMetadata {
  std::string resource;                           ///< the resource identifier
  std::vector<std::string> authorizationServers;  ///< issuer URLs, in the server's order
  std::vector<std::string> scopesSupported;
};

/// Authorization server metadata (RFC 8414, or OpenID Connect Discovery), as far as kaja
/// uses it.
struct ServerMetadata {
  std::string issuer;
  std::string authorizationEndpoint;
  std::string tokenEndpoint;
  std::string registrationEndpoint;  ///< "" when dynamic registration is not offered
  std::vector<std::string> scopesSupported;
  std::vector<std::string> codeChallengeMethods;
  std::vector<std::string> tokenEndpointAuthMethods;  ///< empty: the RFC's default, basic
  bool clientIdMetadataDocumentSupported = false;
  bool issParameterSupported = false;  ///< authorization_response_iss_parameter_supported
  bool fromDefaults = false;           ///< the 2025-03-26 fallback endpoints, not a document
};

/// Parses a protected resource metadata document fetched from `from` (named in errors).
/// kProtocol with one sentence when it is not a JSON object with a string `resource` and
/// an `authorization_servers` array of strings.
Result<ResourceMetadata> parseResourceMetadata(std::string_view body, const std::string& from);

/// Parses an authorization server metadata document fetched from `from`. kProtocol when it
/// is not a JSON object with string issuer, authorization_endpoint and token_endpoint.
Result<ServerMetadata> parseServerMetadata(std::string_view body, const std::string& from);

/// Returns true when `resource` (from protected resource metadata) names the server at
/// `serverUrl`: the same origin, and a path that is the server's path or a parent of it
/// on a '/' boundary. A query or fragment in `resource` never matches.
bool resourceCovers(const std::string& resource, const net::Url& serverUrl);

/// Checks that `endpoint` (what `field` of `issuer`'s metadata says) is an absolute https
/// URL, or http on a loopback host; kRefused with one sentence otherwise.
Result<net::Url> checkEndpoint(const std::string& endpoint, std::string_view field,
                               const std::string& issuer);

/// Returns true when `list` (a metadata field such as scopes_supported) holds `item`.
bool lists(const std::vector<std::string>& list, std::string_view item);

/// Returns how a client with a secret authenticates at a token endpoint that supports
/// `methods`: client_secret_basic (RFC 6749's default, also when the list is empty) unless
/// only client_secret_post of the two is listed.
std::string secretMethod(const std::vector<std::string>& methods);

/// Returns true when `url` is http(s) on 127.0.0.0/8, ::1 or localhost.
bool isLoopbackUrl(const net::Url& url);

}  // namespace kaja::core::auth
