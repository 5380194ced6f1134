// The token half of a sign-in: what kaja accepts from a token endpoint and a registration
// endpoint, and how it refreshes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ctime>
#include <string>

#include "core/auth/oauth_flow.h"
#include "core/auth/pkce.h"
#include "tests/core/auth/fake_auth_server.h"

namespace kaja::core::auth {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace kaja::core::auth::testing;  // NOLINT: the fakes

std::int64_t now() { return static_cast<std::int64_t>(std::time(nullptr)); }

Result<OAuthRecord> signInWithToken(FakeAuthServer& server, const net::HttpReply& token) {
  server.token = token;
  FakeBrowser browser;
  auto flow = makeFlow(server, browser);
  auto record = flow.signIn(401, "");
  browser.join();
  return record;
}

Error tokenRefused(const net::HttpReply& token, const std::vector<std::string>& secrets = {}) {
  FakeAuthServer server;
  auto record = signInWithToken(server, token);
  EXPECT_FALSE(record.has_value()) << "accepted the token answer " << token.body;
  if (record) return Error{};
  expectNoSecrets(record.error().message, secrets);
  EXPECT_EQ(server.tokenRequests().size(), 1u);
  return record.error();
}

TEST(OAuthFlowTokenTest, AnswerWithoutAUsableAccessTokenIsRefused) {
  for (const Json& body :
       {Json::object(), Json{{"access_token", 42}}, Json{{"access_token", nullptr}},
        Json{{"access_token", ""}}, Json{{"access_token", Json::array({kAccessToken})}},
        Json{{"token", kAccessToken}, {"token_type", "Bearer"}}}) {
    Error error = tokenRefused(jsonReply(200, body));
    EXPECT_EQ(error.code, ErrorCode::kProtocol) << body.dump();
    EXPECT_EQ(error.message,
              "the token endpoint https://as.example/token answered without an "
              "access_token")
        << body.dump();
  }
}

TEST(OAuthFlowTokenTest, AccessTokenThatWouldInjectAHeaderIsRefused) {
  for (const std::string& token :
       {std::string("abc\r\nX-Injected: 1"), std::string("abc\ndef"), std::string("abc def"),
        std::string("abc\tdef"), std::string("abc\x7f"), std::string("caf\xc3\xa9"),
        std::string("a\0b", 3), std::string(20000, 'a'), std::string(" leading")}) {
    Error error =
        tokenRefused(jsonReply(200, {{"access_token", token}, {"token_type", "Bearer"}}), {token});
    EXPECT_EQ(error.code, ErrorCode::kProtocol) << token.substr(0, 40);
    EXPECT_EQ(error.message,
              "the token endpoint https://as.example/token sent an access token "
              "kaja cannot put in a header")
        << token.substr(0, 40);
  }
}

TEST(OAuthFlowTokenTest, TokenOfAnotherTypeIsRefused) {
  for (const Json& type : {Json("mac"), Json("DPoP"), Json("Basic"), Json("Bearer "),
                           Json("Bearer\r\nX: 1"), Json(5), Json(true), Json("")}) {
    Error error =
        tokenRefused(jsonReply(200, {{"access_token", kAccessToken}, {"token_type", type}}));
    EXPECT_EQ(error.code, ErrorCode::kProtocol) << type.dump();
    EXPECT_THAT(error.message, HasSubstr("the token endpoint https://as.example/token sent a token "
                                         "of type "))
        << type.dump();
    EXPECT_THAT(error.message, HasSubstr(", which kaja cannot use (only Bearer)")) << type.dump();
    EXPECT_THAT(error.message, Not(HasSubstr("\r"))) << type.dump();
  }
}

TEST(OAuthFlowTokenTest, BearerInAnyCaseAndAMissingTypeAreAccepted) {
  for (const Json& body : {Json{{"access_token", kAccessToken}, {"token_type", "bearer"}},
                           Json{{"access_token", kAccessToken}, {"token_type", "BEARER"}},
                           Json{{"access_token", kAccessToken}}}) {
    FakeAuthServer server;
    auto record = signInWithToken(server, jsonReply(200, body));
    ASSERT_TRUE(record.has_value()) << body.dump() << ": " << record.error().message;
    EXPECT_EQ(record->accessToken, kAccessToken);
    EXPECT_EQ(record->refreshToken, "");
    EXPECT_EQ(record->expiresAt, 0);
    EXPECT_EQ(record->scope, "mcp:read") << "what was asked for";
  }
}

TEST(OAuthFlowTokenTest, ExpiresInOutOfRangeMeansUnknown) {
  for (const Json& expires : {Json(1e300), Json(-5), Json(-1e300), Json(0), Json("3600"), Json(1e9),
                              Json(9223372036854775807LL), Json(nullptr)}) {
    FakeAuthServer server;
    auto record = signInWithToken(
        server, jsonReply(200, {{"access_token", kAccessToken}, {"expires_in", expires}}));
    ASSERT_TRUE(record.has_value()) << expires.dump() << ": " << record.error().message;
    EXPECT_EQ(record->expiresAt, 0) << expires.dump();
  }
  FakeAuthServer server;
  const auto before = now();
  auto record =
      signInWithToken(server, jsonReply(200, {{"access_token", kAccessToken}, {"expires_in", 60}}));
  ASSERT_TRUE(record.has_value());
  EXPECT_GE(record->expiresAt, before + 60);
  EXPECT_LE(record->expiresAt, now() + 60);
}

TEST(OAuthFlowTokenTest, UnusableRefreshTokenIsDropped) {
  for (const Json& refresh : {Json("rt\r\nX: 1"), Json("rt with space"), Json(7), Json("")}) {
    FakeAuthServer server;
    auto record = signInWithToken(
        server, jsonReply(200, {{"access_token", kAccessToken}, {"refresh_token", refresh}}));
    ASSERT_TRUE(record.has_value()) << refresh.dump();
    EXPECT_EQ(record->refreshToken, "") << refresh.dump();
  }
}

TEST(OAuthFlowTokenTest, AnswerThatIsNotJsonIsRefused) {
  for (const std::string body : {"<html>500</html>", "", "[\"at\"]", "\"at\"", "access_token=x",
                                 "{\"access_token\":\"x\""}) {
    Error error = tokenRefused(net::HttpReply{200, {}, body});
    EXPECT_EQ(error.code, ErrorCode::kProtocol) << body;
    EXPECT_EQ(error.message,
              "the token endpoint https://as.example/token answered with something "
              "that is not JSON")
        << body;
  }
}

TEST(OAuthFlowTokenTest, InvalidGrantIsARefusalNamingTheError) {
  Error error = tokenRefused(
      jsonReply(400, {{"error", "invalid_grant"}, {"error_description", "The code expired"}}));
  EXPECT_EQ(error.code, ErrorCode::kRefused);
  EXPECT_EQ(error.message,
            "the token endpoint refused the sign-in's code: invalid_grant (The code expired)");

  Error bare = tokenRefused(jsonReply(400, {{"error", "invalid_grant"}}));
  EXPECT_EQ(bare.message, "the token endpoint refused the sign-in's code: invalid_grant");

  Error status = tokenRefused(net::HttpReply{503, {}, "<html>down</html>"});
  EXPECT_EQ(status.code, ErrorCode::kRefused);
  EXPECT_EQ(status.message, "the token endpoint refused the sign-in's code: HTTP 503");

  // A 2xx that is not 200 is no token answer either (RFC 6749 §5.1).
  Error created = tokenRefused(jsonReply(201, {{"access_token", kAccessToken}}));
  EXPECT_EQ(created.code, ErrorCode::kRefused);
  EXPECT_EQ(created.message, "the token endpoint refused the sign-in's code: HTTP 201");
}

TEST(OAuthFlowTokenTest, HostileErrorFieldsAreEscapedAndCut) {
  Error error = tokenRefused(jsonReply(
      400, {{"error", "bad\x1b[2J\r\n"}, {"error_description", std::string(100000, 'x')}}));
  EXPECT_EQ(error.code, ErrorCode::kRefused);
  EXPECT_THAT(error.message, HasSubstr("bad\\u001b[2J\\r\\n ("));
  EXPECT_LT(error.message.size(), 600u);
  EXPECT_EQ(error.message.find('\x1b'), std::string::npos);
}

TEST(OAuthFlowTokenTest, TransportFailureNamesTheEndpoint) {
  FakeAuthServer server;
  FakeBrowser browser;
  HttpSend send = [&](net::HttpRequest request) -> Result<net::HttpReply> {
    if (request.method == "POST" && request.url.ends_with("/token")) {
      return fail(ErrorCode::kConnect, "connection refused");
    }
    return server.handle(std::move(request));
  };
  OAuthFlow flow(parsedUrl(kServerUrl), "ability 'fake'", fastSettings(), send, browser.opener());
  auto record = flow.signIn(401, "");
  ASSERT_FALSE(record.has_value());
  EXPECT_EQ(record.error().code, ErrorCode::kConnect);
  EXPECT_EQ(record.error().message,
            "cannot reach the token endpoint https://as.example/token: connection refused");
}

TEST(OAuthFlowTokenTest, RegistrationRefusedOrWithoutClientIdStopsTheSignIn) {
  {
    FakeAuthServer server;
    server.registration = jsonReply(400, {{"error", "invalid_redirect_uri"}});
    FakeBrowser browser;
    auto flow = makeFlow(server, browser);
    auto record = flow.signIn(401, "");
    ASSERT_FALSE(record.has_value());
    EXPECT_EQ(record.error().code, ErrorCode::kRefused);
    EXPECT_EQ(record.error().message,
              "the authorization server https://as.example refused to "
              "register kaja: invalid_redirect_uri");
    EXPECT_TRUE(browser.opened.empty());
  }
  for (const Json& answer : {Json::object(), Json{{"client_id", ""}}, Json{{"client_id", 5}},
                             Json::array({"client-1"})}) {
    FakeAuthServer server;
    server.registration = jsonReply(201, answer);
    FakeBrowser browser;
    auto flow = makeFlow(server, browser);
    auto record = flow.signIn(401, "");
    ASSERT_FALSE(record.has_value()) << answer.dump();
    EXPECT_EQ(record.error().code, ErrorCode::kProtocol) << answer.dump();
    EXPECT_EQ(record.error().message,
              "the authorization server https://as.example registered kaja but sent no client_id");
    EXPECT_TRUE(browser.opened.empty());
  }
  FakeAuthServer server;
  server.metadata.erase("registration_endpoint");
  FakeBrowser browser;
  auto flow = makeFlow(server, browser);
  auto record = flow.signIn(401, "");
  ASSERT_FALSE(record.has_value());
  EXPECT_EQ(record.error().code, ErrorCode::kInvalidConfig);
  EXPECT_THAT(record.error().message, HasSubstr("registers no clients itself"));
}

TEST(OAuthFlowTokenTest, ConfidentialClientUsesBasicWithFormEncodedParts) {
  FakeAuthServer server;
  server.registration = jsonReply(201, {{"client_id", "id:with:colons"},
                                        {"client_secret", "p@ss w%rd+"},
                                        {"token_endpoint_auth_method", "client_secret_basic"}});
  FakeBrowser browser;
  auto flow = makeFlow(server, browser);
  auto record = flow.signIn(401, "");
  ASSERT_TRUE(record.has_value()) << record.error().message;
  auto tokens = server.tokenRequests();
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_EQ(tokens[0].header("Authorization"),
            "Basic " + base64("id%3Awith%3Acolons:p%40ss%20w%25rd%2B"));
  EXPECT_FALSE(tokens[0].form().contains("client_secret"));
  EXPECT_FALSE(tokens[0].form().contains("client_id"));
  EXPECT_EQ(record->authMethod, "client_secret_basic");
  EXPECT_EQ(record->clientSecret, "p@ss w%rd+");
}

TEST(OAuthFlowTokenTest, SecretWithoutAMethodIsNotSentAsNone) {
  // A registration that grants "none" but hands out a secret: the secret must not appear in
  // the form, which only client_secret_post allows.
  FakeAuthServer server;
  server.registration = jsonReply(201, {{"client_id", "client-1"},
                                        {"client_secret", kClientSecret},
                                        {"token_endpoint_auth_method", "none"}});
  FakeBrowser browser;
  auto flow = makeFlow(server, browser);
  auto record = flow.signIn(401, "");
  ASSERT_TRUE(record.has_value()) << record.error().message;
  auto tokens = server.tokenRequests();
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_THAT(tokens[0].body, Not(HasSubstr(kClientSecret)));
  EXPECT_EQ(tokens[0].header("Authorization"), "");
}

OAuthRecord storedRecord() {
  OAuthRecord record;
  record.accessToken = "old-access";
  record.refreshToken = kRefreshToken;
  record.issuer = kIssuer;
  record.tokenEndpoint = "https://as.example/token";
  record.resource = kServerUrl;
  record.clientId = "client-1";
  record.authMethod = "none";
  record.scope = "mcp:read";
  record.forUrl = kServerUrl;
  return record;
}

TEST(OAuthFlowTokenTest, RefreshSendsTheRefreshTokenAndKeepsItWhenNoneComesBack) {
  FakeAuthServer server;
  server.token = jsonReply(200, {{"access_token", "new-access"}, {"expires_in", 120}});
  FakeBrowser browser;
  auto flow = makeFlow(server, browser);
  auto renewed = flow.refresh(storedRecord());
  ASSERT_TRUE(renewed.has_value()) << renewed.error().message;
  EXPECT_EQ(renewed->accessToken, "new-access");
  EXPECT_EQ(renewed->refreshToken, kRefreshToken);
  EXPECT_EQ(renewed->scope, "mcp:read");
  EXPECT_EQ(renewed->issuer, kIssuer);
  EXPECT_EQ(renewed->resource, kServerUrl);
  EXPECT_EQ(renewed->forUrl, kServerUrl);
  auto tokens = server.tokenRequests();
  ASSERT_EQ(tokens.size(), 1u);
  auto form = tokens[0].form();
  EXPECT_EQ(form["grant_type"], "refresh_token");
  EXPECT_EQ(form["refresh_token"], kRefreshToken);
  EXPECT_EQ(form["resource"], kServerUrl);
  EXPECT_EQ(form["client_id"], "client-1");
  EXPECT_TRUE(browser.opened.empty());
}

TEST(OAuthFlowTokenTest, RefreshRefusedNamesTheErrorButNotTheToken) {
  FakeAuthServer server;
  server.token = jsonReply(400, {{"error", "invalid_grant"}});
  FakeBrowser browser;
  auto flow = makeFlow(server, browser);
  auto renewed = flow.refresh(storedRecord());
  ASSERT_FALSE(renewed.has_value());
  EXPECT_EQ(renewed.error().code, ErrorCode::kRefused);
  EXPECT_EQ(renewed.error().message, "the token endpoint refused the refresh token: invalid_grant");
  expectNoSecrets(renewed.error().message, {"old-access"});
}

TEST(OAuthFlowTokenTest, RefreshToAPlainHttpEndpointIsNeverSent) {
  for (const char* endpoint :
       {"http://as.example/token", "http://127.0.0.1.nip.io/token", "javascript:alert(1)", ""}) {
    FakeAuthServer server;
    FakeBrowser browser;
    auto flow = makeFlow(server, browser);
    OAuthRecord record = storedRecord();
    record.tokenEndpoint = endpoint;
    auto renewed = flow.refresh(record);
    ASSERT_FALSE(renewed.has_value()) << endpoint;
    EXPECT_EQ(renewed.error().code, ErrorCode::kRefused) << endpoint;
    EXPECT_THAT(renewed.error().message, HasSubstr("the token_endpoint of \"https://as.example\""))
        << endpoint;
    EXPECT_TRUE(server.requests().empty()) << endpoint;
    expectNoSecrets(renewed.error().message);
  }
}

TEST(OAuthFlowTokenTest, RefreshWithoutARefreshTokenSendsNothing) {
  FakeAuthServer server;
  FakeBrowser browser;
  auto flow = makeFlow(server, browser);
  OAuthRecord record = storedRecord();
  record.refreshToken.clear();
  auto renewed = flow.refresh(record);
  ASSERT_FALSE(renewed.has_value());
  EXPECT_EQ(renewed.error().code, ErrorCode::kRefused);
  EXPECT_EQ(renewed.error().message, "the sign-in gave no refresh token");
  EXPECT_TRUE(server.requests().empty());
}

TEST(OAuthFlowTokenTest, RefreshWithClientSecretPost) {
  FakeAuthServer server;
  FakeBrowser browser;
  auto flow = makeFlow(server, browser);
  OAuthRecord record = storedRecord();
  record.clientSecret = kClientSecret;
  record.authMethod = "client_secret_post";
  ASSERT_TRUE(flow.refresh(record).has_value());
  auto tokens = server.tokenRequests();
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_EQ(tokens[0].form()["client_secret"], kClientSecret);
  EXPECT_EQ(tokens[0].form()["client_id"], "client-1");
  EXPECT_EQ(tokens[0].header("Authorization"), "");
}

// Regression: a scope with a control character, a tab or a byte that is not UTF-8 made kaja
// write a secrets file it then refused to read, which stopped every kaja command.
TEST(OAuthFlowTokenTest, HostileScopesNeverReachTheRecord) {
  // As a server writes them: JSON escapes for control characters, and one raw byte that is
  // not UTF-8.
  for (const std::string& scope :
       std::vector<std::string>{R"(read\u001b[31mRED\nfoo)", R"(read\tadmin)", R"(read\u007fadmin)",
                                std::string("read \xe9x"), R"(read \"quoted\" back\\slash)"}) {
    FakeAuthServer server;
    auto record = signInWithToken(
        server,
        net::HttpReply{
            200, {}, R"({"access_token":"at-1","token_type":"Bearer","scope":")" + scope + "\"}"});
    if (!record) {
      // Text that is not JSON is refused as a whole answer.
      EXPECT_EQ(record.error().code, ErrorCode::kProtocol) << scope;
      continue;
    }
    EXPECT_TRUE(checkStorable(*record).has_value()) << scope;
    for (const char c : record->scope) {
      EXPECT_TRUE((c >= 0x21 && c <= 0x7e && c != '"' && c != '\\') || c == ' ')
          << "scope " << record->scope << " from " << scope;
    }
  }
}

