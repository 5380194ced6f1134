#include "marketplace/sync/verify.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cctype>
#include <memory>
#include <optional>
#include <vector>

namespace kaja::marketplace::sync {
namespace {

using core::ErrorCode;

constexpr char kHex[] = "0123456789abcdef";

struct PkeyDeleter {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) {
    text.remove_suffix(1);
  }
  return text;
}

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::vector<std::uint8_t>> fromHex(std::string_view text) {
  if (text.size() % 2 != 0) return std::nullopt;
  std::vector<std::uint8_t> out;
  for (size_t i = 0; i < text.size(); i += 2) {
    int high = hexValue(text[i]);
    int low = hexValue(text[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out.push_back(static_cast<std::uint8_t>(high * 16 + low));
  }
  return out;
}

// Decodes standard base64 (padding required when the length asks for it); whitespace is
// skipped. nullopt for anything else.
std::optional<std::vector<std::uint8_t>> fromBase64(std::string_view text) {
  std::string compact;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) == 0) compact += c;
  }
  if (compact.empty() || compact.size() % 4 != 0) return std::nullopt;
  for (size_t i = 0; i < compact.size(); ++i) {
    char c = compact[i];
    bool padding = c == '=' && i + 2 >= compact.size();
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '+' && c != '/' && !padding) {
      return std::nullopt;
    }
  }
  std::vector<std::uint8_t> out(compact.size() / 4 * 3);
  int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(compact.data()),
                          static_cast<int>(compact.size()));
  if (n < 0) return std::nullopt;
  size_t pad = 0;
  if (compact.ends_with("==")) {
    pad = 2;
  } else if (compact.ends_with("=")) {
    pad = 1;
  }
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

std::string toBase64(const std::uint8_t* bytes, size_t size) {
  std::string out(4 * ((size + 2) / 3), '\0');
  int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes, static_cast<int>(size));
  out.resize(static_cast<size_t>(n));
  return out;
}

// Whether `key` encodes one of the eight points of small order (in any encoding a decoder
// takes: the sign bit ignored, y at or above p included). OpenSSL checks such a key as any
// other, and under it one forged signature (R of small order, S = 0) matches any message,
// or one message in eight; libsodium refuses them the same way.
bool hasSmallOrder(const PublicKey& key) {
  static constexpr std::uint8_t kSmallOrder[][32] = {
      {0x00},
      {0x01},
      {0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4,
       0x89, 0xf2, 0xef, 0x98, 0xf0, 0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6,
       0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x05},
      {0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b,
       0x76, 0x0d, 0x10, 0x67, 0x0f, 0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39,
       0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a},
      {0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
      {0xed, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
      {0xee, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
  };
  for (const auto& point : kSmallOrder) {
    bool same = (key[31] & 0x7f) == point[31];
    for (size_t i = 0; same && i < 31; ++i) same = key[i] == point[i];
    if (same) return true;
  }
  return false;
}

core::Result<PublicKey> refuseSmallOrder(const PublicKey& key) {
  if (hasSmallOrder(key)) {
    return core::fail(ErrorCode::kUsage,
                      "the public key is a point of small order, which forged signatures match; "
                      "ask the marketplace for its real Ed25519 key");
  }
  return key;
}

}  // namespace

std::string sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr);
  std::string out;
  for (unsigned int i = 0; i < size; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

core::Result<std::string> parseSha256(std::string_view text) {
  text = trim(text);
  if (text.starts_with("sha256:")) text.remove_prefix(7);
  if (text.size() != 64 || !fromHex(text)) {
    return core::fail(ErrorCode::kUsage,
                      "--sha256 takes the 64 hex digits of the archive's SHA-256 (what "
                      "`sha256sum FILE` prints)");
  }
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

core::Result<PublicKey> parsePublicKey(std::string_view text) {
  text = trim(text);
  PublicKey key{};
  if (text.starts_with("-----BEGIN")) {
    std::unique_ptr<BIO, BioDeleter> bio(
        BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
    std::unique_ptr<EVP_PKEY, PkeyDeleter> pkey(
        PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
    size_t size = key.size();
    if (!pkey || EVP_PKEY_id(pkey.get()) != EVP_PKEY_ED25519 ||
        EVP_PKEY_get_raw_public_key(pkey.get(), key.data(), &size) != 1 || size != key.size()) {
      return core::fail(ErrorCode::kUsage,
                        "the public key is a PEM block but not an Ed25519 public key; make one "
                        "with `openssl pkey -in KEY -pubout`");
    }
    return refuseSmallOrder(key);
  }
  std::optional<std::vector<std::uint8_t>> raw = fromHex(text);
  if (!raw) raw = fromBase64(text);
  if (!raw || raw->size() != key.size()) {
    return core::fail(ErrorCode::kUsage,
                      "the public key is neither an Ed25519 PEM block nor the base64 or hex of "
                      "its 32 bytes");
  }
  std::copy(raw->begin(), raw->end(), key.begin());
  return refuseSmallOrder(key);
}

std::string publicKeyText(const PublicKey& key) { return toBase64(key.data(), key.size()); }

core::Result<void> verifyEd25519(std::string_view message, std::string_view signature,
                                 const PublicKey& key) {
  std::vector<std::uint8_t> sig(signature.begin(), signature.end());
  if (sig.size() != 64) {
    auto decoded = fromBase64(signature);
    if (!decoded || decoded->size() != 64) {
      return core::fail(ErrorCode::kRefused,
                        "the signature is not 64 bytes of Ed25519 signature, raw or base64");
    }
    sig = std::move(*decoded);
  }
  if (hasSmallOrder(key)) {
    return core::fail(ErrorCode::kRefused,
                      "the marketplace's key is a point of small order, which forged signatures "
                      "match; set its real Ed25519 key");
  }
  std::unique_ptr<EVP_PKEY, PkeyDeleter> pkey(
      EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, key.data(), key.size()));
  std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
  if (!pkey || !ctx ||
      EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, pkey.get()) != 1) {
    return core::fail(ErrorCode::kInternal, "OpenSSL could not set up an Ed25519 check");
  }
  if (EVP_DigestVerify(ctx.get(), sig.data(), sig.size(),
                       reinterpret_cast<const unsigned char*>(message.data()),
                       message.size()) != 1) {
    return core::fail(ErrorCode::kRefused,
                      "the signature does not match the archive under the marketplace's key");
  }
  return {};
}

}  // namespace kaja::marketplace::sync
