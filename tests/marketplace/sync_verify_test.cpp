// The archive checks of a marketplace sync: the SHA-256 pin and the Ed25519 signature, with
// keys and signatures made by the openssl program as a publisher would make them, and the
// forgeries an attacker would try instead.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "marketplace/sync/verify.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::marketplace::sync {
namespace {

using kaja::testing::readFile;
using ::testing::HasSubstr;

const std::string kMessage =
    std::string("the bytes of marketplace.tar.gz\n") + std::string("\0\1\xff", 3);

std::string hexOf(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::string bytesOf(const PublicKey& key) {
  return {reinterpret_cast<const char*>(key.data()), key.size()};
}

// Keys and signatures made once by the openssl program, in a folder kept for the suite.
class SyncVerifyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new kaja::testing::TempDir();
    dir_->write("message", kMessage);
    for (const char* name : {"a", "b"}) {
      const std::string key = std::string(name) + ".key";
      openssl({"genpkey", "-algorithm", "ed25519", "-out", key});
      openssl({"pkey", "-in", key, "-pubout", "-out", std::string(name) + ".pub"});
      openssl(
          {"pkey", "-in", key, "-pubout", "-outform", "DER", "-out", std::string(name) + ".der"});
      openssl({"pkeyutl", "-sign", "-inkey", key, "-rawin", "-in", "message", "-out",
               std::string(name) + ".sig"});
    }
    openssl({"base64", "-A", "-in", "a.sig", "-out", "a.sig.b64"});
    openssl(
        {"genpkey", "-algorithm", "rsa", "-pkeyopt", "rsa_keygen_bits:1024", "-out", "rsa.key"});
    openssl({"pkey", "-in", "rsa.key", "-pubout", "-out", "rsa.pub"});
    openssl({"genpkey", "-algorithm", "x25519", "-out", "x.key"});
    openssl({"pkey", "-in", "x.key", "-pubout", "-out", "x.pub"});
    openssl(
        {"genpkey", "-algorithm", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "ec.key"});
    openssl({"pkey", "-in", "ec.key", "-pubout", "-out", "ec.pub"});
  }

  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static void openssl(std::vector<std::string> args) {
    args.insert(args.begin(), "/usr/bin/openssl");
    std::vector<std::string> argv = {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", dir_->path()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto ran = kaja::testing::runCommand(argv, {"PATH=/usr/bin:/bin", "HOME=" + dir_->path()});
    ASSERT_EQ(ran.exitCode, 0) << args[1] << ": " << ran.err;
  }

  static std::string file(const std::string& name) { return readFile(dir_->path() + "/" + name); }

  // The 32 raw bytes of a public key: the tail of its DER form.
  static std::string rawKey(const std::string& name) {
    const std::string der = file(name + ".der");
    return der.size() == 44 ? der.substr(12) : "";
  }

  static PublicKey key(const std::string& name) {
    auto parsed = parsePublicKey(file(name + ".pub"));
    return parsed.value_or(PublicKey{});
  }

  static kaja::testing::TempDir* dir_;
};

kaja::testing::TempDir* SyncVerifyTest::dir_ = nullptr;

TEST_F(SyncVerifyTest, HashesTheKnownVectors) {
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(sha256Hex(std::string("\0", 1)),
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d");
}

TEST_F(SyncVerifyTest, ReadsPinsInAnyCaseWithOrWithoutThePrefix) {
  const std::string pin = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  std::string upper = pin;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string& text :
       {pin, upper, "sha256:" + pin, "sha256:" + upper, pin + "\n", "  " + pin + "  "}) {
    auto parsed = parseSha256(text);
    ASSERT_TRUE(parsed.has_value()) << text << ": " << parsed.error().message;
    EXPECT_EQ(*parsed, pin);
  }
}

TEST_F(SyncVerifyTest, RefusesPinsOfTheWrongLengthOrDigits) {
  const std::string pin = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  const std::vector<std::string> wrong = {
      "",
      "sha256:",
      pin.substr(0, 63),
      pin + "a",
      "sha256:" + pin.substr(0, 63),
      "g" + pin.substr(1),
      pin.substr(0, 32) + " " + pin.substr(32),
      pin.substr(0, 63) + "\x01",
      "sha512:" + pin,
      "sha256:sha256:" + pin,
      "0x" + pin.substr(2),
  };
  for (const auto& text : wrong) {
    auto parsed = parseSha256(text);
    ASSERT_FALSE(parsed.has_value()) << "took " << text;
    EXPECT_EQ(parsed.error().code, core::ErrorCode::kUsage);
    EXPECT_THAT(parsed.error().message, HasSubstr("64 hex digits"));
  }
}

TEST_F(SyncVerifyTest, ReadsTheSameKeyFromPemBase64AndHex) {
  const std::string raw = rawKey("a");
  ASSERT_EQ(raw.size(), 32u);
  auto fromPem = parsePublicKey(file("a.pub"));
  ASSERT_TRUE(fromPem.has_value()) << fromPem.error().message;
  EXPECT_EQ(bytesOf(*fromPem), raw);
  const std::string base64 = publicKeyText(*fromPem);
  EXPECT_EQ(base64.size(), 44u);
  std::string upperHex = hexOf(raw);
  for (char& c : upperHex) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string& text : {base64, base64 + "\n", hexOf(raw), upperHex}) {
    auto parsed = parsePublicKey(text);
    ASSERT_TRUE(parsed.has_value()) << text << ": " << parsed.error().message;
    EXPECT_EQ(*parsed, *fromPem);
  }
  EXPECT_NE(key("a"), key("b"));
}

