#pragma once

#include <chrono>
#include <string>

#include "core/error.h"
#include "core/net/address_guard.h"
#include "core/net/url.h"

namespace kaja::core::auth {

/// What a remote server wants before it answers (T5).
enum class Access {
  kOpen,   ///< it answers without credentials
  kOAuth,  ///< it wants an OAuth sign-in (`kaja login`)
  kKey,    ///< it wants a static token or key (`kaja key set`)
  kOther,  ///< it answered something else (an error, a redirect), in `status`
};

/// Returns "open", "oauth", "key" or "other".
const char* toString(Access access);

/// How a remote server answered an `initialize` sent without credentials.
struct Preflight {
  Access access = Access::kOther;
  long status = 0;
  std::string challenge;  ///< its WWW-Authenticate value, if any
};

/// Returns the addresses a sign-in for the server at `server` may fetch from: private and
/// loopback ones only when the server itself is on one (a literal address, localhost, or a
/// name that resolves to one), so a server on the internet cannot point kaja's fetches
/// (its resource metadata, its authorization server) into the user's own network.
/// Link-local and metadata addresses are refused either way. Resolves the name: blocks.
net::AddressPolicy fetchPolicyFor(const net::Url& server);

/// POSTs an `initialize` to `url` without credentials (or GETs it, for a legacy SSE server)
/// and classifies the answer: 2xx is kOpen; 401 or 403 is kOAuth when the Bearer challenge
/// names resource metadata or the server publishes it at a well-known URL (RFC 9728), else
/// kKey. Reads only the status and headers; all of it takes at most `timeout`. Fails when
/// the server cannot be reached.
Result<Preflight> preflight(const net::Url& url, bool sse, const net::AddressPolicy& policy,
                            std::chrono::milliseconds timeout = std::chrono::seconds(15));

}  // namespace kaja::core::auth
