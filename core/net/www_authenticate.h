#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kaja::core::net {

/// One challenge of a WWW-Authenticate header (RFC 9110 §11.6.1): its scheme and its
/// parameters. Names are lower case; values are unquoted, with quoted-pair escapes undone.
struct Challenge {
  std::string scheme;  ///< lower case, e.g. "bearer"
  std::map<std::string, std::string> params;

  /// Returns parameter `name` (lower case), or "".
  [[nodiscard]] std::string param(const std::string& name) const;
};

/// The longest WWW-Authenticate value kaja reads; the rest is ignored.
inline constexpr std::size_t kMaxChallengeBytes = 8192;

/// Parses a WWW-Authenticate value into its challenges, in order. Never fails: what cannot
/// be read (a stray comma, an unterminated quote, a token68) is skipped or ends the parse,
/// and a parameter given twice keeps its first value.
std::vector<Challenge> parseChallenges(std::string_view header);

/// What a protected resource's Bearer challenge asks for (RFC 6750 §3, RFC 9728 §5.1).
struct BearerChallenge {
  std::string resourceMetadata;  ///< the protected resource metadata URL, or ""
  std::string scope;             ///< space-separated scopes the request needs, or ""
  std::string error;             ///< "invalid_token", "insufficient_scope", … or ""
  std::string errorDescription;
};

/// Returns the first Bearer challenge of `header`, or nullopt when it has none.
std::optional<BearerChallenge> bearerChallenge(std::string_view header);

/// The most scopes splitScopes() keeps.
inline constexpr std::size_t kMaxScopes = 64;

/// Splits a space-separated scope string into its scopes, dropping empty ones, repeats and
/// any that is not an RFC 6749 scope-token (1 to 256 visible ASCII characters but '"' and
/// '\\': no control character, tab, quote or non-ASCII byte a server could slip in), and
/// keeping at most kMaxScopes.
std::vector<std::string> splitScopes(std::string_view scopes);

/// Returns `scopes` joined by single spaces.
std::string joinScopes(const std::vector<std::string>& scopes);

}  // namespace kaja::core::net