TEST_F(SyncVerifyTest, RefusesKeysThatAreNotEd25519PublicKeys) {
  const std::string raw = rawKey("a");
  std::string corrupted = file("a.pub");
  corrupted[corrupted.find('\n') + 5] ^= 0x01;
  const std::vector<std::pair<std::string, std::string>> wrong = {
      {"an RSA public key", file("rsa.pub")},
      {"an X25519 public key, 32 bytes too", file("x.pub")},
      {"a P-256 public key", file("ec.pub")},
      {"the Ed25519 private key", file("a.key")},
      {"a PEM block with a changed byte", corrupted},
      {"hex of 31 bytes", hexOf(raw.substr(0, 31))},
      {"hex of 33 bytes", hexOf(raw + "x")},
      {"base64 of 31 bytes", std::string(42, 'A') + "=="},
      {"base64 of 33 bytes", std::string(44, 'A')},
      {"base64 without its padding", publicKeyText(key("a")).substr(0, 43)},
      {"base64url", std::string(43, '_') + "="},
      {"nothing", ""},
      {"the 32 raw bytes themselves", raw},
  };
  for (const auto& [what, text] : wrong) {
    auto parsed = parsePublicKey(text);
    ASSERT_FALSE(parsed.has_value()) << "took " << what;
    EXPECT_EQ(parsed.error().code, core::ErrorCode::kUsage) << what;
  }
}

TEST_F(SyncVerifyTest, VerifiesGoodSignaturesRawAndBase64) {
  const std::string raw = file("a.sig");
  ASSERT_EQ(raw.size(), 64u);
  EXPECT_TRUE(verifyEd25519(kMessage, raw, key("a")).has_value());
  const std::string base64 = file("a.sig.b64");
  EXPECT_EQ(base64.find('\n'), std::string::npos);
  for (const std::string& text : {base64, base64 + "\n", base64 + "\r\n"}) {
    auto verified = verifyEd25519(kMessage, text, key("a"));
    EXPECT_TRUE(verified.has_value()) << verified.error().message;
  }
  EXPECT_TRUE(verifyEd25519(kMessage, file("b.sig"), key("b")).has_value());
}

