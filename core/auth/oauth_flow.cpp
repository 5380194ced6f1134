#include "core/auth/oauth_flow.h"

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>

#include "core/auth/client_assertion.h"
#include "core/auth/loopback_redirect.h"
#include "core/auth/pkce.h"
#include "core/auth/url_form.h"
#include "core/net/www_authenticate.h"
#include "core/util/quote.h"
#include "core/util/unicode.h"

namespace kaja::core::auth {

using net::bearerChallenge;
using net::BearerChallenge;
using net::joinScopes;
using net::splitScopes;
namespace {

using Json = nlohmann::json;

// A server's own words (an error code, its description), fit for a one-line message.
std::string quoteServer(std::string_view text) {
  if (text.size() > 200) text = text.substr(0, 200);
  return escapeForMessage(text);
}

// Returns "https://host:port/.well-known/<name><path>" for `url` (its path without a trailing
// '/'), or the same without the path when `withPath` is false.
std::string wellKnown(const net::Url& url, std::string_view name, bool withPath) {
  std::string path = url.path;
  while (path.ends_with('/')) path.pop_back();
  return url.origin() + "/.well-known/" + std::string(name) + (withPath ? path : "");
}

// "https://host" or "https://host:8443": an origin as people write it, the default port left
// out.
std::string originOf(const net::Url& url) {
  const bool v6 = url.host.find(':') != std::string::npos;
  std::string text = url.scheme + "://" + (v6 ? "[" + url.host + "]" : url.host);
  if (url.port != (url.scheme == "https" ? 443 : 80)) text += ":" + std::to_string(url.port);
  return text;
}

bool hasPath(const net::Url& url) { return url.path != "/" && !url.path.empty(); }

std::string withoutTrailingSlash(std::string text) {
  if (text.ends_with('/')) text.pop_back();
  return text;
}

// RFC 8414 §3.3 wants the issuers identical. A bare origin with and without its '/' is one
// URL written two ways (URL parsers add the slash), so that alone is let through.
bool sameIssuer(const std::string& a, const std::string& b) {
  if (a == b) return true;
  const std::string& shorter = a.size() < b.size() ? a : b;
  const std::string& longer = a.size() < b.size() ? b : a;
  if (longer != shorter + "/") return false;
  auto url = net::parseUrl(shorter);
  return url && url->text == longer;
}

// The OAuth error of an answer's body ("invalid_grant (The code expired)"), or its status.
std::string oauthError(const net::HttpReply& reply) {
  Json json = Json::parse(reply.body, nullptr, false);
  if (json.is_object() && json.contains("error") && json["error"].is_string()) {
    std::string out = quoteServer(json["error"].get<std::string>());
    if (json.contains("error_description") && json["error_description"].is_string()) {
      out += " (" + quoteServer(json["error_description"].get<std::string>()) + ")";
    }
    return out;
  }
  return "HTTP " + std::to_string(reply.status);
}

std::int64_t nowSeconds() { return static_cast<std::int64_t>(std::time(nullptr)); }

}  // namespace

Result<void> checkStorable(const OAuthRecord& record) {
  const std::pair<const char*, const std::string*> fields[] = {
      {"access token", &record.accessToken},
      {"refresh token", &record.refreshToken},
      {"scope", &record.scope},
      {"issuer", &record.issuer},
      {"token endpoint", &record.tokenEndpoint},
      {"resource", &record.resource},
      {"client id", &record.clientId},
      {"client secret", &record.clientSecret},
      {"token type", &record.tokenType}};
  for (const auto& [name, text] : fields) {
    const bool control = std::any_of(text->begin(), text->end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    });
    if (text->size() > 16384 || control || !unicode::isValidUtf8(*text)) {
      return fail(ErrorCode::kProtocol,
                  std::string("the authorization server sent a ") + name +
                      " kaja cannot store (control characters, bytes "
                      "that are not UTF-8, or over 16 KB); nothing was saved");
    }
  }
  return {};
}

