#pragma once

#include <string>

#include "core/error.h"

namespace kaja::core::auth {

/// Returns a JWT client assertion (RFC 7523 §2.2, for `private_key_jwt`): iss and sub
/// `clientId`, aud `audience` (the authorization server's issuer), a random jti, issued now
/// and valid for 300 s, signed with `privateKeyPem` (PKCS#8 or traditional PEM) under
/// `algorithm`: ES256 (P-256) or RS256. kInvalidConfig when the key does not read or does
/// not fit the algorithm; the key never appears in a message.
Result<std::string> makeClientAssertion(const std::string& privateKeyPem,
                                        const std::string& algorithm, const std::string& clientId,
                                        const std::string& audience);

}  // namespace kaja::core::auth
