// The worker's tokens and key file, attacked the ways a client holding one token would try.
#include "sandbox/token.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/temp_dir.h"

namespace kaja::sandbox {
namespace {

const WorkerKey kKey{std::string(32, 'k')};

TEST(SandboxTokenTest, ATokenNamesItsUserUntilItExpires) {
  const auto token = makeToken(kKey, "alice_2.x-y", 2000);
  ASSERT_TRUE(token);
  EXPECT_EQ(*verifyToken(kKey, *token, 1999), "alice_2.x-y");
  EXPECT_FALSE(verifyToken(kKey, *token, 2000));
  EXPECT_FALSE(verifyToken(WorkerKey{std::string(32, 'j')}, *token, 1000));
}

// A token signed with the worker's key but valid for a thousand years is refused: nothing but a
// new key could take it back.
TEST(SandboxTokenTest, ATokenThatLivesLongerThanAYearIsRefused) {
  const std::int64_t now = 1'800'000'000;
  EXPECT_TRUE(verifyToken(kKey, *makeToken(kKey, "alice", now + kMaxTokenSeconds), now));
  const auto forever =
      verifyToken(kKey, *makeToken(kKey, "alice", now + kMaxTokenSeconds + 1), now);
  ASSERT_FALSE(forever);
  EXPECT_NE(forever.error().message.find("366 days"), std::string::npos);
  EXPECT_FALSE(verifyToken(kKey, *makeToken(kKey, "alice", 101796537348), now));
}

TEST(SandboxTokenTest, NoChangeToATokenKeepsItValid) {
  const std::string token = *makeToken(kKey, "alice", 5000);
  // Every single-character change: another user, a later expiry, a patched signature.
  for (std::size_t i = 0; i < token.size(); ++i) {
    for (const char c : {'0', '9', 'a', 'f', '_', 'b', '.'}) {
      if (token[i] == c) continue;
      std::string changed = token;
      changed[i] = c;
      EXPECT_FALSE(verifyToken(kKey, changed, 1000)) << changed;
    }
  }
  // Moving the user/expiry boundary, dropping or adding characters, case changes.
  EXPECT_FALSE(verifyToken(kKey, token.substr(0, token.size() - 1), 1000));
  EXPECT_FALSE(verifyToken(kKey, token + "0", 1000));
  EXPECT_FALSE(verifyToken(kKey, "KJ1" + token.substr(3), 1000));
  std::string upper = token;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_FALSE(verifyToken(kKey, upper, 1000));
  for (const std::string& junk :
       std::vector<std::string>{"", "kj1_", "kj1__", "kj1_5000__", std::string(300, 'a')}) {
    EXPECT_FALSE(verifyToken(kKey, junk, 1000)) << junk;
  }
  // A user id that is not a valid name cannot be signed.
  EXPECT_FALSE(makeToken(kKey, "Alice", 5000));
  EXPECT_FALSE(makeToken(kKey, "", 5000));
  EXPECT_FALSE(makeToken(kKey, "..", 5000));
}

TEST(SandboxTokenTest, NamesAreShortLowerCaseAndPlain) {
  EXPECT_TRUE(validName("a"));
  EXPECT_TRUE(validName("user-1.2_x"));
  EXPECT_TRUE(validName(std::string(64, 'a')));
  EXPECT_FALSE(validName(std::string(65, 'a')));
  for (const std::string bad : {"", ".", "..", "A", "a/b", "a b", "a%2f", "\xc3\xa4", "a\n"}) {
    EXPECT_FALSE(validName(bad)) << bad;
  }
}

TEST(SandboxTokenTest, TheKeyFileMustBeLongAndPrivate) {
  kaja::testing::TempDir dir;
  const std::string good = dir.write("good", std::string(32, '\x01'));
  ::chmod(good.c_str(), 0600);
  const auto key = readKeyFile(good);
  ASSERT_TRUE(key) << key.error().message;
  EXPECT_EQ(key->bytes.size(), 32U);
  const std::string open = dir.write("open", std::string(32, 'x'));
  ::chmod(open.c_str(), 0644);
  EXPECT_NE(readKeyFile(open).error().message.find("chmod 600"), std::string::npos);
  const std::string group = dir.write("group", std::string(32, 'x'));
  ::chmod(group.c_str(), 0640);
  EXPECT_FALSE(readKeyFile(group));
  const std::string shortKey = dir.write("short", std::string(31, 'x'));
  ::chmod(shortKey.c_str(), 0600);
  EXPECT_NE(readKeyFile(shortKey).error().message.find("fewer than 32"), std::string::npos);
  EXPECT_FALSE(readKeyFile(dir.path() + "/missing"));
  EXPECT_FALSE(readKeyFile(dir.path()));
}

// A key that belongs to another user, `nobody` above all (whom a root worker runs its servers
// as), can be read by every process of that user.
TEST(SandboxTokenTest, AKeyOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file away";
  kaja::testing::TempDir dir;
  const std::string theirs = dir.write("theirs", std::string(32, '\x02'));
  ::chmod(theirs.c_str(), 0600);
  ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
  const auto refused = readKeyFile(theirs);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("belongs to uid 65534"), std::string::npos)
      << refused.error().message;
}

}  // namespace
}  // namespace kaja::sandbox