HttpSend defaultHttp(net::AddressPolicy policy) {
  return
      [policy](net::HttpRequest request) { return net::fetchBlocking(std::move(request), policy); };
}

OAuthFlow::OAuthFlow(net::Url serverUrl, std::string server, ClientSettings settings, HttpSend http,
                     BrowserOpener opener)
    : serverUrl_(std::move(serverUrl)),
      server_(std::move(server)),
      settings_(std::move(settings)),
      http_(std::move(http)),
      opener_(std::move(opener)) {}

net::HttpRequest OAuthFlow::request(const char* method, const std::string& url,
                                    const char* contentType) const {
  net::HttpRequest out;
  out.method = method;
  out.url = url;
  out.timeout = settings_.fetchTimeout;
  out.totalTimeout = settings_.fetchTimeout;
  out.maxBodyBytes = kMaxMetadataBytes;
  out.headers.emplace_back("Accept", "application/json");
  if (contentType != nullptr) out.headers.emplace_back("Content-Type", contentType);
  return out;
}

Result<net::HttpReply> OAuthFlow::get(const std::string& url) {
  net::HttpRequest request = this->request("GET", url);
  auto reply = http_(std::move(request));
  if (!reply) {
    Error error = reply.error();
    if (error.code != ErrorCode::kRefused)
      error.message = "cannot fetch " + url + ": " + error.message;
    return std::unexpected(std::move(error));
  }
  return reply;
}

Result<std::optional<ResourceMetadata>> OAuthFlow::fetchResourceMetadata(
    const std::string& fromHeader) {
  // RFC 9728 §4 and the MCP order: the URL the challenge named, then the well-known URL
  // with the server's path, then the one at the root.
  std::vector<std::string> candidates;
  if (!fromHeader.empty()) {
    auto url = net::resolveUrl(serverUrl_, fromHeader);
    if (!url) {
      return fail(ErrorCode::kProtocol, server_ + " named resource metadata at " +
                                            quoteForMessage(fromHeader) + ", which is not a URL");
    }
    candidates.push_back(url->text);
  }
  if (hasPath(serverUrl_))
    candidates.push_back(wellKnown(serverUrl_, "oauth-protected-resource", true));
  candidates.push_back(wellKnown(serverUrl_, "oauth-protected-resource", false));
  for (const auto& candidate : candidates) {
    auto reply = get(candidate);
    if (!reply) return std::unexpected(reply.error());
    if (reply->status / 100 == 4) continue;  // not there: the next place
    if (reply->status != 200) {
      return fail(ErrorCode::kProtocol, candidate + " answered HTTP " +
                                            std::to_string(reply->status) +
                                            " instead of the server's resource metadata");
    }
    auto parsed = parseResourceMetadata(reply->body, candidate);
    if (!parsed) return std::unexpected(parsed.error());
    return std::optional<ResourceMetadata>(std::move(*parsed));
  }
  if (!fromHeader.empty()) {
    return fail(ErrorCode::kProtocol, server_ + " named resource metadata at " + candidates[0] +
                                          ", but nothing is there; the server is misconfigured");
  }
  return std::optional<ResourceMetadata>();
}

