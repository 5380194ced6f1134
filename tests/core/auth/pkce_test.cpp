#include "core/auth/pkce.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace kaja::core::auth {
namespace {

bool isBase64UrlChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

TEST(PkceTest, Rfc7636AppendixBChallenge) {
  EXPECT_EQ(s256Challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
}

TEST(PkceTest, Rfc7636AppendixBVerifierFromItsOctets) {
  const unsigned char octets[] = {116, 24,  223, 180, 151, 153, 224, 37,  79,  250, 96,
                                  125, 216, 173, 187, 186, 22,  212, 37,  77,  105, 214,
                                  191, 240, 91,  88,  5,   88,  83,  132, 141, 121};
  EXPECT_EQ(base64Url(std::string_view(reinterpret_cast<const char*>(octets), sizeof octets)),
            "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
}

TEST(PkceTest, VerifierIs43Base64UrlCharactersAndFresh) {
  std::set<std::string> seen;
  for (int i = 0; i < 64; ++i) {
    auto pkce = makePkce();
    ASSERT_TRUE(pkce.has_value());
    ASSERT_EQ(pkce->verifier.size(), 43u) << pkce->verifier;
    for (const char c : pkce->verifier) EXPECT_TRUE(isBase64UrlChar(c)) << pkce->verifier;
    EXPECT_EQ(pkce->challenge, s256Challenge(pkce->verifier));
    EXPECT_EQ(pkce->challenge.size(), 43u);
    for (const char c : pkce->challenge) EXPECT_TRUE(isBase64UrlChar(c)) << pkce->challenge;
    EXPECT_NE(pkce->challenge, pkce->verifier) << "S256, not plain";
    EXPECT_TRUE(seen.insert(pkce->verifier).second) << "a verifier came twice";
  }
}

TEST(PkceTest, RandomTokenLengths) {
  for (std::size_t bytes : {1u, 2u, 3u, 16u, 24u, 32u, 33u}) {
    auto token = randomToken(bytes);
    ASSERT_TRUE(token.has_value());
    EXPECT_EQ(token->size(), (bytes * 4 + 2) / 3) << bytes;
    for (const char c : *token) EXPECT_TRUE(isBase64UrlChar(c)) << *token;
  }
}

TEST(PkceTest, Base64Rfc4648Vectors) {
  EXPECT_EQ(base64(""), "");
  EXPECT_EQ(base64("f"), "Zg==");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("foo"), "Zm9v");
  EXPECT_EQ(base64("foob"), "Zm9vYg==");
  EXPECT_EQ(base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
}

TEST(PkceTest, Base64UrlRfc4648VectorsWithoutPadding) {
  EXPECT_EQ(base64Url(""), "");
  EXPECT_EQ(base64Url("f"), "Zg");
  EXPECT_EQ(base64Url("fo"), "Zm8");
  EXPECT_EQ(base64Url("foo"), "Zm9v");
  EXPECT_EQ(base64Url("foob"), "Zm9vYg");
  EXPECT_EQ(base64Url("fooba"), "Zm9vYmE");
  EXPECT_EQ(base64Url("foobar"), "Zm9vYmFy");
}

TEST(PkceTest, Base64AlphabetsDifferOnlyInTheLastTwo) {
  const std::string high("\xfb\xff\xbf", 3);  // 111110 111111 111110 111111
  EXPECT_EQ(base64(high), "+/+/");
  EXPECT_EQ(base64Url(high), "-_-_");
  const std::string zeros("\0\0\0\0", 4);
  EXPECT_EQ(base64(zeros), "AAAAAA==");
  EXPECT_EQ(base64Url(zeros), "AAAAAA");
  // The client_secret_basic header of RFC 6749 §2.3.1's example.
  EXPECT_EQ(base64("s6BhdRkqt3:gX1fBat3bV"), "czZCaGRSa3F0MzpnWDFmQmF0M2JW");
}

TEST(PkceTest, ConstantTimeEquals) {
  EXPECT_TRUE(constantTimeEquals("", ""));
  EXPECT_TRUE(constantTimeEquals("state-123", "state-123"));
  EXPECT_FALSE(constantTimeEquals("state-123", "state-124"));
  EXPECT_FALSE(constantTimeEquals("state-123", "state-12"));
  EXPECT_FALSE(constantTimeEquals("", "x"));
  EXPECT_FALSE(constantTimeEquals(std::string("a\0b", 3), std::string("a\0c", 3)));
  EXPECT_FALSE(constantTimeEquals(std::string("a\0", 2), "a"));
}

}  // namespace
}  // namespace kaja::core::auth
