// The discovery half of a sign-in: which metadata kaja accepts, and which endpoints it
// sends codes and secrets to. The fake authorization server is in fake_auth_server.h.
#include "core/auth/oauth_flow.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ctime>
#include <string>

#include "core/auth/pkce.h"
#include "core/net/www_authenticate.h"
#include "tests/core/auth/fake_auth_server.h"

namespace kaja::core::auth {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using namespace kaja::core::auth::testing;  // NOLINT: the fakes

constexpr const char* kPrmChallenge =
    "Bearer resource_metadata=\"https://mcp.example/.well-known/oauth-protected-resource/mcp\"";

// Runs a sign-in that must fail and returns its error, checked to hold no secret.
Error signInFails(FakeAuthServer& server, FakeBrowser& browser,
                  const std::string& challenge = kPrmChallenge) {
  auto flow = makeFlow(server, browser);
  auto record = flow.signIn(401, challenge);
  EXPECT_FALSE(record.has_value()) << "signed in although it should not have";
  if (record) return Error{};
  expectNoSecrets(record.error().message);
  expectNoSecrets(record.error().detail);
  EXPECT_THAT(record.error().message, Not(HasSubstr("\x1b")));
  EXPECT_THAT(record.error().message, Not(HasSubstr("\n")));
  return record.error();
}

// Nothing that carries a code or a secret was sent, and no browser was opened.
void expectStoppedBeforeAuthorizing(const FakeAuthServer& server, const FakeBrowser& browser) {
  EXPECT_TRUE(browser.opened.empty()) << browser.opened.front();
  for (const auto& request : server.requests()) {
    EXPECT_EQ(request.method, "GET") << request.url;
  }
}

TEST(OAuthFlowTest, SignsInWithPkceStateAndResource) {
  FakeAuthServer server;
  FakeBrowser browser;
  auto flow = makeFlow(server, browser);
  const auto before = static_cast<std::int64_t>(std::time(nullptr));
  auto record = flow.signIn(401, kPrmChallenge);
  ASSERT_TRUE(record.has_value()) << record.error().message;
  EXPECT_EQ(record->accessToken, kAccessToken);
  EXPECT_EQ(record->refreshToken, kRefreshToken);
  EXPECT_EQ(record->issuer, kIssuer);
  EXPECT_EQ(record->resource, kServerUrl);
  EXPECT_EQ(record->clientId, "client-1");
  EXPECT_EQ(record->authMethod, "none");
  EXPECT_EQ(record->scope, "mcp:read");
  EXPECT_EQ(record->tokenEndpoint, "https://as.example/token");
  EXPECT_GE(record->expiresAt, before + 3600);
  EXPECT_LE(record->expiresAt, before + 3610);
  EXPECT_EQ(flow.attempts(), 1);

  ASSERT_EQ(browser.queries.size(), 1u);
  auto query = browser.queries[0];
  EXPECT_THAT(browser.opened[0], StartsWith("https://as.example/authorize?"));
  EXPECT_EQ(query["response_type"], "code");
  EXPECT_EQ(query["client_id"], "client-1");
  EXPECT_EQ(query["code_challenge_method"], "S256");
  EXPECT_EQ(query["resource"], kServerUrl);
  EXPECT_EQ(query["scope"], "mcp:read");
  EXPECT_EQ(query["state"].size(), 32u) << "24 random bytes";
  EXPECT_THAT(query["redirect_uri"], StartsWith("http://127.0.0.1:"));
  EXPECT_EQ(record->redirectUri, query["redirect_uri"]);

  auto registrations = server.to("POST", "as.example", "/register");
  ASSERT_EQ(registrations.size(), 1u);
  Json registered = Json::parse(registrations[0].body);
  EXPECT_EQ(registered["redirect_uris"], Json::array({query["redirect_uri"]}));
  EXPECT_EQ(registered["token_endpoint_auth_method"], "none");

  auto tokens = server.tokenRequests();
  ASSERT_EQ(tokens.size(), 1u);
  auto form = tokens[0].form();
  EXPECT_EQ(form["grant_type"], "authorization_code");
  EXPECT_EQ(form["code"], kCode);
  EXPECT_EQ(form["redirect_uri"], query["redirect_uri"]);
  EXPECT_EQ(form["resource"], kServerUrl);
  EXPECT_EQ(form["client_id"], "client-1");
  EXPECT_EQ(form["code_verifier"].size(), 43u);
  EXPECT_EQ(s256Challenge(form["code_verifier"]), query["code_challenge"]);
  EXPECT_EQ(tokens[0].header("Authorization"), "");

  for (const auto& request : server.requests()) {
    EXPECT_EQ(request.maxBodyBytes, kMaxMetadataBytes) << request.url;
    EXPECT_THAT(request.url, StartsWith("https://")) << request.url;
  }
}

TEST(OAuthFlowTest, FindsResourceMetadataAtTheWellKnownPathWithoutAChallenge) {
  FakeAuthServer server;
  FakeBrowser browser;
  auto flow = makeFlow(server, browser);
  auto record = flow.signIn(401, "");
  ASSERT_TRUE(record.has_value()) << record.error().message;
  EXPECT_EQ(record->resource, kServerUrl);
  EXPECT_EQ(server.to("GET", "mcp.example", "/.well-known/oauth-protected-resource/mcp").size(),
            1u);
}

// RFC 8414 §3.3: the issuer in the document must be identical to the one it was fetched for.
TEST(OAuthFlowTest, MetadataForAnotherIssuerIsRefused) {
  for (const char* issuer :
       {"https://evil.example", "https://as.example.evil", "https://as.example/tenant",
        "https://as.example/.well-known", " https://as.example", "https://as.example\x1b[2J"}) {
    FakeAuthServer server;
    server.metadata["issuer"] = issuer;
    FakeBrowser browser;
    Error error = signInFails(server, browser);
    EXPECT_EQ(error.code, ErrorCode::kProtocol) << issuer;
    EXPECT_THAT(error.message, HasSubstr("describes the issuer")) << issuer;
    EXPECT_THAT(error.message, HasSubstr("rather than \"https://as.example\"")) << issuer;
    EXPECT_THAT(error.message, HasSubstr("kaja does not sign in with metadata for another server"))
        << issuer;
    expectStoppedBeforeAuthorizing(server, browser);
  }
}

// Identical means identical: no case folding, no default port, no percent-decoding.
TEST(OAuthFlowTest, MetadataIssuerThatOnlyNormalisesToTheIssuerIsRefused) {
  for (const char* issuer : {"https://AS.example", "HTTPS://as.example", "https://as.example:443",
                             "https://as%2Eexample", "https://%61s.example"}) {
    FakeAuthServer server;
    server.metadata["issuer"] = issuer;
    FakeBrowser browser;
    Error error = signInFails(server, browser);
    EXPECT_EQ(error.code, ErrorCode::kProtocol) << issuer;
    EXPECT_THAT(error.message, HasSubstr("describes the issuer")) << issuer;
    expectStoppedBeforeAuthorizing(server, browser);
  }
}

// A bare origin with and without its '/' is one issuer written two ways; with a path, a
// trailing '/' makes another issuer (RFC 8414 §3.3).
TEST(OAuthFlowTest, MetadataIssuerDifferingOnlyByARootSlashIsTheSameIssuer) {
  FakeAuthServer server;
  server.metadata["issuer"] = "https://as.example/";
  FakeBrowser browser;
  auto flow = makeFlow(server, browser);
  auto signedIn = flow.signIn(401, kPrmChallenge);
  EXPECT_TRUE(signedIn) << (signedIn ? "" : signedIn.error().message);
}

TEST(OAuthFlowTest, MetadataIssuerWithATrailingSlashOnItsPathIsRefused) {
  FakeAuthServer server;
  server.resource["authorization_servers"] = Json::array({"https://as.example/tenant"});
  Json metadata = server.metadata;
  metadata["issuer"] = "https://as.example/tenant/";
  server.extra["GET as.example/.well-known/oauth-authorization-server/tenant"] =
      net::HttpReply{200, {}, metadata.dump()};
  FakeBrowser browser;
  Error error = signInFails(server, browser);
  EXPECT_EQ(error.code, ErrorCode::kProtocol);
  EXPECT_THAT(error.message, HasSubstr("describes the issuer \"https://as.example/tenant/\""));
  expectStoppedBeforeAuthorizing(server, browser);
}

// RFC 9728 §3.3: metadata for another resource must not be used.
TEST(OAuthFlowTest, ResourceMetadataForAnotherResourceIsRefused) {
  for (const char* resource :
       {"https://evil.example/mcp", "https://mcp.example/mcp2", "https://mcp.example/m",
        "https://mcp.example/mcp/other", "https://mcp.example/mcp?tenant=evil",
        "https://mcp.example/mcp#x", "https://a@mcp.example/mcp", "http://mcp.example/mcp",
        "https://mcp.example:8443/mcp", "mcp.example/mcp", "https://mcp.example/MCP",
        "https://evil.example/\x1b]0;pwned\x07"}) {
    FakeAuthServer server;
    server.resource["resource"] = resource;
    FakeBrowser browser;
    Error error = signInFails(server, browser);
    EXPECT_EQ(error.code, ErrorCode::kRefused) << resource;
    EXPECT_THAT(error.message, HasSubstr("ability 'fake' says it is the resource")) << resource;
    EXPECT_THAT(error.message, HasSubstr("which is not https://mcp.example/mcp")) << resource;
    EXPECT_THAT(error.message, HasSubstr("kaja does not sign in for another server's resource"))
        << resource;
    EXPECT_TRUE(server.to("GET", "as.example", "/.well-known/oauth-authorization-server").empty())
        << "the authorization server was asked although the resource is not this server";
    expectStoppedBeforeAuthorizing(server, browser);
  }
}

TEST(OAuthFlowTest, ResourceMetadataThatIsNotJsonOrNamesNoServerIsRefused) {
  {
    FakeAuthServer server;
    server.resourceBody = "<html>login</html>";
    FakeBrowser browser;
    Error error = signInFails(server, browser);
    EXPECT_EQ(error.code, ErrorCode::kProtocol);
    EXPECT_THAT(error.message, HasSubstr("did not send protected resource metadata as a JSON"));
  }
  {
    FakeAuthServer server;
    server.resource["authorization_servers"] = Json::array();
    FakeBrowser browser;
    Error error = signInFails(server, browser);
    EXPECT_EQ(error.code, ErrorCode::kProtocol);
    EXPECT_EQ(error.message, "ability 'fake''s resource metadata names no authorization server");
  }
}

TEST(OAuthFlowTest, ChallengeNamingANonUrlIsRefused) {
  FakeAuthServer server;
  FakeBrowser browser;
  Error error = signInFails(server, browser, "Bearer resource_metadata=\"javascript:alert(1)\"");
  EXPECT_EQ(error.code, ErrorCode::kProtocol);
  EXPECT_THAT(error.message, HasSubstr("named resource metadata at \"javascript:alert(1)\""));
  EXPECT_THAT(error.message, HasSubstr("which is not a URL"));
  EXPECT_TRUE(server.requests().empty());
}

// An authorization server on plain http lets anyone on the path rewrite its metadata, and
// with it the endpoints the code and the verifier go to (RFC 8414 §2: issuer is https).
TEST(OAuthFlowTest, AuthorizationServerOnPlainHttpIsRefused) {
  FakeAuthServer server;
  server.resource["authorization_servers"] = Json::array({"http://as.example"});
  // What a network attacker on the plain-http path would answer.
  server.metadata["issuer"] = "http://as.example";
  server.metadata["authorization_endpoint"] = "https://evil.example/authorize";
  server.metadata["token_endpoint"] = "https://evil.example/token";
  server.metadata["registration_endpoint"] = "https://evil.example/register";
  server.registration = jsonReply(201, {{"client_id", "evil-client"}});
  FakeBrowser browser;
  Error error = signInFails(server, browser);
  EXPECT_EQ(error.code, ErrorCode::kRefused);
  EXPECT_THAT(error.message, HasSubstr("http://as.example"));
  for (const auto& request : server.requests()) {
    EXPECT_THAT(request.url, Not(StartsWith("http://"))) << "fetched over plain http";
  }
  EXPECT_TRUE(server.tokenRequests().empty()) << "the code went to the attacker's endpoint";
  expectStoppedBeforeAuthorizing(server, browser);
}

TEST(OAuthFlowTest, PlainHttpAuthorizationOrTokenEndpointIsRefused) {
  for (const char* field : {"authorization_endpoint", "token_endpoint"}) {
    for (const char* endpoint : {"http://example.com/x", "http://127.0.0.1.nip.io/x",
                                 "http://localhost.evil.com/x", "http://10.1.2.3/x"}) {
      FakeAuthServer server;
      server.metadata[field] = endpoint;
      FakeBrowser browser;
      Error error = signInFails(server, browser);
      EXPECT_EQ(error.code, ErrorCode::kRefused) << field << " " << endpoint;
      EXPECT_THAT(error.message, HasSubstr(std::string("the ") + field +
                                           " of \"https://as.example\" is plain http"))
          << endpoint;
      EXPECT_THAT(error.message, HasSubstr("kaja sends codes and secrets only over https"));
      expectStoppedBeforeAuthorizing(server, browser);
    }
  }
}

TEST(OAuthFlowTest, NonHttpEndpointIsRefused) {
  for (const char* field : {"authorization_endpoint", "token_endpoint", "registration_endpoint"}) {
    for (const char* endpoint : {"javascript:alert(document.cookie)", "file:///etc/passwd",
                                 "data:text/html,<script>", "/relative/token"}) {
      FakeAuthServer server;
      server.metadata[field] = endpoint;
      FakeBrowser browser;
      Error error = signInFails(server, browser);
      EXPECT_EQ(error.code, ErrorCode::kRefused) << field << " " << endpoint;
      EXPECT_THAT(error.message, HasSubstr(std::string("the ") + field +
                                           " of \"https://as.example\" is not an http(s) URL"))
          << endpoint;
      expectStoppedBeforeAuthorizing(server, browser);
    }
  }
}

TEST(OAuthFlowTest, PlainHttpRegistrationEndpointIsNeverPosted) {
  for (const char* endpoint : {"http://example.com/register", "http://127.0.0.1.nip.io/r"}) {
    FakeAuthServer server;
    server.metadata["registration_endpoint"] = endpoint;
    FakeBrowser browser;
    Error error = signInFails(server, browser);
    EXPECT_EQ(error.code, ErrorCode::kRefused) << endpoint;
    EXPECT_THAT(error.message,
                HasSubstr("the registration_endpoint of \"https://as.example\" is plain http"));
    expectStoppedBeforeAuthorizing(server, browser);
  }
}

TEST(OAuthFlowTest, LoopbackHttpEndpointsAreUsed) {
  FakeAuthServer server;
  server.metadata["authorization_endpoint"] = "http://127.0.0.1:9/authorize";
  server.metadata["token_endpoint"] = "http://[::1]:9/token";
  server.metadata["registration_endpoint"] = "http://localhost:9/register";
  FakeBrowser browser;
  auto flow = makeFlow(server, browser);
  auto record = flow.signIn(401, kPrmChallenge);
  ASSERT_TRUE(record.has_value()) << record.error().message;
  EXPECT_EQ(record->tokenEndpoint, "http://[::1]:9/token");
  ASSERT_EQ(browser.opened.size(), 1u);
  EXPECT_THAT(browser.opened[0], StartsWith("http://127.0.0.1:9/authorize?"));
}

TEST(OAuthFlowTest, WithoutS256TheSignInIsRefused) {
  for (const Json& methods : {Json::array({"plain"}), Json::array(), Json::array({"s256"}),
                              Json::array({"S256 "}), Json(nullptr)}) {
    FakeAuthServer server;
    server.metadata["code_challenge_methods_supported"] = methods;
    FakeBrowser browser;
    Error error = signInFails(server, browser);
    EXPECT_EQ(error.code, ErrorCode::kRefused) << methods.dump();
    EXPECT_EQ(error.message,
              "the authorization server https://as.example does not offer PKCE with S256, which "
              "kaja requires to keep the code from being used by anyone else")
        << methods.dump();
    expectStoppedBeforeAuthorizing(server, browser);
  }
  FakeAuthServer server;
  server.metadata.erase("code_challenge_methods_supported");
  FakeBrowser browser;
  Error error = signInFails(server, browser);
  EXPECT_EQ(error.code, ErrorCode::kRefused);
  EXPECT_THAT(error.message, HasSubstr("does not offer PKCE with S256"));
  expectStoppedBeforeAuthorizing(server, browser);
}

TEST(OAuthFlowTest, S256AsAStringRatherThanAListIsRefused) {
  FakeAuthServer server;
  server.metadata["code_challenge_methods_supported"] = "S256";
  FakeBrowser browser;
  Error error = signInFails(server, browser);
  EXPECT_EQ(error.code, ErrorCode::kProtocol);
  EXPECT_THAT(error.message,
              HasSubstr("whose code_challenge_methods_supported is not a list of strings"));
  expectStoppedBeforeAuthorizing(server, browser);
}

TEST(OAuthFlowTest, TenMegabyteMetadataIsNotRead) {
  {
    FakeAuthServer server;
    server.metadataBody = std::string(10 * 1024 * 1024, ' ') + server.metadata.dump();
    FakeBrowser browser;
    Error error = signInFails(server, browser);
    EXPECT_EQ(error.code, ErrorCode::kProtocol);
    EXPECT_EQ(error.message,
              "https://as.example:443/.well-known/oauth-authorization-server sent authorization "
              "server metadata larger than 256 KB; kaja does not read it");
    expectStoppedBeforeAuthorizing(server, browser);
  }
  {
    FakeAuthServer server;
    server.resourceBody = server.resource.dump() + std::string(10 * 1024 * 1024, '\n');
    FakeBrowser browser;
    Error error = signInFails(server, browser);
    EXPECT_EQ(error.code, ErrorCode::kProtocol);
    EXPECT_THAT(error.message, HasSubstr("sent protected resource metadata larger than 256 KB"));
    expectStoppedBeforeAuthorizing(server, browser);
  }
  // Every request asks the transport to stop at the same limit.
  FakeAuthServer server;
  FakeBrowser browser;
  auto flow = makeFlow(server, browser);
  ASSERT_TRUE(flow.signIn(401, kPrmChallenge).has_value());
  for (const auto& request : server.requests()) {
    EXPECT_LE(request.maxBodyBytes, kMaxMetadataBytes) << request.url;
  }
}

TEST(OAuthFlowTest, LegacyServerOnPlainHttpIsRefused) {
  // No resource metadata anywhere: a 2025-03-26 server is its own authorization server, and
  // without metadata its endpoints are /authorize and /token of its origin.
  FakeAuthServer server;
  server.extra["GET mcp.example/.well-known/oauth-protected-resource/mcp"] =
      net::HttpReply{404, {}, "not found"};
  FakeBrowser browser;
  auto flow = OAuthFlow(parsedUrl("http://mcp.example/mcp"), "ability 'fake'", fastSettings(),
                        server.send(), browser.opener());
  auto record = flow.signIn(401, "");
  ASSERT_FALSE(record.has_value());
  EXPECT_EQ(record.error().code, ErrorCode::kRefused);
  EXPECT_THAT(record.error().message,
              HasSubstr("the authorization server \"http://mcp.example\" is plain http"));
  expectStoppedBeforeAuthorizing(server, browser);
}

TEST(OAuthFlowTest, ClientOfAnotherIssuerIsNotReused) {
  FakeAuthServer server;
  FakeBrowser browser;
  auto flow = makeFlow(server, browser);
  OAuthRecord previous;
  previous.issuer = "https://other-as.example";
  previous.clientId = "other-client";
  previous.clientSecret = kClientSecret;
  previous.authMethod = "client_secret_post";
  previous.redirectUri = "http://127.0.0.1:1/callback";
  auto record = flow.signIn(401, kPrmChallenge, previous);
  ASSERT_TRUE(record.has_value()) << record.error().message;
  EXPECT_EQ(record->clientId, "client-1");
  EXPECT_EQ(server.to("POST", "as.example", "/register").size(), 1u);
  for (const auto& request : server.requests()) {
    EXPECT_THAT(request.body, Not(HasSubstr("other-client"))) << request.url;
    EXPECT_THAT(request.body, Not(HasSubstr(kClientSecret))) << request.url;
  }
  EXPECT_THAT(browser.opened[0], Not(HasSubstr("other-client")));
}

TEST(OAuthFlowTest, StepUpAsksForTheUnionOfScopes) {
  FakeAuthServer server;
  FakeBrowser browser;
  auto flow = makeFlow(server, browser);
  auto first = flow.signIn(401, std::string(kPrmChallenge) + ", scope=\"mcp:read\"");
  ASSERT_TRUE(first.has_value()) << first.error().message;
  auto second = flow.signIn(
      403, std::string(kPrmChallenge) + ", error=\"insufficient_scope\", scope=\"mcp:write\"",
      *first);
  ASSERT_TRUE(second.has_value()) << second.error().message;
  ASSERT_EQ(browser.queries.size(), 2u);
  EXPECT_EQ(net::splitScopes(browser.queries[1]["scope"]).size(), 2u)
      << browser.queries[1]["scope"];
  EXPECT_THAT(browser.queries[1]["scope"], HasSubstr("mcp:read"));
  EXPECT_THAT(browser.queries[1]["scope"], HasSubstr("mcp:write"));
  EXPECT_EQ(server.to("POST", "as.example", "/register").size(), 1u)
      << "the client registered at this issuer is reused";
  EXPECT_EQ(browser.queries[1]["redirect_uri"], browser.queries[0]["redirect_uri"]);
  EXPECT_EQ(flow.attempts(), 2);
}

}  // namespace
}  // namespace kaja::core::auth