Result<ServerMetadata> OAuthFlow::fetchServerMetadata(const std::string& issuer, bool legacy) {
  auto issuerUrl = net::parseUrl(issuer);
  if (!issuerUrl) {
    return fail(ErrorCode::kProtocol, server_ + " names an authorization server " +
                                          quoteForMessage(issuer) + " that is not an http(s) URL");
  }
  // The MCP order (RFC 8414 §3.1, then OpenID Connect Discovery in both of its forms).
  std::vector<std::string> candidates;
  if (hasPath(*issuerUrl)) {
    candidates.push_back(wellKnown(*issuerUrl, "oauth-authorization-server", true));
    candidates.push_back(wellKnown(*issuerUrl, "openid-configuration", true));
    candidates.push_back(withoutTrailingSlash(issuerUrl->text) +
                         "/.well-known/openid-configuration");
  } else {
    candidates.push_back(wellKnown(*issuerUrl, "oauth-authorization-server", false));
    candidates.push_back(wellKnown(*issuerUrl, "openid-configuration", false));
  }
  for (const auto& candidate : candidates) {
    auto reply = get(candidate);
    if (!reply) return std::unexpected(reply.error());
    if (reply->status / 100 == 4) continue;
    if (reply->status != 200) {
      return fail(ErrorCode::kProtocol, candidate + " answered HTTP " +
                                            std::to_string(reply->status) +
                                            " instead of authorization server metadata");
    }
    auto parsed = parseServerMetadata(reply->body, candidate);
    if (!parsed) return std::unexpected(parsed.error());
    // RFC 8414 §3.3: metadata for another issuer must not be used, or a server could send
    // kaja's codes to endpoints of its choosing.
    if (!sameIssuer(parsed->issuer, issuer)) {
      return fail(ErrorCode::kProtocol,
                  candidate + " describes the issuer " + quoteForMessage(parsed->issuer) +
                      " rather than " + quoteForMessage(issuer) +
                      "; kaja does not sign in with metadata for another server");
    }
    return parsed;
  }
  if (!legacy) {
    return fail(ErrorCode::kProtocol, "the authorization server " + issuer +
                                          " publishes no metadata (tried " + candidates[0] +
                                          " and the OpenID Connect address)");
  }
  // 2025-03-26: without metadata, the endpoints are at fixed paths of the server's origin.
  ServerMetadata defaults;
  defaults.issuer = originOf(*issuerUrl);
  defaults.authorizationEndpoint = defaults.issuer + "/authorize";
  defaults.tokenEndpoint = defaults.issuer + "/token";
  defaults.registrationEndpoint = defaults.issuer + "/register";
  defaults.codeChallengeMethods = {"S256"};
  defaults.fromDefaults = true;
  return defaults;
}

Result<OAuthFlow::Discovery> OAuthFlow::discover(const std::string& resourceMetadataUrl) {
  Discovery out;
  auto resource = fetchResourceMetadata(resourceMetadataUrl);
  if (!resource) return std::unexpected(resource.error());
  out.resourceMetadata = std::move(*resource);
  std::string issuer;
  if (out.resourceMetadata) {
    if (!resourceCovers(out.resourceMetadata->resource, serverUrl_)) {
      return fail(ErrorCode::kRefused, server_ + " says it is the resource " +
                                           quoteForMessage(out.resourceMetadata->resource) +
                                           ", which is not " + displayUrl() +
                                           "; kaja does not sign in for another server's resource");
    }
    if (out.resourceMetadata->authorizationServers.empty()) {
      return fail(ErrorCode::kProtocol,
                  server_ + "'s resource metadata names no authorization server");
    }
    out.resource = out.resourceMetadata->resource;
    issuer = out.resourceMetadata->authorizationServers.front();
  } else {
    // A 2025-03-26 server: it is its own authorization server, at its origin.
    out.resource = serverUrl_.text;
    issuer = originOf(serverUrl_);
  }
  // Its metadata says where codes and secrets go, so it too must come over https.
  if (auto issuerUrl = net::parseUrl(issuer);
      issuerUrl && issuerUrl->scheme != "https" && !isLoopbackUrl(*issuerUrl)) {
    return fail(ErrorCode::kRefused,
                "the authorization server " + quoteForMessage(issuer) +
                    " is plain http; kaja signs in only over https (plain http only on this "
                    "machine's loopback)");
  }
  auto server = fetchServerMetadata(issuer, !out.resourceMetadata);
  if (!server) return std::unexpected(server.error());
  out.server = std::move(*server);
  if (!lists(out.server.codeChallengeMethods, "S256")) {
    return fail(ErrorCode::kRefused, "the authorization server " + out.server.issuer +
                                         " does not offer PKCE with S256, which kaja requires "
                                         "to keep the code from being used by anyone else");
  }
  for (const auto& [endpoint, field] :
       {std::pair{&out.server.authorizationEndpoint, "authorization_endpoint"},
        std::pair{&out.server.tokenEndpoint, "token_endpoint"}}) {
    if (auto ok = checkEndpoint(*endpoint, field, out.server.issuer); !ok) {
      return std::unexpected(ok.error());
    }
  }
  return out;
}

