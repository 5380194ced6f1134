#include "core/manifest/kaja_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/core/manifest/kaja_config_fixture.h"
#include "tests/support/temp_dir.h"

namespace kaja::core {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class KajaConfigTest : public KajaConfigFixture {};

TEST_F(KajaConfigTest, MissingFileIsTheDefault) {
  auto config = loadKajaConfig(dir_.path() + "/none/config.toml", "/home/tester");
  ASSERT_TRUE(config.has_value()) << config.error().describe();
  EXPECT_FALSE(config->sandbox.has_value());
}

TEST_F(KajaConfigTest, ReadsTheSandboxTable) {
  auto config = load(
      "# kaja's settings\n[sandbox]\nurl = \"https://sandbox.example/base/\"\nuser = "
      "\"alice.b-1\"\nkey_file = \"~/keys/worker.key\"\nshared = true\n");
  ASSERT_TRUE(config.has_value()) << config.error().describe();
  ASSERT_TRUE(config->sandbox.has_value());
  const SandboxSettings& sandbox = *config->sandbox;
  EXPECT_EQ(sandbox.url, "https://sandbox.example/base");
  EXPECT_EQ(sandbox.user, "alice.b-1");
  EXPECT_EQ(sandbox.keyFile, "/home/tester/keys/worker.key");
  EXPECT_FALSE(sandbox.tokenFile.has_value());
  EXPECT_TRUE(sandbox.shared);
  EXPECT_EQ(sandbox.at.line, 2);
  EXPECT_EQ(sandbox.credentialAt.line, 5);

  // A relative path is the config folder's.
  auto relative =
      load("[sandbox]\nurl = \"http://127.0.0.1:8940\"\nuser = \"bob\"\ntoken_file = \"t\"\n");
  ASSERT_TRUE(relative.has_value()) << relative.error().describe();
  EXPECT_EQ(relative->sandbox->tokenFile, dir_.path() + "/kaja/t");
  EXPECT_FALSE(relative->sandbox->shared);
}

TEST_F(KajaConfigTest, MistakesNameTheLine) {
  struct Case {
    std::string text;
    int line;
    std::string message;
  };
  const std::string head = "[sandbox]\nurl = \"http://127.0.0.1:1\"\nuser = \"alice\"\n";
  const std::vector<Case> cases = {
      {head + "tokenfile = \"t\"\n", 4, "did you mean \"sandbox.token_file\""},
      {head + "token_file = 5\n", 4, "\"sandbox.token_file\""},
      {head + "token_file = \"\"\n", 4, "must name a file"},
      {head + "key_file = \"k\"\nshared = 1\n", 5, "\"sandbox.shared\""},
      {"[sandbox]\nuser = \"alice\"\nkey_file = \"k\"\n", 1, "needs url"},
      {"[sandbox]\nurl = \"http://h\"\nkey_file = \"k\"\n", 1, "needs user"},
      {"[sandbox]\nurl = \"http://h\"\nuser = \"../x\"\nkey_file = \"k\"\n", 3, "1 to 64"},
      {"[sandbox]\nurl = \"http://h\"\nuser = \"" + std::string(65, 'a') + "\"\nkey_file = \"k\"\n",
       3, "1 to 64"},
      {"[sandbox]\nurl = \"file:///x\"\nuser = \"a\"\nkey_file = \"k\"\n", 2, "http://"},
      {"[sandbox]\nurl = \"http://\"\nuser = \"a\"\nkey_file = \"k\"\n", 2, "needs a host"},
      {"[sandbox]\nurl = \"http://u:p@h\"\nuser = \"a\"\nkey_file = \"k\"\n", 2, "password"},
      {"[sandbox]\nurl = \"http://h/?t=1\"\nuser = \"a\"\nkey_file = \"k\"\n", 2, "no query"},
      {"[sandbox]\nurl = \"http://h /x\"\nuser = \"a\"\nkey_file = \"k\"\n", 2, "spaces"},
      {"sandbox = \"http://h\"\n", 1, "must be a table"},
      {"[sandbx]\n", 1, "did you mean \"sandbox\""},
      {"[sandbox\n", 1, ""},
  };
  for (const auto& item : cases) {
    auto config = load(item.text);
    ASSERT_FALSE(config.has_value()) << item.text;
    EXPECT_EQ(config.error().code, ErrorCode::kInvalidConfig) << item.text;
    EXPECT_THAT(config.error().describe(), StartsWith(file_ + ":" + std::to_string(item.line)))
        << item.text << "\n"
        << config.error().describe();
    EXPECT_THAT(config.error().message, HasSubstr(item.message)) << item.text;
  }
}

}  // namespace
}  // namespace kaja::core
