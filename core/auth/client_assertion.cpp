#include "core/auth/client_assertion.h"

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/auth/pkce.h"

namespace kaja::core::auth {
namespace {

struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct ContextFree {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};
struct SignatureFree {
  void operator()(ECDSA_SIG* signature) const { ECDSA_SIG_free(signature); }
};

Error keyError(const std::string& why) {
  return Error{ErrorCode::kInvalidConfig, "the client's private key " + why, {}, {}};
}

// ECDSA signs as DER; a JWS carries r and s as two 32-byte big-endian numbers (RFC 7518 §3.4).
Result<std::string> derToJose(const std::vector<unsigned char>& der) {
  const unsigned char* cursor = der.data();
  std::unique_ptr<ECDSA_SIG, SignatureFree> signature(
      d2i_ECDSA_SIG(nullptr, &cursor, static_cast<long>(der.size())));
  if (!signature) return std::unexpected(keyError("made a signature kaja cannot read"));
  const BIGNUM* r = nullptr;
  const BIGNUM* s = nullptr;
  ECDSA_SIG_get0(signature.get(), &r, &s);
  std::string out(64, '\0');
  if (BN_bn2binpad(r, reinterpret_cast<unsigned char*>(out.data()), 32) != 32 ||
      BN_bn2binpad(s, reinterpret_cast<unsigned char*>(out.data()) + 32, 32) != 32) {
    return std::unexpected(keyError("is not a P-256 key"));
  }
  return out;
}

}  // namespace

Result<std::string> makeClientAssertion(const std::string& privateKeyPem,
                                        const std::string& algorithm, const std::string& clientId,
                                        const std::string& audience) {
  if (algorithm != "ES256" && algorithm != "RS256") {
    return fail(ErrorCode::kInvalidConfig, "the signing algorithm " + algorithm +
                                               " is not one kaja signs with (ES256, RS256)");
  }
  std::unique_ptr<BIO, BioFree> bio(
      BIO_new_mem_buf(privateKeyPem.data(), static_cast<int>(privateKeyPem.size())));
  std::unique_ptr<EVP_PKEY, KeyFree> key(
      bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!key) return std::unexpected(keyError("is not a PEM private key"));
  const int type = EVP_PKEY_base_id(key.get());
  if ((algorithm == "ES256" && type != EVP_PKEY_EC) ||
      (algorithm == "RS256" && type != EVP_PKEY_RSA)) {
    return std::unexpected(keyError("does not fit " + algorithm));
  }
  auto jti = randomToken(16);
  if (!jti) return std::unexpected(jti.error());
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  const nlohmann::json header{{"alg", algorithm}, {"typ", "JWT"}};
  const nlohmann::json claims{{"iss", clientId}, {"sub", clientId},  {"aud", audience},
                              {"iat", now},      {"exp", now + 300}, {"jti", *jti}};
  const std::string signingInput = base64Url(header.dump()) + "." + base64Url(claims.dump());

  std::unique_ptr<EVP_MD_CTX, ContextFree> context(EVP_MD_CTX_new());
  std::size_t length = 0;
  if (!context ||
      EVP_DigestSignInit(context.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(context.get(), nullptr, &length,
                     reinterpret_cast<const unsigned char*>(signingInput.data()),
                     signingInput.size()) != 1) {
    return std::unexpected(keyError("cannot sign"));
  }
  std::vector<unsigned char> signature(length);
  if (EVP_DigestSign(context.get(), signature.data(), &length,
                     reinterpret_cast<const unsigned char*>(signingInput.data()),
                     signingInput.size()) != 1) {
    return std::unexpected(keyError("cannot sign"));
  }
  signature.resize(length);
  std::string encoded;
  if (algorithm == "ES256") {
    auto jose = derToJose(signature);
    if (!jose) return std::unexpected(jose.error());
    encoded = std::move(*jose);
  } else {
    encoded.assign(signature.begin(), signature.end());
  }
  return signingInput + "." + base64Url(encoded);
}

}  // namespace kaja::core::auth
