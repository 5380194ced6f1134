#include "core/auth/pkce.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <vector>

namespace kaja::core::auth {
namespace {

std::string encode(std::string_view data, const char* alphabet, bool pad) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  auto byte = [&](std::size_t at) { return static_cast<unsigned char>(data[at]); };
  for (; i + 2 < data.size(); i += 3) {
    const unsigned value = (byte(i) << 16U) | (byte(i + 1) << 8U) | byte(i + 2);
    out += alphabet[(value >> 18U) & 63U];
    out += alphabet[(value >> 12U) & 63U];
    out += alphabet[(value >> 6U) & 63U];
    out += alphabet[value & 63U];
  }
  if (const std::size_t rest = data.size() - i; rest > 0) {
    unsigned value = byte(i) << 16U;
    if (rest == 2) value |= byte(i + 1) << 8U;
    out += alphabet[(value >> 18U) & 63U];
    out += alphabet[(value >> 12U) & 63U];
    if (rest == 2) out += alphabet[(value >> 6U) & 63U];
    if (pad) out.append(rest == 2 ? 1 : 2, '=');
  }
  return out;
}

}  // namespace

std::string base64Url(std::string_view data) {
  return encode(data, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", false);
}

std::string base64(std::string_view data) {
  return encode(data, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", true);
}

Result<std::string> randomToken(std::size_t bytes) {
  std::vector<unsigned char> buffer(bytes);
  if (RAND_bytes(buffer.data(), static_cast<int>(buffer.size())) != 1) {
    return fail(ErrorCode::kInternal, "the system's random number generator failed");
  }
  return base64Url(std::string_view(reinterpret_cast<const char*>(buffer.data()), buffer.size()));
}

std::string s256Challenge(std::string_view verifier) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(verifier.data()), verifier.size(), digest);
  return base64Url(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

Result<Pkce> makePkce() {
  auto verifier = randomToken(32);
  if (!verifier) return std::unexpected(verifier.error());
  Pkce pkce{*verifier, s256Challenge(*verifier)};
  return pkce;
}

bool constantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace kaja::core::auth