// Regression: a secret given through oauth.clientSecretEnv was written to the secrets file.
TEST(OAuthFlowTokenTest, ASecretFromTheEnvironmentIsNeverStoredButStillRefreshes) {
  FakeAuthServer server;
  server.metadata["token_endpoint_auth_methods_supported"] = Json::array({"client_secret_basic"});
  FakeBrowser browser;
  ClientSettings settings = fastSettings();
  settings.clientId = "pre-registered";
  settings.clientSecret = "ENV-SECRET-42";
  auto flow = makeFlow(server, browser, settings);
  auto record = flow.signIn(401, "");
  browser.join();
  ASSERT_TRUE(record.has_value()) << record.error().message;
  EXPECT_EQ(record->clientId, "pre-registered");
  EXPECT_TRUE(record->clientSecret.empty()) << "the environment's secret went into the record";
  auto renewed = flow.refresh(*record);
  ASSERT_TRUE(renewed.has_value()) << renewed.error().message;
  EXPECT_TRUE(renewed->clientSecret.empty());
  const auto requests = server.tokenRequests();
  ASSERT_EQ(requests.size(), 2U);
  // Both the code and the refresh were sent with the environment's secret (Basic auth).
  for (const auto& request : requests) {
    bool basic = false;
    for (const auto& [name, value] : request.headers) {
      basic = basic || (name == "Authorization" && value.starts_with("Basic "));
    }
    EXPECT_TRUE(basic) << request.body;
  }
}

}  // namespace
}  // namespace kaja::core::auth
