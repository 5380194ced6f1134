// The OAuth records of the secrets file: round trips, binding to the ability's url (V6),
// hostile contents, and concurrent updates.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "core/manifest/secrets.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::core {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kUrl = "https://mcp.linear.app/mcp";

OAuthRecord fullRecord() {
  OAuthRecord record;
  record.accessToken = "at-\"quoted\"-\\back\\slash-\xc3\xa9-'single'";
  record.tokenType = "Bearer";
  record.refreshToken = "rt-SECRET-1";
  record.expiresAt = 4102444800;  // 2100-01-01
  record.scope = "read write offline_access";
  record.issuer = "https://as.example/tenant";
  record.tokenEndpoint = "https://as.example/tenant/token";
  record.resource = kUrl;
  record.clientId = "client-#1 = [x]";
  record.clientSecret = "cs-SECRET-1";
  record.authMethod = "client_secret_basic";
  record.redirectUri = "http://127.0.0.1:4242/callback";
  record.forUrl = kUrl;
  return record;
}

void expectSameRecord(const OAuthRecord& a, const OAuthRecord& b) {
  EXPECT_EQ(a.accessToken, b.accessToken);
  EXPECT_EQ(a.tokenType, b.tokenType);
  EXPECT_EQ(a.refreshToken, b.refreshToken);
  EXPECT_EQ(a.expiresAt, b.expiresAt);
  EXPECT_EQ(a.scope, b.scope);
  EXPECT_EQ(a.issuer, b.issuer);
  EXPECT_EQ(a.tokenEndpoint, b.tokenEndpoint);
  EXPECT_EQ(a.resource, b.resource);
  EXPECT_EQ(a.clientId, b.clientId);
  EXPECT_EQ(a.clientSecret, b.clientSecret);
  EXPECT_EQ(a.authMethod, b.authMethod);
  EXPECT_EQ(a.redirectUri, b.redirectUri);
  EXPECT_EQ(a.forUrl, b.forUrl);
}

Ability remote(const std::string& name, std::optional<std::string> url) {
  Ability ability;
  ability.name = name;
  ability.transport = Transport::kHttp;
  ability.url = std::move(url);
  return ability;
}

TEST(SecretsOAuthTest, RecordRoundTripsThroughSaveAndLoad) {
  kaja::testing::TempDir dir;
  const std::string file = dir.path() + "/kaja/secrets.toml";
  Secrets secrets;
  secrets.set("linear", "api-key-1");
  secrets.setOAuth("linear", fullRecord());
  OAuthRecord minimal;
  minimal.accessToken = "only";
  secrets.setOAuth("dotted.name", minimal);
  secrets.setOAuth("with space", minimal);
  secrets.setOAuth("\"quoted\"", minimal);
  ASSERT_TRUE(secrets.save(file).has_value());

  auto loaded = Secrets::load(file);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().describe();
  EXPECT_EQ(loaded->key("linear"), "api-key-1");
  ASSERT_TRUE(loaded->storedOAuth("linear").has_value());
  expectSameRecord(*loaded->storedOAuth("linear"), fullRecord());
  for (const char* name : {"dotted.name", "with space", "\"quoted\""}) {
    ASSERT_TRUE(loaded->storedOAuth(name).has_value()) << name;
    EXPECT_EQ(loaded->storedOAuth(name)->accessToken, "only") << name;
    EXPECT_EQ(loaded->storedOAuth(name)->expiresAt, 0) << name;
  }
  EXPECT_EQ(loaded->signedIn(),
            (std::vector<std::string>{"\"quoted\"", "dotted.name", "linear", "with space"}));
  EXPECT_FALSE(loaded->storedOAuth("dotted").has_value());

  // Saved again, the file is the same.
  const std::string first = kaja::testing::readFile(file);
  ASSERT_TRUE(loaded->save(file).has_value());
  EXPECT_EQ(kaja::testing::readFile(file), first);
}

