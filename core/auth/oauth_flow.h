#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/auth/metadata.h"
#include "core/error.h"
#include "core/manifest/secrets.h"
#include "core/net/address_guard.h"
#include "core/net/blocking_http.h"
#include "core/net/url.h"

namespace kaja::core::auth {

/// Sends one HTTP request and returns the whole answer (the seam tests fake). The default,
/// defaultHttp(), is net::fetchBlocking through the address guard.
using HttpSend = std::function<Result<net::HttpReply>(net::HttpRequest)>;

/// Shows the authorization URL to the person signing in: opens a browser and prints it, or,
/// headless (kaja-conformance-client), follows it itself and delivers the redirect to the
/// loopback listener. An error ends the sign-in.
using BrowserOpener = std::function<Result<void>(const std::string& url)>;

/// Checks that every field of `record` (tokens, issuer, endpoints, client id) can be stored
/// in the secrets file and read back: valid UTF-8 without control characters, at most
/// 16 KB each. kProtocol naming the field (never its value) otherwise, so a server's odd
/// answer can never leave a file kaja refuses to read.
Result<void> checkStorable(const OAuthRecord& record);

/// Returns an HttpSend that fetches with `policy`.
HttpSend defaultHttp(net::AddressPolicy policy);

/// What a sign-in may use besides what the servers publish.
struct ClientSettings {
  std::string clientName = "kaja";
  /// A client registered with the authorization server beforehand (the manifest's
  /// `oauth.clientId`), used instead of any registration; with its secret, if any.
  std::string clientId;
  std::string clientSecret;
  /// A Client ID Metadata Document URL, used as the client id where the authorization server
  /// supports them (`client_id_metadata_document_supported`) and no clientId is set.
  std::string clientMetadataUrl;
  /// Scopes asked for on top of what the server asks for (the manifest's `oauth.scopes`).
  std::vector<std::string> extraScopes;
  /// Machine to machine (the client credentials grant, SEP-1046) instead of a person's
  /// sign-in: the client authenticates with clientSecret (client_secret_basic) or, when
  /// privateKeyPem is set, a JWT assertion signed with it (private_key_jwt).
  bool clientCredentials = false;
  std::string privateKeyPem;
  std::string signingAlgorithm = "ES256";  ///< ES256 or RS256, for privateKeyPem
  /// With clientCredentials: a JWT the workload was given (workload identity federation,
  /// RFC 7523 §2.1), sent as the grant's assertion instead of the client's own credentials.
  std::string jwtBearerAssertion;
  /// With clientCredentials: an enterprise IdP's ID token to exchange at its token endpoint
  /// for an identity assertion grant (SEP-990), with the client id kaja has at the IdP.
  std::string idpIdToken;
  std::string idpTokenEndpoint;
  std::string idpClientId;
  /// The loopback redirect's port; 0 lets the system pick one (RFC 8252 §7.3).
  int redirectPort = 0;
  std::chrono::milliseconds fetchTimeout{30000};     ///< per request (T5)
  std::chrono::milliseconds approveTimeout{300000};  ///< for the person to approve (T5)
};

/// The sign-in to one server (T5): discovery of its protected resource metadata and of its
/// authorization server, client registration, an authorization code flow with PKCE (S256)
/// through a loopback redirect, the token request, and refreshes. Keeps what it learned
/// across challenges: the scopes asked for so far (so a step-up asks for their union) and
/// the client registered with each authorization server (never reused at another one).
/// Blocking; use from one thread.
class OAuthFlow {
 public:
  /// `serverUrl` is the MCP endpoint; `server` names it in messages ("ability 'linear'").
  OAuthFlow(net::Url serverUrl, std::string server, ClientSettings settings, HttpSend http,
            BrowserOpener opener);

  /// Signs in after the server answered a request with `status` (401 or 403) and the
  /// WWW-Authenticate value `challenge` ("" when it sent none, as 2025-03-26 servers may).
  /// Returns the tokens, with what refreshing them needs; `previous`, when given, is the
  /// record of an earlier sign-in whose client may be reused at the same issuer.
  Result<OAuthRecord> signIn(long status, const std::string& challenge,
                             const std::optional<OAuthRecord>& previous = std::nullopt);

  /// Uses the refresh token of `record` at its token endpoint; returns the new record (the
  /// old refresh token kept when the server sends none). kRefused when the server refuses
  /// it, kProtocol for an answer kaja cannot use.
  Result<OAuthRecord> refresh(const OAuthRecord& record);

  /// Returns true when a sign-in needs a person (a browser); false for client credentials.
  [[nodiscard]] bool needsPerson() const { return !settings_.clientCredentials; }

  /// Returns how many authorization requests this flow has made.
  [[nodiscard]] int attempts() const { return attempts_; }

 private:
  struct Client {
    std::string id;
    std::string secret;
    std::string method;  ///< client_secret_basic, client_secret_post, private_key_jwt or none
    std::string redirectUri;
    std::string audience;  ///< the issuer, for a private_key_jwt assertion
  };
  struct Discovery {
    std::optional<ResourceMetadata> resourceMetadata;
    std::string resource;  ///< sent as `resource` (RFC 8707)
    ServerMetadata server;
  };

  Result<Discovery> discover(const std::string& resourceMetadataUrl);
  Result<std::optional<ResourceMetadata>> fetchResourceMetadata(const std::string& fromHeader);
  Result<ServerMetadata> fetchServerMetadata(const std::string& issuer, bool legacy);
  Result<Client> clientFor(const ServerMetadata& server, const std::string& redirectUri);
  Result<Client> registerClient(const ServerMetadata& server, const std::string& redirectUri);
  Result<OAuthRecord> requestToken(const std::string& tokenEndpoint, const Client& client,
                                   std::vector<std::pair<std::string, std::string>> form,
                                   const char* what);
  /// A request to an authorization server: its timeouts and size limit, JSON wanted back.
  [[nodiscard]] net::HttpRequest request(const char* method, const std::string& url,
                                         const char* contentType = nullptr) const;
  Result<net::HttpReply> get(const std::string& url);
  Result<std::string> exchangeAtIdp(const Discovery& found);
  Result<OAuthRecord> clientCredentials(const Discovery& found,
                                        const std::vector<std::string>& scopes);
  [[nodiscard]] std::string displayUrl() const;

  net::Url serverUrl_;
  std::string server_;
  ClientSettings settings_;
  HttpSend http_;
  BrowserOpener opener_;
  std::vector<std::string> requested_;        ///< every scope asked for so far
  std::map<std::string, Client> registered_;  ///< issuer -> client registered there
  int attempts_ = 0;
};

}  // namespace kaja::core::auth
