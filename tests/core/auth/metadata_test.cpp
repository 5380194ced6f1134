#include "core/auth/metadata.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace kaja::core::auth {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

net::Url url(const std::string& text) {
  auto parsed = net::parseUrl(text);
  EXPECT_TRUE(parsed.has_value()) << text;
  return parsed.value_or(net::Url{});
}

TEST(AuthMetadataTest, ResourceCoversTheServerAndItsParents) {
  const auto server = url("https://mcp.example/mcp");
  EXPECT_TRUE(resourceCovers("https://mcp.example/mcp", server));
  EXPECT_TRUE(resourceCovers("https://mcp.example/mcp/", server));
  EXPECT_TRUE(resourceCovers("https://mcp.example", server));
  EXPECT_TRUE(resourceCovers("https://mcp.example/", server));
  EXPECT_TRUE(resourceCovers("https://MCP.example/mcp", server)) << "hosts are case-insensitive";
  EXPECT_TRUE(resourceCovers("https://mcp.example:443/mcp", server)) << "the default port";
  EXPECT_TRUE(resourceCovers("https://mcp.example/a/", url("https://mcp.example/a/b/mcp")));
}

TEST(AuthMetadataTest, ResourceOfAnotherServerIsNotCovered) {
  const auto server = url("https://mcp.example/mcp");
  for (const char* resource : {
           "https://evil.example/mcp",              // another origin
           "https://mcp.example.evil/mcp",          // a suffix trick on the host
           "https://evil.mcp.example/mcp",          // a subdomain
           "https://mcp.example/mcp2",              // a sibling path
           "https://mcp.example/m",                 // a prefix of the path, not on a '/'
           "https://mcp.example/mc",                //
           "https://mcp.example/mcp/child",         // a child is narrower than the server
           "https://mcp.example/MCP",               // paths are case-sensitive
           "https://mcp.example/mcp?x=1",           // a query
           "https://mcp.example/mcp?",              // an empty query
           "https://mcp.example/mcp#frag",          // a fragment
           "https://mcp.example/#",                 //
           "https://a@mcp.example/mcp",             // userinfo
           "https://mcp.example@evil.example/mcp",  // userinfo that names the server
           "http://mcp.example/mcp",                // another scheme
           "wss://mcp.example/mcp",                 //
           "https://mcp.example:8443/mcp",          // another port
           "//mcp.example/mcp",                     // not absolute
           "/mcp",                                  //
           "",                                      //
           "mcp.example/mcp",                       //
       }) {
    EXPECT_FALSE(resourceCovers(resource, server)) << resource;
  }
}

TEST(AuthMetadataTest, ResourcePrefixTrickOnAServerWithAShortPath) {
  EXPECT_FALSE(resourceCovers("https://mcp.example/mcp", url("https://mcp.example/m")));
  EXPECT_FALSE(resourceCovers("https://mcp.example/mcp", url("https://mcp.example/mcp2")));
  EXPECT_FALSE(resourceCovers("https://mcp.example/mcp/", url("https://mcp.example/mcp2/x")));
  EXPECT_TRUE(resourceCovers("https://mcp.example/mcp", url("https://mcp.example/mcp/x")));
}

TEST(AuthMetadataTest, ResourceWithPercentEncodedPathIsNotTheServer) {
  // "/%6Dcp" decodes to "/mcp"; kaja compares what the server wrote, so it does not match.
  EXPECT_FALSE(resourceCovers("https://mcp.example/%6Dcp", url("https://mcp.example/mcp")));
  EXPECT_FALSE(
      resourceCovers("https://mcp.example/mcp%2F..%2Fadmin", url("https://mcp.example/mcp")));
}

TEST(AuthMetadataTest, LoopbackHttpEndpointsAreAllowed) {
  for (const char* endpoint :
       {"http://127.0.0.1:8080/token", "http://127.0.0.2/token", "http://[::1]:9000/token",
        "http://localhost:3000/token", "http://LOCALHOST/token", "https://as.example/token",
        "https://as.example:8443/oauth/token?x=1"}) {
    auto checked = checkEndpoint(endpoint, "token_endpoint", "https://as.example");
    EXPECT_TRUE(checked.has_value())
        << endpoint << ": " << (checked ? "" : checked.error().message);
  }
}

