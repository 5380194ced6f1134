#pragma once

#include <string>
#include <string_view>

#include "core/error.h"

namespace kaja::core::auth {

/// A PKCE pair (RFC 7636) with the S256 method.
struct Pkce {
  std::string verifier;   ///< 43 characters of base64url from 32 random bytes
  std::string challenge;  ///< base64url(SHA-256(verifier)), no padding
};

/// Returns `bytes` random bytes from OpenSSL's CSPRNG as base64url without padding;
/// kInternal when the generator fails.
Result<std::string> randomToken(std::size_t bytes = 32);

/// Returns a fresh verifier and its S256 challenge.
Result<Pkce> makePkce();

/// Returns the S256 challenge of `verifier`.
std::string s256Challenge(std::string_view verifier);

/// Returns `data` as base64url without padding (RFC 4648 §5).
std::string base64Url(std::string_view data);

/// Returns `data` as standard base64 with padding.
std::string base64(std::string_view data);

/// Returns true when `a` equals `b`, in time that does not depend on where they differ.
bool constantTimeEquals(std::string_view a, std::string_view b);

}  // namespace kaja::core::auth
