// The worker's bearer tokens: a user id and an expiry, signed with HMAC-SHA256.
#include "sandbox/token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <fstream>
#include <iterator>

#include "core/manifest/cloud_eligibility.h"

namespace kaja::sandbox {
namespace {

constexpr std::string_view kPrefix = "kj1_";
constexpr std::size_t kMacBytes = 32;

std::string hex(const unsigned char* data, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 0xF]);
  }
  return out;
}

core::Result<std::string> mac(const WorkerKey& key, std::string_view signedPart) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), key.bytes.data(), static_cast<int>(key.bytes.size()),
           reinterpret_cast<const unsigned char*>(signedPart.data()), signedPart.size(), out.data(),
           &size) == nullptr ||
      size != kMacBytes) {
    return core::fail(core::ErrorCode::kInternal, "OpenSSL could not compute an HMAC");
  }
  return hex(out.data(), size);
}

}  // namespace

core::Result<WorkerKey> readKeyFile(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return core::fail(core::ErrorCode::kUsage, "cannot read the key file " + path +
                                                   "; make one with `head -c 32 /dev/urandom > " +
                                                   path + " && chmod 600 " + path + "`");
  }
  if (!S_ISREG(info.st_mode)) {
    return core::fail(core::ErrorCode::kUsage,
                      "the key file " + path + " is not a regular file; give a file");
  }
  // Whoever owns the key can read it; a key of `nobody`, whom servers run as by default,
  // could be read by any other daemon that runs as nobody.
  if (info.st_uid != ::geteuid()) {
    return core::fail(core::ErrorCode::kUsage,
                      "the key file " + path + " belongs to uid " + std::to_string(info.st_uid) +
                          ", not to the user kaja runs as (uid " + std::to_string(::geteuid()) +
                          "); run `chown " + std::to_string(::geteuid()) + " " + path + "`");
  }
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return core::fail(core::ErrorCode::kUsage, "the key file " + path +
                                                   " can be read or written by others; run "
                                                   "`chmod 600 " +
                                                   path + "`");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::fail(core::ErrorCode::kUsage, "cannot open the key file " + path);
  WorkerKey key{std::string(std::istreambuf_iterator<char>(in), {})};
  if (key.bytes.size() < kMinKeyBytes) {
    return core::fail(core::ErrorCode::kUsage,
                      "the key file " + path + " holds " + std::to_string(key.bytes.size()) +
                          " bytes, fewer than 32; make one with `head -c 32 /dev/urandom > " +
                          path + "`");
  }
  return key;
}

bool validName(std::string_view name) { return core::validWorkerName(name); }

core::Result<std::string> makeToken(const WorkerKey& key, std::string_view user,
                                    std::int64_t expires) {
  if (!validName(user)) {
    return core::fail(core::ErrorCode::kUsage,
                      "a user id is 1 to 64 characters of a-z, 0-9, '.', '_' and '-'");
  }
  std::string token = std::string(kPrefix) + std::to_string(expires) + "_" + std::string(user);
  auto signature = mac(key, token);
  if (!signature) return std::unexpected(signature.error());
  return token + "_" + *signature;
}

core::Result<std::string> verifyToken(const WorkerKey& key, std::string_view token,
                                      std::int64_t now) {
  auto refused = [](std::string message) {
    return core::fail(core::ErrorCode::kRefused, std::move(message));
  };
  // kj1_<expires>_<user>_<mac>: the mac has a fixed length and the expiry is digits, so a
  // user id with '_' in it cannot shift the fields.
  if (!token.starts_with(kPrefix) || token.size() > 256 ||
      token.size() < kPrefix.size() + 4 + kMacBytes * 2 ||
      token[token.size() - kMacBytes * 2 - 1] != '_') {
    return refused("the token is not one kaja sandbox token made");
  }
  const std::size_t macStart = token.size() - kMacBytes * 2;
  const std::string_view signedPart = token.substr(0, macStart - 1);
  const std::string_view given = token.substr(macStart);
  auto expected = mac(key, signedPart);
  if (!expected) return std::unexpected(expected.error());
  if (CRYPTO_memcmp(given.data(), expected->data(), given.size()) != 0) {
    return refused("the token was not signed with this worker's key");
  }
  const std::string_view rest = signedPart.substr(kPrefix.size());
  const std::size_t split = rest.find('_');
  if (split == std::string_view::npos) {
    return refused("the token is not one kaja sandbox token made");
  }
  const std::string_view expiresText = rest.substr(0, split);
  const std::string_view user = rest.substr(split + 1);
  std::int64_t expires = 0;
  const auto [end, ec] =
      std::from_chars(expiresText.data(), expiresText.data() + expiresText.size(), expires);
  if (ec != std::errc() || end != expiresText.data() + expiresText.size() || !validName(user)) {
    return refused("the token is not one kaja sandbox token made");
  }
  if (expires <= now) return refused("the token has expired; make a new one");
  if (expires - now > kMaxTokenSeconds) {
    return refused(
        "the token lives longer than 366 days, more than this worker accepts; make "
        "one with a shorter --ttl");
  }
  return std::string(user);
}

std::int64_t unixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace kaja::sandbox
