// The grants no person takes part in: client credentials (SEP-1046), a workload's JWT
// (RFC 7523 §2.1), and an enterprise IdP's identity assertion grant (SEP-990: an ID token
// exchanged at the IdP, RFC 8693, for an ID-JAG that the authorization server takes as a
// JWT bearer grant).
#include <nlohmann/json.hpp>

#include "core/auth/oauth_flow.h"
#include "core/auth/url_form.h"
#include "core/net/www_authenticate.h"
#include "core/util/quote.h"

namespace kaja::core::auth {
namespace {

constexpr const char* kIdJag = "urn:ietf:params:oauth:token-type:id-jag";

}  // namespace

using net::joinScopes;

Result<std::string> OAuthFlow::exchangeAtIdp(const Discovery& found) {
  auto endpoint =
      checkEndpoint(settings_.idpTokenEndpoint, "token_endpoint", "the identity provider");
  if (!endpoint) return std::unexpected(endpoint.error());
  net::HttpRequest request =
      this->request("POST", endpoint->text, "application/x-www-form-urlencoded");
  FormFields form{{"grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"},
                  {"subject_token", settings_.idpIdToken},
                  {"subject_token_type", "urn:ietf:params:oauth:token-type:id_token"},
                  {"requested_token_type", kIdJag},
                  {"audience", found.server.issuer},
                  {"resource", found.resource}};
  if (!settings_.idpClientId.empty()) form.emplace_back("client_id", settings_.idpClientId);
  request.body = encodeForm(form);
  auto reply = http_(std::move(request));
  if (!reply) {
    return fail(reply.error().code, "cannot reach the identity provider's token endpoint " +
                                        endpoint->text + ": " + reply.error().message);
  }
  const nlohmann::json answer = nlohmann::json::parse(reply->body, nullptr, false);
  if (reply->status != 200 || !answer.is_object()) {
    return fail(ErrorCode::kRefused,
                "the identity provider refused to exchange the ID token (HTTP " +
                    std::to_string(reply->status) + ")");
  }
  const std::string grant = answer.value("access_token", nlohmann::json("")).is_string()
                                ? answer.value("access_token", std::string())
                                : "";
  if (grant.empty() || answer.value("issued_token_type", nlohmann::json("")) != kIdJag) {
    return fail(ErrorCode::kProtocol,
                "the identity provider answered without an identity assertion grant (ID-JAG)");
  }
  return grant;
}

Result<OAuthRecord> OAuthFlow::clientCredentials(const Discovery& found,
                                                 const std::vector<std::string>& scopes) {
  if (settings_.clientId.empty()) {
    return fail(ErrorCode::kInvalidConfig,
                "the client credentials grant needs the client's id (oauth.clientId)");
  }
  Client client{settings_.clientId, settings_.clientSecret, "client_secret_basic", "",
                found.server.issuer};
  FormFields form{{"grant_type", "client_credentials"}};
  std::string assertion = settings_.jwtBearerAssertion;
  if (!settings_.idpIdToken.empty()) {
    auto grant = exchangeAtIdp(found);
    if (!grant) return std::unexpected(grant.error());
    assertion = std::move(*grant);
  }
  if (!assertion.empty()) {
    // The JWT is the grant itself; a client that has a secret authenticates as well.
    form = {{"grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
            {"assertion", assertion}};
    client.method = client.secret.empty() ? "none" : client.method;
  } else if (!settings_.privateKeyPem.empty()) {
    client.method = "private_key_jwt";
  } else if (client.secret.empty()) {
    return fail(ErrorCode::kInvalidConfig,
                "the client credentials grant needs the client's secret or private key");
  } else {
    client.method = secretMethod(found.server.tokenEndpointAuthMethods);
  }
  if (!scopes.empty()) form.emplace_back("scope", joinScopes(scopes));
  form.emplace_back("resource", found.resource);
  ++attempts_;
  auto record =
      requestToken(found.server.tokenEndpoint, client, std::move(form), "the client's credentials");
  if (!record) return record;
  if (record->scope.empty()) record->scope = joinScopes(scopes);
  record->issuer = found.server.issuer;
  record->resource = found.resource;
  if (auto ok = checkStorable(*record); !ok) return std::unexpected(ok.error());
  return record;
}

}  // namespace kaja::core::auth