std::string OAuthFlow::displayUrl() const {
  // The URL as written, without a query that may hold a key.
  return serverUrl_.text.substr(0, serverUrl_.text.find_first_of("?#"));
}

Result<OAuthFlow::Client> OAuthFlow::registerClient(const ServerMetadata& server,
                                                    const std::string& redirectUri) {
  if (server.registrationEndpoint.empty()) {
    return fail(ErrorCode::kInvalidConfig,
                "the authorization server " + server.issuer +
                    " registers no clients itself; register kaja there, then put its id in "
                    "the ability's mcp.toml as oauth = { clientId = \"…\" }");
  }
  auto endpoint =
      checkEndpoint(server.registrationEndpoint, "registration_endpoint", server.issuer);
  if (!endpoint) return std::unexpected(endpoint.error());
  const auto& methods = server.tokenEndpointAuthMethods;
  // A public client where the server allows one (PKCE protects the code), else a secret.
  const std::string method =
      methods.empty() || lists(methods, "none") ? "none" : secretMethod(methods);
  Json body{{"client_name", settings_.clientName},
            {"redirect_uris", Json::array({redirectUri})},
            {"grant_types", Json::array({"authorization_code", "refresh_token"})},
            {"response_types", Json::array({"code"})},
            {"token_endpoint_auth_method", method},
            {"application_type", "native"}};
  net::HttpRequest request = this->request("POST", endpoint->text, "application/json");
  request.body = body.dump();
  auto reply = http_(std::move(request));
  if (!reply) {
    return fail(reply.error().code,
                "cannot register kaja with " + server.issuer + ": " + reply.error().message);
  }
  if (reply->status != 200 && reply->status != 201) {
    return fail(ErrorCode::kRefused, "the authorization server " + server.issuer +
                                         " refused to register kaja: " + oauthError(*reply));
  }
  Json answer = Json::parse(reply->body, nullptr, false);
  if (!answer.is_object() || !answer.contains("client_id") || !answer["client_id"].is_string() ||
      answer["client_id"].get<std::string>().empty()) {
    return fail(ErrorCode::kProtocol, "the authorization server " + server.issuer +
                                          " registered kaja but sent no client_id");
  }
  Client client;
  client.id = answer["client_id"].get<std::string>();
  client.secret = answer.value("client_secret", Json("")).is_string()
                      ? answer.value("client_secret", std::string())
                      : "";
  client.redirectUri = redirectUri;
  const std::string granted = answer.value("token_endpoint_auth_method", Json("")).is_string()
                                  ? answer.value("token_endpoint_auth_method", std::string())
                                  : "";
  const bool known =
      granted == "none" || granted == "client_secret_basic" || granted == "client_secret_post";
  client.method = known ? granted : method;
  if (client.secret.empty()) client.method = "none";
  return client;
}