TEST(AuthMetadataTest, PlainHttpOnAnotherHostIsRefused) {
  for (const char* endpoint :
       {"http://example.com/token", "http://127.0.0.1.nip.io/token", "http://localhost.evil.com/x",
        "http://10.0.0.1/token", "http://192.168.1.1/token", "http://[fe80::1]/token",
        "http://0.0.0.0/token", "http://as.example:443/token", "HTTP://example.com/token"}) {
    auto checked = checkEndpoint(endpoint, "token_endpoint", "https://as.example");
    ASSERT_FALSE(checked.has_value()) << endpoint;
    EXPECT_EQ(checked.error().code, ErrorCode::kRefused) << endpoint;
    EXPECT_THAT(checked.error().message, HasSubstr("the token_endpoint of \"https://as.example\""))
        << endpoint;
    EXPECT_THAT(checked.error().message, HasSubstr("is plain http")) << endpoint;
    EXPECT_THAT(checked.error().message, HasSubstr("only over https")) << endpoint;
  }
}

TEST(AuthMetadataTest, NonHttpSchemesAreRefused) {
  for (const char* endpoint :
       {"javascript:alert(1)", "file:///etc/passwd", "data:text/html,x", "ftp://as.example/token",
        "/token", "", "https://", "as.example/token", "https://user:pw@as.example/token"}) {
    auto checked = checkEndpoint(endpoint, "authorization_endpoint", "https://as.example");
    ASSERT_FALSE(checked.has_value()) << endpoint;
    EXPECT_EQ(checked.error().code, ErrorCode::kRefused) << endpoint;
    EXPECT_THAT(checked.error().message,
                HasSubstr("the authorization_endpoint of \"https://as.example\" is not an http(s) "
                          "URL"))
        << endpoint;
  }
}

TEST(AuthMetadataTest, EndpointMessageEscapesAHostileIssuer) {
  auto checked = checkEndpoint("http://evil.example/", "token_endpoint",
                               "https://as.example/\x1b]8;;evil\x07\nX");
  ASSERT_FALSE(checked.has_value());
  EXPECT_THAT(checked.error().message, Not(HasSubstr("\x1b")));
  EXPECT_THAT(checked.error().message, Not(HasSubstr("\n")));
}

TEST(AuthMetadataTest, IsLoopbackUrl) {
  EXPECT_TRUE(isLoopbackUrl(url("http://127.0.0.1/")));
  EXPECT_TRUE(isLoopbackUrl(url("http://127.255.255.254/")));
  EXPECT_TRUE(isLoopbackUrl(url("http://[::1]/")));
  EXPECT_TRUE(isLoopbackUrl(url("http://localhost/")));
  EXPECT_FALSE(isLoopbackUrl(url("http://127.0.0.1.nip.io/")));
  EXPECT_FALSE(isLoopbackUrl(url("http://localhost.example/")));
  EXPECT_FALSE(isLoopbackUrl(url("http://128.0.0.1/")));
  EXPECT_FALSE(isLoopbackUrl(url("http://[::2]/")));
}

TEST(AuthMetadataTest, ServerMetadataParses) {
  auto parsed = parseServerMetadata(R"({
    "issuer": "https://as.example",
    "authorization_endpoint": "https://as.example/authorize",
    "token_endpoint": "https://as.example/token",
    "registration_endpoint": "https://as.example/register",
    "scopes_supported": ["a", 5, "b"],
    "code_challenge_methods_supported": ["plain", "S256"],
    "token_endpoint_auth_methods_supported": ["none"],
    "client_id_metadata_document_supported": true,
    "authorization_response_iss_parameter_supported": "true"
  })",
                                    "https://as.example/.well-known/oauth-authorization-server");
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  EXPECT_EQ(parsed->issuer, "https://as.example");
  EXPECT_EQ(parsed->scopesSupported, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(parsed->codeChallengeMethods, (std::vector<std::string>{"plain", "S256"}));
  EXPECT_TRUE(parsed->clientIdMetadataDocumentSupported);
  EXPECT_FALSE(parsed->issParameterSupported) << "only JSON true counts";
}

