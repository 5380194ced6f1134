// The private_key_jwt assertion: a JWT whose header, claims and signature an authorization
// server verifies with the client's public key (checked here with OpenSSL, as a server would).
#include "core/auth/client_assertion.h"

#include <gtest/gtest.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kaja::testing {
namespace {

using nlohmann::json;

struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

Key generate(const char* type) {
  Key key(std::string(type) == "EC" ? EVP_EC_gen("P-256") : EVP_RSA_gen(2048));
  return key;
}

std::string privatePem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<std::size_t>(size));
  BIO_free(bio);
  return pem;
}

std::string base64UrlDecode(std::string text) {
  for (char& c : text) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  while (text.size() % 4 != 0) text += '=';
  std::string out(text.size(), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  out.resize(static_cast<std::size_t>(n) - std::count(text.begin(), text.end(), '='));
  return out;
}

struct Jwt {
  json header;
  json claims;
  std::string signingInput;
  std::string signature;
};

Jwt split(const std::string& token) {
  const auto first = token.find('.');
  const auto second = token.find('.', first + 1);
  Jwt jwt;
  jwt.header = json::parse(base64UrlDecode(token.substr(0, first)), nullptr, false);
  jwt.claims =
      json::parse(base64UrlDecode(token.substr(first + 1, second - first - 1)), nullptr, false);
  jwt.signingInput = token.substr(0, second);
  jwt.signature = base64UrlDecode(token.substr(second + 1));
  return jwt;
}

bool verifies(EVP_PKEY* key, const Jwt& jwt, bool ecdsa) {
  std::string der = jwt.signature;
  if (ecdsa) {
    // JOSE's r||s back to the DER OpenSSL verifies.
    if (jwt.signature.size() != 64) return false;
    ECDSA_SIG* sig = ECDSA_SIG_new();
    const auto* bytes = reinterpret_cast<const unsigned char*>(jwt.signature.data());
    ECDSA_SIG_set0(sig, BN_bin2bn(bytes, 32, nullptr), BN_bin2bn(bytes + 32, 32, nullptr));
    unsigned char* out = nullptr;
    const int length = i2d_ECDSA_SIG(sig, &out);
    der.assign(reinterpret_cast<char*>(out), static_cast<std::size_t>(length));
    OPENSSL_free(out);
    ECDSA_SIG_free(sig);
  }
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  const bool ok =
      EVP_DigestVerifyInit(context, nullptr, EVP_sha256(), nullptr, key) == 1 &&
      EVP_DigestVerify(context, reinterpret_cast<const unsigned char*>(der.data()), der.size(),
                       reinterpret_cast<const unsigned char*>(jwt.signingInput.data()),
                       jwt.signingInput.size()) == 1;
  EVP_MD_CTX_free(context);
  return ok;
}

TEST(ClientAssertionTest, Es256VerifiesWithThePublicKeyAndCarriesTheClaims) {
  Key key = generate("EC");
  ASSERT_TRUE(key);
  auto token = core::auth::makeClientAssertion(privatePem(key.get()), "ES256", "client-1",
                                               "https://as.example.com");
  ASSERT_TRUE(token) << token.error().message;
  const Jwt jwt = split(*token);
  EXPECT_EQ(jwt.header.value("alg", ""), "ES256");
  EXPECT_EQ(jwt.claims.value("iss", ""), "client-1");
  EXPECT_EQ(jwt.claims.value("sub", ""), "client-1");
  EXPECT_EQ(jwt.claims.value("aud", ""), "https://as.example.com");
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  EXPECT_LE(std::abs(jwt.claims.value("iat", std::int64_t{0}) - now), 5);
  EXPECT_EQ(jwt.claims.value("exp", std::int64_t{0}) - jwt.claims.value("iat", std::int64_t{0}),
            300);
  EXPECT_GE(jwt.claims.value("jti", "").size(), 16U);
  EXPECT_TRUE(verifies(key.get(), jwt, true));
  // Another key does not verify it, and a changed claim breaks the signature.
  Key other = generate("EC");
  EXPECT_FALSE(verifies(other.get(), jwt, true));
  Jwt tampered = jwt;
  tampered.signingInput.back() ^= 1;
  EXPECT_FALSE(verifies(key.get(), tampered, true));
}

TEST(ClientAssertionTest, EachAssertionHasItsOwnJti) {
  Key key = generate("EC");
  const std::string pem = privatePem(key.get());
  auto a = core::auth::makeClientAssertion(pem, "ES256", "c", "https://as");
  auto b = core::auth::makeClientAssertion(pem, "ES256", "c", "https://as");
  ASSERT_TRUE(a && b);
  EXPECT_NE(split(*a).claims.value("jti", ""), split(*b).claims.value("jti", ""));
}

TEST(ClientAssertionTest, Rs256VerifiesToo) {
  Key key = generate("RSA");
  ASSERT_TRUE(key);
  auto token = core::auth::makeClientAssertion(privatePem(key.get()), "RS256", "c", "https://as");
  ASSERT_TRUE(token) << token.error().message;
  EXPECT_TRUE(verifies(key.get(), split(*token), false));
}

TEST(ClientAssertionTest, RefusesKeysThatDoNotFitAndNeverQuotesThem) {
  Key rsa = generate("RSA");
  const std::string pem = privatePem(rsa.get());
  auto wrongAlgorithm = core::auth::makeClientAssertion(pem, "ES256", "c", "https://as");
  ASSERT_FALSE(wrongAlgorithm);
  EXPECT_EQ(wrongAlgorithm.error().code, core::ErrorCode::kInvalidConfig);
  EXPECT_NE(wrongAlgorithm.error().message.find("ES256"), std::string::npos);
  auto garbage = core::auth::makeClientAssertion("-----BEGIN PRIVATE KEY-----\nnot a key\n",
                                                 "ES256", "c", "https://as");
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().message.find("not a key"), std::string::npos);
  auto none = core::auth::makeClientAssertion(pem, "none", "c", "https://as");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("none"), std::string::npos);
  EXPECT_EQ(none.error().message.find("PRIVATE"), std::string::npos);
}

}  // namespace
}  // namespace kaja::testing