Result<OAuthFlow::Client> OAuthFlow::clientFor(const ServerMetadata& server,
                                               const std::string& redirectUri) {
  // The order the MCP specification prefers: a client registered beforehand, a Client ID
  // Metadata Document, then dynamic registration.
  if (!settings_.clientId.empty()) {
    Client client{settings_.clientId, settings_.clientSecret, "none", redirectUri};
    if (!client.secret.empty()) client.method = secretMethod(server.tokenEndpointAuthMethods);
    return client;
  }
  if (auto known = registered_.find(server.issuer);
      known != registered_.end() && known->second.redirectUri == redirectUri) {
    return known->second;
  }
  if (server.clientIdMetadataDocumentSupported && !settings_.clientMetadataUrl.empty()) {
    return Client{settings_.clientMetadataUrl, "", "none", redirectUri};
  }
  auto client = registerClient(server, redirectUri);
  if (!client) return client;
  registered_[server.issuer] = *client;
  return client;
}

Result<OAuthRecord> OAuthFlow::requestToken(const std::string& tokenEndpoint, const Client& client,
                                            FormFields form, const char* what) {
  net::HttpRequest request =
      this->request("POST", tokenEndpoint, "application/x-www-form-urlencoded");
  if (client.method == "private_key_jwt") {
    auto assertion = makeClientAssertion(settings_.privateKeyPem, settings_.signingAlgorithm,
                                         client.id, client.audience);
    if (!assertion) return std::unexpected(assertion.error());
    form.emplace_back("client_id", client.id);
    form.emplace_back("client_assertion_type",
                      "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
    form.emplace_back("client_assertion", *assertion);
  } else if (client.method == "client_secret_basic") {
    // RFC 6749 §2.3.1: each part form-encoded before the two are joined.
    request.headers.emplace_back("Authorization", "Basic " + base64(percentEncode(client.id) + ":" +
                                                                    percentEncode(client.secret)));
  } else {
    form.emplace_back("client_id", client.id);
    if (client.method == "client_secret_post") form.emplace_back("client_secret", client.secret);
  }
  request.body = encodeForm(form);
  auto reply = http_(std::move(request));
  if (!reply) {
    return fail(reply.error().code,
                "cannot reach the token endpoint " + tokenEndpoint + ": " + reply.error().message);
  }
  if (reply->status != 200) {
    return fail(ErrorCode::kRefused,
                "the token endpoint refused " + std::string(what) + ": " + oauthError(*reply));
  }
  Json answer = Json::parse(reply->body, nullptr, false);
  if (!answer.is_object()) {
    return fail(ErrorCode::kProtocol, "the token endpoint " + tokenEndpoint +
                                          " answered with something that is not JSON");
  }
  const auto access = answer.find("access_token");
  if (access == answer.end() || !access->is_string() || access->get<std::string>().empty()) {
    return fail(ErrorCode::kProtocol,
                "the token endpoint " + tokenEndpoint + " answered without an access_token");
  }
  OAuthRecord record;
  record.accessToken = access->get<std::string>();
  // The token goes into an HTTP header: visible ASCII only, or it could inject one.
  if (!net::isVisibleAscii(record.accessToken, 16384)) {
    return fail(ErrorCode::kProtocol, "the token endpoint " + tokenEndpoint +
                                          " sent an access token kaja cannot put in a header");
  }
  std::string type = answer.value("token_type", Json("Bearer")).is_string()
                         ? answer.value("token_type", std::string("Bearer"))
                         : "";
  std::string lowered = type;
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lowered != "bearer") {
    return fail(ErrorCode::kProtocol, "the token endpoint " + tokenEndpoint +
                                          " sent a token of type " + quoteForMessage(type) +
                                          ", which kaja cannot use (only Bearer)");
  }
  if (const auto refreshToken = answer.find("refresh_token");
      refreshToken != answer.end() && refreshToken->is_string() &&
      net::isVisibleAscii(refreshToken->get_ref<const std::string&>(), 16384)) {
    record.refreshToken = refreshToken->get<std::string>();
  }
  if (const auto expires = answer.find("expires_in");
      expires != answer.end() && expires->is_number() && expires->get<double>() > 0 &&
      expires->get<double>() < 1e9) {
    record.expiresAt = nowSeconds() + static_cast<std::int64_t>(expires->get<double>());
  }
  if (const auto scope = answer.find("scope"); scope != answer.end() && scope->is_string()) {
    record.scope = joinScopes(splitScopes(scope->get<std::string>()));
  }
  record.tokenEndpoint = tokenEndpoint;
  record.clientId = client.id;
  // Only a secret the server issued is kept; one the user gives (oauth.clientSecretEnv)
  // stays in the environment.
  if (client.id != settings_.clientId) record.clientSecret = client.secret;
  record.authMethod = client.method;
  record.redirectUri = client.redirectUri;
  return record;
}