TEST(SecretsOAuthTest, FileIsMode0600WhateverTheUmask) {
  kaja::testing::TempDir dir;
  const std::string file = dir.path() + "/secrets.toml";
  const mode_t old = ::umask(0);
  Secrets secrets;
  secrets.setOAuth("linear", fullRecord());
  auto saved = secrets.save(file);
  auto updated = Secrets::update(file, [](Secrets& s) { s.setOAuth("b", fullRecord()); });
  ::umask(old);
  ASSERT_TRUE(saved.has_value());
  ASSERT_TRUE(updated.has_value());
  struct stat info {};
  ASSERT_EQ(::stat(file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((file + ".lock").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0077, 0u) << "the lock file is readable by others";
}

TEST(SecretsOAuthTest, TokensAreWithheldOnceTheUrlChanges) {
  Secrets secrets;
  secrets.setOAuth("linear", fullRecord());
  ASSERT_TRUE(secrets.oauth(remote("linear", kUrl)).has_value());
  EXPECT_EQ(secrets.oauth(remote("linear", kUrl))->accessToken, fullRecord().accessToken);
  for (const std::optional<std::string>& moved :
       {std::optional<std::string>("https://evil.example/mcp"),
        std::optional<std::string>("https://mcp.linear.app/mcp/"),
        std::optional<std::string>("https://mcp.linear.app/MCP"),
        std::optional<std::string>("http://mcp.linear.app/mcp"),
        std::optional<std::string>("https://mcp.linear.app:443/mcp"),
        std::optional<std::string>("https://mcp.linear.app/mcp?x"), std::optional<std::string>(""),
        std::optional<std::string>()}) {
    EXPECT_FALSE(secrets.oauth(remote("linear", moved)).has_value()) << moved.value_or("(none)");
  }
  // storedOAuth still has them, whatever the url, for `kaja logout`.
  EXPECT_TRUE(secrets.storedOAuth("linear").has_value());
  // Another ability never gets them.
  EXPECT_FALSE(secrets.oauth(remote("linear2", kUrl)).has_value());
}

TEST(SecretsOAuthTest, RecordWithoutForIsNotSentToARemoteServer) {
  kaja::testing::TempDir dir;
  const std::string file = dir.write(
      "secrets.toml", "[abilities.linear.oauth]\naccess_token = \"at-SECRET-2\"\nexpires_at = 5\n");
  auto loaded = Secrets::load(file);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().describe();
  EXPECT_TRUE(loaded->storedOAuth("linear").has_value());
  EXPECT_FALSE(loaded->oauth(remote("linear", kUrl)).has_value());
}

// Tokens that do not read are left out, never sent, and never shown; the rest of the file
// (here the same ability's API key) still works, so one server's odd answer cannot lock the
// user out of every other ability.
TEST(SecretsOAuthTest, ControlCharacterInAStoredFieldDropsOnlyThoseTokens) {
  for (const char* field : {"access_token", "refresh_token", "client_secret", "token_type",
                            "client_id", "issuer", "for"}) {
    for (const char* bad :
         {"\\r\\nX-Injected: 1", "\\n", "\\t", "\\u007f", "\\u0085", "\\u009b[31m", "\\u001b[2J"}) {
      kaja::testing::TempDir dir;
      const std::string secret = "SECRET-" + std::string(field) + "-value";
      const std::string file =
          dir.write("secrets.toml", std::string("[abilities.linear]\napi_key = \"k\"\n\n") +
                                        "[abilities.linear.oauth]\n" + field + " = \"" + secret +
                                        bad + "tail\"\n");
      auto loaded = Secrets::load(file);
      ASSERT_TRUE(loaded.has_value()) << field << " " << bad << ": " << loaded.error().message;
      EXPECT_FALSE(loaded->storedOAuth("linear").has_value()) << field << " " << bad;
      EXPECT_TRUE(loaded->oauthUnreadable("linear")) << field << " " << bad;
      EXPECT_EQ(loaded->key("linear"), "k") << field << " " << bad;
      // Saved again, the unreadable tokens are gone and the key stays.
      ASSERT_TRUE(loaded->save(file).has_value());
      const std::string text = kaja::testing::readFile(file);
      EXPECT_THAT(text, Not(HasSubstr("SECRET"))) << field << " " << bad;
      EXPECT_THAT(text, HasSubstr("api_key = \"k\"")) << field << " " << bad;
    }
  }
}

TEST(SecretsOAuthTest, WrongTypesAndUnknownKeysDropOnlyThoseTokens) {
  for (const std::string& body : {
           std::string("access_token = 987654321\n"),
           std::string("access_token = [\"SECRET-in-array\"]\n"),
           std::string("expires_at = \"SECRET-not-a-number\"\n"),
           std::string("acess_token = \"SECRET-misspelt\"\n"),
           std::string("access_token = { v = \"SECRET-inline\" }\n"),
           std::string("SECRET-flat"),
       }) {
    kaja::testing::TempDir dir;
    const std::string text = body == "SECRET-flat" ? "[abilities.linear]\noauth = \"SECRET-flat\"\n"
                                                   : "[abilities.linear.oauth]\n" + body;
    const std::string file = dir.write("secrets.toml", text);
    auto loaded = Secrets::load(file);
    ASSERT_TRUE(loaded.has_value()) << body << ": " << loaded.error().message;
    EXPECT_FALSE(loaded->storedOAuth("linear").has_value()) << body;
    EXPECT_TRUE(loaded->oauthUnreadable("linear")) << body;
  }
}

TEST(SecretsOAuthTest, BrokenTomlNeverQuotesTheToken) {
  kaja::testing::TempDir dir;
  const std::string file =
      dir.write("secrets.toml", "[abilities.linear.oauth]\naccess_token = \"SECRET-unterminated\n");
  auto loaded = Secrets::load(file);
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().code, ErrorCode::kInvalidConfig);
  EXPECT_THAT(loaded.error().describe(), Not(HasSubstr("SECRET")));
  EXPECT_THAT(loaded.error().detail, Not(HasSubstr("SECRET")));
}

TEST(SecretsOAuthTest, RemoveOAuthKeepsTheKey) {
  kaja::testing::TempDir dir;
  const std::string file = dir.path() + "/secrets.toml";
  Secrets secrets;
  secrets.set("linear", "api-key-1");
  secrets.setOAuth("linear", fullRecord());
  EXPECT_TRUE(secrets.removeOAuth("linear"));
  EXPECT_FALSE(secrets.removeOAuth("linear"));
  ASSERT_TRUE(secrets.save(file).has_value());
  EXPECT_THAT(kaja::testing::readFile(file), Not(HasSubstr("SECRET")));
  auto loaded = Secrets::load(file);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_FALSE(loaded->storedOAuth("linear").has_value());
  EXPECT_EQ(loaded->key("linear"), "api-key-1");
}

TEST(SecretsOAuthTest, UpdatesFromTwoThreadsLoseNoWrite) {
  kaja::testing::TempDir dir;
  const std::string file = dir.path() + "/kaja/secrets.toml";
  constexpr int kEach = 40;
  auto writer = [&](const std::string& prefix, bool oauth) {
    for (int i = 0; i < kEach; ++i) {
      auto done = Secrets::update(file, [&](Secrets& secrets) {
        const std::string name = prefix + std::to_string(i);
        if (oauth) {
          OAuthRecord record;
          record.accessToken = "at-" + name;
          record.forUrl = kUrl;
          secrets.setOAuth(name, record);
        } else {
          secrets.set(name, "key-" + name);
        }
      });
      ASSERT_TRUE(done.has_value()) << done.error().describe();
    }
  };
  std::thread first(writer, "a", false);
  std::thread second(writer, "b", true);
  first.join();
  second.join();
  auto loaded = Secrets::load(file);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().describe();
  for (int i = 0; i < kEach; ++i) {
    EXPECT_EQ(loaded->key("a" + std::to_string(i)), "key-a" + std::to_string(i)) << i;
    auto record = loaded->storedOAuth("b" + std::to_string(i));
    ASSERT_TRUE(record.has_value()) << i;
    EXPECT_EQ(record->accessToken, "at-b" + std::to_string(i));
  }
  EXPECT_EQ(loaded->stored().size(), static_cast<std::size_t>(kEach));
  EXPECT_EQ(loaded->signedIn().size(), static_cast<std::size_t>(kEach));
}

TEST(SecretsOAuthTest, UpdatesFromTwoProcessesLoseNoWrite) {
  kaja::testing::TempDir dir;
  const std::string file = dir.path() + "/secrets.toml";
  constexpr int kEach = 30;
  auto run = [&](const std::string& prefix) {
    for (int i = 0; i < kEach; ++i) {
      auto done = Secrets::update(file, [&](Secrets& secrets) {
        OAuthRecord record;
        record.accessToken = "at-" + prefix + std::to_string(i);
        secrets.setOAuth(prefix + std::to_string(i), record);
      });
      if (!done) return false;
    }
    return true;
  };
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(run("child") ? 0 : 1);
  const bool parentOk = run("parent");
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(parentOk);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  auto loaded = Secrets::load(file);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().describe();
  EXPECT_EQ(loaded->signedIn().size(), static_cast<std::size_t>(2 * kEach));
  for (const std::string prefix : {"child", "parent"}) {
    for (int i = 0; i < kEach; ++i) {
      auto record = loaded->storedOAuth(prefix + std::to_string(i));
      ASSERT_TRUE(record.has_value()) << prefix << i;
      EXPECT_EQ(record->accessToken, "at-" + prefix + std::to_string(i));
    }
  }
}

}  // namespace
}  // namespace kaja::core
