#include "core/auth/ability_auth.h"

#include <cstdlib>

#include "core/auth/preflight.h"
#include "core/auth/token_source.h"
#include "core/net/www_authenticate.h"
#include "core/paths.h"
#include "core/util/sys.h"

namespace kaja::core::auth {

Result<ClientSettings> clientSettings(const Ability& ability) {
  ClientSettings settings;
  if (!ability.oauth) return settings;
  const OAuthSpec& spec = *ability.oauth;
  settings.clientId = spec.clientId;
  settings.clientMetadataUrl = spec.clientMetadataUrl;
  settings.extraScopes = spec.scopes;
  settings.clientCredentials = spec.grant == "client_credentials";
  settings.signingAlgorithm = spec.signingAlgorithm;
  if (!spec.privateKeyFile.empty()) {
    const std::string file = expandHome(spec.privateKeyFile, homeDir());
    auto pem = readRegularFile(file, 64UL * 1024, file);
    if (!pem) {
      return fail(ErrorCode::kInvalidConfig,
                  "ability " + ability.name + "'s oauth.privateKeyFile " + file +
                      " cannot be read: " + pem.error().message,
                  ability.manifestPath);
    }
    settings.privateKeyPem = std::move(*pem);
  }
  if (!spec.clientSecretEnv.empty()) {
    const char* secret = std::getenv(spec.clientSecretEnv.c_str());
    if (secret == nullptr || *secret == '\0') {
      return fail(ErrorCode::kInvalidConfig,
                  "ability " + ability.name + "'s oauth.clientSecretEnv names $" +
                      spec.clientSecretEnv + ", which is not set; export it and run again",
                  ability.manifestPath);
    }
    settings.clientSecret = secret;
  }
  return settings;
}

std::string signInHint(const Ability& ability) {
  return "its sign-in has expired or was refused; run `kaja login " + ability.name + "`";
}

namespace {

// Refreshes `current` as kaja's processes agree on: under the secrets file's lock, a token
// another process stored since (a refresh, a new `kaja login`) is taken as it is, since a
// second refresh could spend a rotated refresh token; else the refreshed tokens are saved
// before the lock is let go.
Result<OAuthRecord> refreshShared(OAuthFlow& flow, const Ability& ability,
                                  const std::string& secretsFile, const OAuthRecord& current) {
  auto lock = lockExclusive(secretsFile + ".lock");
  if (!lock) return std::unexpected(lock.error());
  auto secrets = Secrets::load(secretsFile);
  if (!secrets) return std::unexpected(secrets.error());
  const auto stored = secrets->oauth(ability);
  if (stored && stored->accessToken != current.accessToken) return *stored;
  auto renewed = flow.refresh(stored.value_or(current));
  if (!renewed) return renewed;
  renewed->forUrl = ability.url.value_or("");
  secrets->setOAuth(ability.name, *renewed);
  // A token that cannot be saved still works for this process.
  (void)secrets->save(secretsFile);
  return renewed;
}

}  // namespace

void attachTokens(const Ability& ability, const std::optional<OAuthRecord>& record,
                  const std::string& secretsFile, RemotePlan& plan) {
  auto url = net::parseUrl(ability.url.value_or(""));
  plan.credentialsHint = signInHint(ability);
  if (!url) return;
  auto settings = clientSettings(ability);
  const net::AddressPolicy policy = fetchPolicyFor(*url);
  auto makeFlow = [&] {
    return OAuthFlow(*url, "ability " + ability.name, settings.value_or(ClientSettings{}),
                     defaultHttp(policy), [](const std::string&) -> Result<void> {
                       return fail(ErrorCode::kRefused, "a sign-in needs `kaja login`");
                     });
  };
  TokenSource::Options options;
  options.refresher = [flow = std::make_shared<OAuthFlow>(makeFlow()), ability,
                       secretsFile](const OAuthRecord& current) {
    return refreshShared(*flow, ability, secretsFile, current);
  };
  if (ability.oauth && ability.oauth->grant == "client_credentials") {
    // Tokens kaja got itself (refreshes save their own, under the lock).
    options.onNewTokens = [name = ability.name, url = ability.url.value_or(""),
                           secretsFile](const OAuthRecord& fresh) {
      OAuthRecord saved = fresh;
      saved.forUrl = url;
      (void)Secrets::update(secretsFile, [&](Secrets& secrets) { secrets.setOAuth(name, saved); });
    };
  }
  options.onScopeWanted = [name = ability.name, secretsFile](const std::string& scopes) {
    (void)Secrets::update(secretsFile, [&](Secrets& secrets) {
      auto stored = secrets.storedOAuth(name);
      if (!stored) return;
      stored->scope = net::joinScopes(net::splitScopes(stored->scope + " " + scopes));
      secrets.setOAuth(name, *stored);
    });
  };
  TokenSource::make(makeFlow(), record, std::move(options))->attach(plan);
}

}  // namespace kaja::core::auth