Result<OAuthRecord> OAuthFlow::signIn(long /*status*/, const std::string& challenge,
                                      const std::optional<OAuthRecord>& previous) {
  const auto bearer = bearerChallenge(challenge).value_or(BearerChallenge{});
  auto found = discover(bearer.resourceMetadata);
  if (!found) return std::unexpected(found.error());
  const ServerMetadata& server = found->server;
  // A client kept from an earlier sign-in at the same issuer; never one from another
  // (SEP-2352: credentials are bound to the server that issued them).
  if (previous && previous->issuer == server.issuer && !previous->clientId.empty() &&
      settings_.clientId.empty() && !registered_.contains(server.issuer)) {
    registered_[server.issuer] =
        Client{previous->clientId, previous->clientSecret,
               previous->authMethod.empty() ? "none" : previous->authMethod, previous->redirectUri};
  }

  // The scopes: what the challenge asks for, else what the resource supports, else none;
  // joined to what was asked before, so a step-up keeps the scopes already granted.
  std::vector<std::string> scopes = splitScopes(bearer.scope);
  if (scopes.empty() && found->resourceMetadata) scopes = found->resourceMetadata->scopesSupported;
  if (previous) {
    for (const auto& scope : splitScopes(previous->scope)) scopes.push_back(scope);
  }
  for (const auto& scope : requested_) scopes.push_back(scope);
  for (const auto& scope : settings_.extraScopes) scopes.push_back(scope);
  if (!scopes.empty() && lists(server.scopesSupported, "offline_access")) {
    scopes.emplace_back("offline_access");
  }
  scopes = splitScopes(joinScopes(scopes));

  if (settings_.clientCredentials) return clientCredentials(*found, scopes);

  // The redirect: on the port registered before when there is one, so the client's
  // registered redirect_uri still matches.
  int port = settings_.redirectPort;
  if (auto known = registered_.find(server.issuer); known != registered_.end()) {
    if (auto url = net::parseUrl(known->second.redirectUri); url && isLoopbackUrl(*url)) {
      port = url->port;
    }
  }
  auto listener = LoopbackRedirect::open(port);
  if (!listener && port != 0 && port != settings_.redirectPort)
    listener = LoopbackRedirect::open(0);
  if (!listener) return std::unexpected(listener.error());
  auto client = clientFor(server, listener->redirectUri());
  if (!client) return std::unexpected(client.error());

  auto pkce = makePkce();
  if (!pkce) return std::unexpected(pkce.error());
  auto state = randomToken(24);
  if (!state) return std::unexpected(state.error());
  FormFields query{{"response_type", "code"},
                   {"client_id", client->id},
                   {"redirect_uri", listener->redirectUri()},
                   {"state", *state},
                   {"code_challenge", pkce->challenge},
                   {"code_challenge_method", "S256"}};
  if (!scopes.empty()) query.emplace_back("scope", joinScopes(scopes));
  query.emplace_back("resource", found->resource);
  const std::string separator =
      server.authorizationEndpoint.find('?') == std::string::npos ? "?" : "&";
  const std::string authorizeUrl = server.authorizationEndpoint + separator + encodeForm(query);
  ++attempts_;
  requested_ = scopes;
  if (auto shown = opener_(authorizeUrl); !shown) return std::unexpected(shown.error());
  // Only the answer to this request counts; a forged one (another local process reaching
  // the port first) is turned away and the wait goes on.
  auto answer = listener->wait(settings_.approveTimeout, [&](const auto& query) {
    const auto it = query.find("state");
    return it != query.end() && constantTimeEquals(it->second, *state);
  });
  if (!answer) return std::unexpected(answer.error());

  const auto param = [&](const char* name) {
    const auto it = answer->find(name);
    return it == answer->end() ? std::optional<std::string>() : std::optional(it->second);
  };
  if (!constantTimeEquals(param("state").value_or(""), *state)) {
    return fail(ErrorCode::kRefused,
                "the sign-in's answer carried another state than kaja sent, so it may be "
                "someone else's; nothing was saved, run the command again");
  }
  // RFC 9207: a present iss must be the issuer exactly (no normalisation), and one the
  // server promised must be present; else the answer may come from another server.
  if (const auto iss = param("iss")) {
    if (*iss != server.issuer) {
      return fail(ErrorCode::kRefused, "the sign-in's answer names the issuer " +
                                           quoteForMessage(*iss) + " rather than " +
                                           quoteForMessage(server.issuer) +
                                           ", so it was refused; nothing was saved");
    }
  } else if (server.issParameterSupported) {
    return fail(ErrorCode::kRefused, "the sign-in's answer has no iss although " + server.issuer +
                                         " promises one, so it was refused; nothing was saved");
  }
  if (const auto error = param("error")) {
    std::string why = quoteServer(*error);
    if (const auto description = param("error_description"))
      why += " (" + quoteServer(*description) + ")";
    return fail(ErrorCode::kRefused, "the authorization server refused the sign-in: " + why);
  }
  const auto code = param("code");
  if (!code || code->empty()) {
    return fail(ErrorCode::kProtocol, "the sign-in's answer has no code; run the command again");
  }
  auto record = requestToken(server.tokenEndpoint, *client,
                             {{"grant_type", "authorization_code"},
                              {"code", *code},
                              {"redirect_uri", listener->redirectUri()},
                              {"code_verifier", pkce->verifier},
                              {"resource", found->resource}},
                             "the sign-in's code");
  if (!record) return record;
  if (record->scope.empty()) record->scope = joinScopes(scopes);
  record->issuer = server.issuer;
  record->resource = found->resource;
  if (auto ok = checkStorable(*record); !ok) return std::unexpected(ok.error());
  return record;
}