TEST(AuthMetadataTest, ServerMetadataWithMissingOrWrongFieldsIsRefused) {
  const std::string from = "https://as.example/.well-known/oauth-authorization-server";
  struct Case {
    const char* body;
    const char* sentence;
  };
  for (const Case& c : {
           Case{R"({"authorization_endpoint":"https://a/x","token_endpoint":"https://a/t"})",
                "whose issuer is not a URL"},
           Case{R"({"issuer":"","authorization_endpoint":"https://a/x","token_endpoint":"t"})",
                "whose issuer is not a URL"},
           Case{R"({"issuer":["https://a"],"authorization_endpoint":"x","token_endpoint":"t"})",
                "whose issuer is not a URL"},
           Case{R"({"issuer":"https://a","token_endpoint":"https://a/t"})",
                "whose authorization_endpoint is not a URL"},
           Case{R"({"issuer":"https://a","authorization_endpoint":"https://a/x"})",
                "whose token_endpoint is not a URL"},
           Case{R"({"issuer":"https://a","authorization_endpoint":"x","token_endpoint":"t",
                    "registration_endpoint":7})",
                "whose registration_endpoint is not a URL"},
           Case{R"({"issuer":"https://a","authorization_endpoint":"x","token_endpoint":"t",
                    "code_challenge_methods_supported":"S256"})",
                "whose code_challenge_methods_supported is not a list of strings"},
           Case{R"([1,2])", "did not send authorization server metadata as a JSON object"},
           Case{R"(<html>)", "did not send authorization server metadata as a JSON object"},
           Case{"", "did not send authorization server metadata as a JSON object"},
           Case{R"({"issuer":"https://a",)",
                "did not send authorization server metadata as a JSON object"},
       }) {
    auto parsed = parseServerMetadata(c.body, from);
    ASSERT_FALSE(parsed.has_value()) << c.body;
    EXPECT_EQ(parsed.error().code, ErrorCode::kProtocol) << c.body;
    EXPECT_THAT(parsed.error().message, HasSubstr(from)) << c.body;
    EXPECT_THAT(parsed.error().message, HasSubstr(c.sentence)) << c.body;
  }
}

TEST(AuthMetadataTest, ResourceMetadataWithMissingOrWrongFieldsIsRefused) {
  const std::string from = "https://mcp.example/.well-known/oauth-protected-resource";
  for (const auto& [body, sentence] : std::vector<std::pair<std::string, std::string>>{
           {R"({"authorization_servers":["https://as"]})", "whose resource is not a URL"},
           {R"({"resource":"","authorization_servers":["https://as"]})",
            "whose resource is not a URL"},
           {R"({"resource":{"u":1}})", "whose resource is not a URL"},
           {R"({"resource":"https://m","authorization_servers":"https://as"})",
            "whose authorization_servers is not a list of URLs"},
           {R"({"resource":"https://m","scopes_supported":"a b"})",
            "whose scopes_supported is not a list of scopes"},
           {R"("https://m")", "did not send protected resource metadata as a JSON object"},
       }) {
    auto parsed = parseResourceMetadata(body, from);
    ASSERT_FALSE(parsed.has_value()) << body;
    EXPECT_EQ(parsed.error().code, ErrorCode::kProtocol) << body;
    EXPECT_THAT(parsed.error().message, HasSubstr(sentence)) << body;
  }
}

TEST(AuthMetadataTest, DocumentsLargerThanTheLimitAreNotRead) {
  const std::string server =
      R"({"issuer":"https://a","authorization_endpoint":"https://a/x","token_endpoint":"https://a/t"})";
  ASSERT_TRUE(parseServerMetadata(server, "x").has_value());
  // Exactly at the limit is read; one byte more is not.
  std::string atLimit = server + std::string(kMaxMetadataBytes - server.size(), ' ');
  EXPECT_TRUE(parseServerMetadata(atLimit, "x").has_value());
  auto over = parseServerMetadata(atLimit + " ", "https://as.example/.well-known/x");
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(over.error().message,
            "https://as.example/.well-known/x sent authorization server metadata larger than "
            "256 KB; kaja does not read it");

  const std::string big(10 * 1024 * 1024, 'x');
  auto resource = parseResourceMetadata(big, "https://mcp.example/prm");
  ASSERT_FALSE(resource.has_value());
  EXPECT_EQ(resource.error().message,
            "https://mcp.example/prm sent protected resource metadata larger than 256 KB; kaja "
            "does not read it");
}

TEST(AuthMetadataTest, DeeplyNestedJsonDoesNotCrash) {
  std::string nested = "{\"resource\":\"https://m\",\"x\":" + std::string(100000, '[') +
                       std::string(100000, ']') + "}";
  auto parsed = parseResourceMetadata(nested, "https://m/prm");
  // Under the limit; either read or refused with one sentence, but never a crash.
  if (!parsed) {
    EXPECT_EQ(parsed.error().code, ErrorCode::kProtocol);
  }
}

}  // namespace
}  // namespace kaja::core::auth
