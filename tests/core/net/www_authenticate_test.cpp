#include "core/net/www_authenticate.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kaja::core::net {
namespace {

constexpr const char* kPrm = "https://mcp.example/.well-known/oauth-protected-resource/mcp";

TEST(WwwAuthenticateTest, EmptyHeaderHasNoChallenge) {
  EXPECT_TRUE(parseChallenges("").empty());
  EXPECT_TRUE(parseChallenges("   ").empty());
  EXPECT_TRUE(parseChallenges(" , ,, ").empty());
  EXPECT_FALSE(bearerChallenge("").has_value());
}

TEST(WwwAuthenticateTest, BearerAfterBasicWithParameters) {
  const std::string header = std::string("Basic realm=\"site\", Bearer resource_metadata=\"") +
                             kPrm + "\", scope=\"files:read files:write\"";
  auto challenges = parseChallenges(header);
  ASSERT_EQ(challenges.size(), 2u);
  EXPECT_EQ(challenges[0].scheme, "basic");
  EXPECT_EQ(challenges[0].param("realm"), "site");
  EXPECT_EQ(challenges[1].scheme, "bearer");
  auto bearer = bearerChallenge(header);
  ASSERT_TRUE(bearer.has_value());
  EXPECT_EQ(bearer->resourceMetadata, kPrm);
  EXPECT_EQ(bearer->scope, "files:read files:write");
}

// The header promises a token68 is skipped. Base64 padding ("==") is the common shape of one.
TEST(WwwAuthenticateTest, BearerAfterBasicToken68WithPadding) {
  const std::string header =
      std::string("Basic dXNlcg==, Bearer resource_metadata=\"") + kPrm + "\", error=\"x\"";
  auto bearer = bearerChallenge(header);
  ASSERT_TRUE(bearer.has_value()) << "the Bearer challenge after a token68 was lost";
  EXPECT_EQ(bearer->resourceMetadata, kPrm);
  EXPECT_EQ(bearer->error, "x");
}

TEST(WwwAuthenticateTest, BearerAfterToken68WithOnePadOrNone) {
  for (const std::string token68 : {"dXNlcjE=", "dXNlcjEy", "abc-._~+"}) {
    const std::string header = "Negotiate " + token68 + ", Bearer scope=\"a\"";
    auto bearer = bearerChallenge(header);
    ASSERT_TRUE(bearer.has_value()) << header;
    EXPECT_EQ(bearer->scope, "a") << header;
  }
}

TEST(WwwAuthenticateTest, BearerAfterToken68WithSlash) {
  // token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
  const std::string header = "Negotiate YII/ab+c, Bearer scope=\"a\"";
  auto bearer = bearerChallenge(header);
  ASSERT_TRUE(bearer.has_value()) << header;
  EXPECT_EQ(bearer->scope, "a");
}

TEST(WwwAuthenticateTest, UnterminatedQuoteEndsTheParseWithoutInventingParameters) {
  // The rest after the open quote is one unterminated value: nothing in it is read.
  const std::string header =
      std::string("Bearer scope=\"abc, resource_metadata=\"") + "https://evil.example/prm";
  auto bearer = bearerChallenge(header);
  ASSERT_TRUE(bearer.has_value());
  // scope ends at the second quote; what follows is not a parameter of kaja's choosing.
  EXPECT_EQ(bearer->scope, "abc, resource_metadata=");
  EXPECT_EQ(bearer->resourceMetadata, "");

  auto only = bearerChallenge("Bearer error=\"invalid_token, scope=\"x");
  ASSERT_TRUE(only.has_value());
  EXPECT_EQ(only->error, "invalid_token, scope=");
  EXPECT_EQ(only->scope, "");

  auto open = bearerChallenge("Bearer resource_metadata=\"https://mcp.example/prm");
  ASSERT_TRUE(open.has_value());
  EXPECT_EQ(open->resourceMetadata, "") << "an unterminated value must not be used";
}

TEST(WwwAuthenticateTest, QuotedBasicRealmCannotSmuggleABearerChallenge) {
  // Everything up to the closing quote is Basic's realm, even text that looks like Bearer.
  const std::string header = "Basic realm=\"x, Bearer resource_metadata=\\\"https://evil/\\\"\"";
  auto challenges = parseChallenges(header);
  ASSERT_EQ(challenges.size(), 1u);
  EXPECT_EQ(challenges[0].param("realm"), "x, Bearer resource_metadata=\"https://evil/\"");
  EXPECT_FALSE(bearerChallenge(header).has_value());
}

TEST(WwwAuthenticateTest, EscapedQuotesAndBackslashesAreUndone) {
  auto bearer =
      bearerChallenge(R"(Bearer error="invalid_token", error_description="say \"hi\" \\ and \q")");
  ASSERT_TRUE(bearer.has_value());
  EXPECT_EQ(bearer->error, "invalid_token");
  EXPECT_EQ(bearer->errorDescription, "say \"hi\" \\ and q");
}

TEST(WwwAuthenticateTest, RepeatedParameterKeepsTheFirst) {
  auto bearer = bearerChallenge(
      "Bearer resource_metadata=\"https://mcp.example/a\", "
      "resource_metadata=\"https://evil.example/b\", RESOURCE_METADATA=\"https://evil/c\"");
  ASSERT_TRUE(bearer.has_value());
  EXPECT_EQ(bearer->resourceMetadata, "https://mcp.example/a");
}

TEST(WwwAuthenticateTest, SchemeAndNamesAreCaseInsensitiveValuesAreNot) {
  auto bearer = bearerChallenge("BEARER Scope=\"Files:Read\", ERROR=Insufficient_Scope");
  ASSERT_TRUE(bearer.has_value());
  EXPECT_EQ(bearer->scope, "Files:Read");
  EXPECT_EQ(bearer->error, "Insufficient_Scope");
  auto challenges = parseChallenges("bEaReR REALM=r");
  ASSERT_EQ(challenges.size(), 1u);
  EXPECT_EQ(challenges[0].scheme, "bearer");
  EXPECT_EQ(challenges[0].param("realm"), "r");
}

TEST(WwwAuthenticateTest, CommasInsideQuotesDoNotSplit) {
  auto bearer =
      bearerChallenge("Bearer scope=\"a,b, c\", error=\"insufficient_scope\", realm=\"x,y\"");
  ASSERT_TRUE(bearer.has_value());
  EXPECT_EQ(bearer->scope, "a,b, c");
  EXPECT_EQ(bearer->error, "insufficient_scope");
}

TEST(WwwAuthenticateTest, WhitespaceAroundEqualsAndCommas) {
  auto bearer = bearerChallenge("  Bearer \t scope = \"a b\" ,  error =insufficient_scope  ");
  ASSERT_TRUE(bearer.has_value());
  EXPECT_EQ(bearer->scope, "a b");
  EXPECT_EQ(bearer->error, "insufficient_scope");
}

TEST(WwwAuthenticateTest, BareBearerHasEmptyFields) {
  for (const char* header : {"Bearer", "Bearer ", "Bearer,", ", Bearer"}) {
    auto bearer = bearerChallenge(header);
    ASSERT_TRUE(bearer.has_value()) << header;
    EXPECT_EQ(bearer->resourceMetadata, "") << header;
    EXPECT_EQ(bearer->scope, "") << header;
  }
  EXPECT_FALSE(bearerChallenge("Basic realm=x").has_value());
  EXPECT_FALSE(bearerChallenge("Bearerx scope=a").has_value());
  EXPECT_FALSE(bearerChallenge("=Bearer scope=a").has_value());
}

TEST(WwwAuthenticateTest, HundredKilobyteHeaderIsCutAtTheLimit) {
  // A Bearer challenge past kMaxChallengeBytes is not read.
  std::string late = "Basic realm=\"" + std::string(100 * 1024, 'a') + "\", Bearer scope=\"x\"";
  EXPECT_FALSE(bearerChallenge(late).has_value());
  auto challenges = parseChallenges(late);
  ASSERT_EQ(challenges.size(), 1u);
  EXPECT_EQ(challenges[0].scheme, "basic");
  EXPECT_EQ(challenges[0].param("realm"), "") << "a value cut by the limit is unterminated";

  // A Bearer challenge at the start keeps what precedes the cut, and drops the cut value.
  std::string early = std::string("Bearer resource_metadata=\"") + kPrm +
                      "\", error_description=\"" + std::string(100 * 1024, 'b') + "\"";
  auto bearer = bearerChallenge(early);
  ASSERT_TRUE(bearer.has_value());
  EXPECT_EQ(bearer->resourceMetadata, kPrm);
  EXPECT_EQ(bearer->errorDescription, "");

  // Many challenges: parsing stays linear and bounded.
  std::string many;
  for (int i = 0; i < 20000; ++i) many += "Basic realm=r, ";
  EXPECT_LE(parseChallenges(many).size(), kMaxChallengeBytes / 14 + 1);
}

TEST(WwwAuthenticateTest, GarbageNeverThrowsOrLoops) {
  const std::vector<std::string> inputs = {"\"",
                                           "\\",
                                           "=",
                                           "==,==",
                                           "Bearer =",
                                           "Bearer a=",
                                           "Bearer a=\"",
                                           "Bearer a=\"\\",
                                           "Bearer a=b=c",
                                           "Bearer ,,,a=b,,,",
                                           "Bearer a b c",
                                           "\x01\x02",
                                           "Bearer \r\n scope=x",
                                           std::string("Bearer\0scope=x", 14)};
  for (const auto& input : inputs) {
    auto challenges = parseChallenges(input);
    EXPECT_LE(challenges.size(), input.size()) << input;
  }
  auto trailing = bearerChallenge("Bearer a=\"\\");
  ASSERT_TRUE(trailing.has_value());
}

TEST(WwwAuthenticateTest, SplitScopesDropsRepeatsAndEmpties) {
  EXPECT_EQ(splitScopes(""), std::vector<std::string>{});
  EXPECT_EQ(splitScopes("   "), std::vector<std::string>{});
  EXPECT_EQ(splitScopes("a  b a b c  a"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(splitScopes(" read write "), (std::vector<std::string>{"read", "write"}));
  // Scopes are case-sensitive (RFC 6749 §3.3).
  EXPECT_EQ(splitScopes("Read read"), (std::vector<std::string>{"Read", "read"}));
  EXPECT_EQ(joinScopes(splitScopes("x y x")), "x y");
  EXPECT_EQ(joinScopes({}), "");
}

}  // namespace
}  // namespace kaja::core::net