Result<OAuthRecord> OAuthFlow::refresh(const OAuthRecord& record) {
  if (record.refreshToken.empty()) {
    return fail(ErrorCode::kRefused, "the sign-in gave no refresh token");
  }
  auto endpoint = checkEndpoint(record.tokenEndpoint, "token_endpoint", record.issuer);
  if (!endpoint) return std::unexpected(endpoint.error());
  // A client registered beforehand has its secret in the environment, never in the record.
  const bool preRegistered = !settings_.clientId.empty() && record.clientId == settings_.clientId;
  Client client{record.clientId, preRegistered ? settings_.clientSecret : record.clientSecret,
                record.authMethod.empty() ? "none" : record.authMethod, record.redirectUri};
  FormFields form{{"grant_type", "refresh_token"}, {"refresh_token", record.refreshToken}};
  if (!record.resource.empty()) form.emplace_back("resource", record.resource);
  auto renewed = requestToken(endpoint->text, client, std::move(form), "the refresh token");
  if (!renewed) return renewed;
  if (renewed->refreshToken.empty()) renewed->refreshToken = record.refreshToken;
  if (renewed->scope.empty()) renewed->scope = record.scope;
  renewed->issuer = record.issuer;
  renewed->resource = record.resource;
  renewed->forUrl = record.forUrl;
  if (auto ok = checkStorable(*renewed); !ok) return std::unexpected(ok.error());
  return renewed;
}

}  // namespace kaja::core::auth
