#pragma once

#include <optional>
#include <string>

#include "core/auth/oauth_flow.h"
#include "core/error.h"
#include "core/manifest/ability.h"
#include "core/manifest/secrets.h"
#include "core/runner/launch_plan.h"

namespace kaja::core::auth {

/// Returns how kaja signs in to `ability`: its `oauth` table, with the client secret read
/// from the environment variable it names. kInvalidConfig when that variable is unset.
Result<ClientSettings> clientSettings(const Ability& ability);

/// Returns the sentence that tells the user to sign in to `ability` again.
std::string signInHint(const Ability& ability);

/// Puts the OAuth tokens `record` of the remote `ability` on `plan`: every request carries
/// the current access token; one that nears its expiry, or that the server refuses with
/// 401, is refreshed and the request sent again; each new token is saved to `secretsFile`
/// (under its lock, so other kaja processes keep theirs). A refresh that fails leaves the
/// request failed with a sentence that asks for `kaja login NAME`. Never opens a browser;
/// an ability with grant = "client_credentials" gets its tokens itself (`record` may then be
/// nullopt).
void attachTokens(const Ability& ability, const std::optional<OAuthRecord>& record,
                  const std::string& secretsFile, RemotePlan& plan);

}  // namespace kaja::core::auth