TEST_F(SyncVerifyTest, RefusesSignaturesThatDoNotMatch) {
  const std::string good = file("a.sig");
  ASSERT_EQ(good.size(), 64u);
  auto refused = [](const core::Result<void>& result) {
    return !result.has_value() && result.error().code == core::ErrorCode::kRefused;
  };
  EXPECT_TRUE(refused(verifyEd25519(kMessage, file("b.sig"), key("a")))) << "another key's";
  EXPECT_TRUE(refused(verifyEd25519(kMessage, good, key("b")))) << "checked with another key";
  for (size_t bit : {size_t{0}, size_t{7}, size_t{100}, 8 * kMessage.size() - 1}) {
    std::string message = kMessage;
    message[bit / 8] = static_cast<char>(message[bit / 8] ^ (1 << (bit % 8)));
    EXPECT_TRUE(refused(verifyEd25519(message, good, key("a")))) << "bit " << bit;
  }
  EXPECT_TRUE(refused(verifyEd25519(kMessage + "x", good, key("a"))));
  EXPECT_TRUE(refused(verifyEd25519(kMessage.substr(1), good, key("a"))));
  for (size_t byte : {0, 31, 32, 63}) {
    std::string signature = good;
    signature[byte] = static_cast<char>(signature[byte] ^ 0x10);
    EXPECT_TRUE(refused(verifyEd25519(kMessage, signature, key("a")))) << "byte " << byte;
  }
  // The same signature with L added to its S half: malleable checkers take it.
  static constexpr unsigned char kOrder[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58,
                                               0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
                                               0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                               0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10};
  std::string malleable = good;
  unsigned carry = 0;
  for (size_t i = 0; i < 32; ++i) {
    unsigned sum = static_cast<unsigned char>(malleable[32 + i]) + kOrder[i] + carry;
    malleable[32 + i] = static_cast<char>(sum & 0xff);
    carry = sum >> 8;
  }
  EXPECT_TRUE(refused(verifyEd25519(kMessage, malleable, key("a")))) << "S + L";
  for (const std::string& wrongLength :
       {good.substr(0, 63), good + "x", good + "\n", std::string(), file("a.sig.b64").substr(4)}) {
    auto result = verifyEd25519(kMessage, wrongLength, key("a"));
    ASSERT_TRUE(refused(result)) << wrongLength.size() << " bytes";
    EXPECT_THAT(result.error().message, HasSubstr("not 64 bytes"));
  }
}

TEST_F(SyncVerifyTest, RefusesKeysOfSmallOrderThatEverySignatureMatches) {
  // With the neutral point as its key, R = that point and S = 0 "signs" any message.
  const std::string identity = "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
  std::string forged(64, '\0');
  forged[0] = 1;
  auto parsed = parsePublicKey(identity);
  ASSERT_FALSE(parsed.has_value()) << "took the neutral point as a key";
  EXPECT_EQ(parsed.error().code, core::ErrorCode::kUsage);
  EXPECT_THAT(parsed.error().message, HasSubstr("small order"));
  PublicKey neutral{};
  neutral[0] = 1;
  auto verified = verifyEd25519("any archive at all", forged, neutral);
  ASSERT_FALSE(verified.has_value());
  EXPECT_EQ(verified.error().code, core::ErrorCode::kRefused);
  // All eight points of small order, in every encoding a decoder takes.
  const std::vector<std::string> smallOrder = {
      std::string(64, '0'),
      "0100000000000000000000000000000000000000000000000000000000000080",
      "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
      "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
      "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
      "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
      "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
      "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
      "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
  };
  for (const auto& hex : smallOrder) {
    EXPECT_FALSE(parsePublicKey(hex).has_value()) << hex;
  }
  EXPECT_TRUE(parsePublicKey(hexOf(rawKey("a"))).has_value());
}

}  // namespace
}  // namespace kaja::marketplace::sync
