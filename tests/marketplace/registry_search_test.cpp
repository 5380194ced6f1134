// The pieces of `kaja find` that need no network: token matching, short names, the word and
// URL checks, and reading both shapes of a registry answer and npm's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "marketplace/sync/registry.h"
#include "marketplace/sync/verify.h"

namespace kaja::marketplace::sync {
namespace {

using ::testing::HasSubstr;

TEST(RegistrySearchTest, MatchesWholeTokensOnly) {
  EXPECT_TRUE(hasToken("io.github.acme/spotify-mcp", "spotify"));
  EXPECT_TRUE(hasToken("io.github.acme/spotify-mcp", "MCP"));
  EXPECT_TRUE(hasToken("Plays music on Spotify.", "spotify"));
  EXPECT_FALSE(hasToken("io.github.acme/spotifyd", "spotify"));
  EXPECT_FALSE(hasToken("weatherly", "weather"));
  EXPECT_FALSE(hasToken("", "weather"));
  EXPECT_TRUE(hasToken("météo and weather_2", "météo"));
  EXPECT_TRUE(hasToken("weather_2", "weather"));  // '_' breaks words, as '-' and '.' do
  EXPECT_FALSE(hasToken("météorologie", "météo"));
}

TEST(RegistrySearchTest, ShortensNamesAndSuffixesClashes) {
  EXPECT_EQ(shortServerName("io.github.acme/spotify-mcp"), "spotify-mcp");
  EXPECT_EQ(shortServerName("io.github.Acme/Spotify.MCP"), "spotify-mcp");
  EXPECT_EQ(shortServerName("@scope/--odd name!--"), "odd-name");
  EXPECT_EQ(shortServerName("plain"), "plain");
  EXPECT_EQ(shortServerName("io.github.x/"), "server");
  EXPECT_EQ(shortServerName("io.github.x/" + std::string(100, 'a')), std::string(64, 'a'));

  const std::string hex = sha256Hex("io.github.z/kaja").substr(0, 6);
  EXPECT_EQ(shortServerName("io.github.z/kaja"), "kaja-" + hex);
  for (const char* reserved : {"shipped", "user", "workspace"}) {
    EXPECT_NE(shortServerName(std::string("a/") + reserved), reserved);
  }
  auto taken = [](const std::string& name) { return name == "filesystem"; };
  EXPECT_EQ(shortServerName("io.github.x/filesystem", taken),
            "filesystem-" + sha256Hex("io.github.x/filesystem").substr(0, 6));
  EXPECT_EQ(shortServerName("io.github.x/time", taken), "time");
  // A suffixed long name still fits in 64 characters.
  std::string longName = "a/" + std::string(80, 'b');
  auto all = [](const std::string&) { return true; };
  EXPECT_EQ(shortServerName(longName, all).size(), 64U);
}

TEST(RegistrySearchTest, TakesOneWordAndRegistryUrlsOverHttps) {
  EXPECT_EQ(checkSearchWord("Weather").value(), "weather");
  EXPECT_THAT(checkSearchWord("spotify-mcp").error().message, HasSubstr("spotify, mcp"));
  EXPECT_THAT(checkSearchWord("weather!").error().message, HasSubstr("the word weather"));
  EXPECT_FALSE(checkSearchWord("").has_value());
  EXPECT_FALSE(checkSearchWord("--").has_value());

  EXPECT_EQ(checkRegistryUrl("https://registry.example/", "--registry").value(),
            "https://registry.example");
  EXPECT_EQ(checkRegistryUrl("http://127.0.0.1:9/base/", "--registry").value(),
            "http://127.0.0.1:9/base");
  EXPECT_THAT(checkRegistryUrl("http://registry.example", "--registry").error().message,
              HasSubstr("https"));
  EXPECT_FALSE(checkRegistryUrl("https://r.example/?q=1", "--registry").has_value());
  EXPECT_FALSE(checkRegistryUrl("file:///etc/passwd", "--registry").has_value());
}

TEST(RegistrySearchTest, ReadsBothShapesOfARegistryAnswer) {
  auto hits = parseRegistryAnswer(R"({"servers": [
    {"server": {"name": "a/one", "description": "First.", "version": "2.0.0",
                "packages": [{"registryType": "NPM", "identifier": "one", "version": "2.0.0",
                              "environmentVariables": [{"name": "ONE_KEY", "isSecret": true},
                                                       {"name": "ONE_MODE"}]}]},
     "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active",
                                                             "isLatest": true}}},
    {"server": {"name": "a/one", "version": "1.0.0"}},
    {"server": {"name": "a/gone"},
     "_meta": {"io.modelcontextprotocol.registry/official": {"status": "deleted"}}},
    {"name": "b/two", "description": "Second.", "version_detail": {"version": "0.1.0"},
     "packages": [{"registry_name": "pypi", "name": "two",
                   "environment_variables": [{"name": "TWO_TOKEN", "is_secret": true}]}],
     "remotes": [{"type": "sse", "url": "https://two.example/sse"}]},
    {"name": "c/old", "_meta": {"io.modelcontextprotocol.registry/official":
                                 {"is_latest": false}}},
    "not an object", {"description": "no name"}
  ]})");
  ASSERT_TRUE(hits.has_value()) << hits.error().message;
  ASSERT_EQ(hits->size(), 2U);
  const ServerHit& one = (*hits)[0];
  EXPECT_EQ(one.fullName, "a/one");
  EXPECT_EQ(one.version, "2.0.0");
  EXPECT_TRUE(one.verified);
  ASSERT_EQ(one.runners.size(), 1U);
  EXPECT_EQ(one.runners[0].kind, "npm");
  EXPECT_EQ(one.runners[0].transport, "stdio");
  EXPECT_EQ(one.secrets, std::vector<std::string>{"ONE_KEY"});
  const ServerHit& two = (*hits)[1];
  EXPECT_EQ(two.version, "0.1.0");
  ASSERT_EQ(two.runners.size(), 2U);
  EXPECT_EQ(two.runners[0].kind, "pypi");
  EXPECT_EQ(two.runners[1].kind, "remote");
  EXPECT_EQ(two.runners[1].identifier, "https://two.example/sse");
  EXPECT_EQ(two.secrets, std::vector<std::string>{"TWO_TOKEN"});

  EXPECT_THAT(parseRegistryAnswer("{\"servers\": [").error().message, HasSubstr("not JSON"));
  EXPECT_THAT(parseRegistryAnswer("{\"items\": []}").error().message, HasSubstr("servers"));
  EXPECT_FALSE(parseRegistryAnswer("[]").has_value());
}

TEST(RegistrySearchTest, KeepsOnlyNpmPackagesThatSayTheyAreMcp) {
  auto hits = parseNpmAnswer(R"({"objects": [
    {"package": {"name": "@a/weather-mcp", "version": "1.0.0", "description": "Weather"}},
    {"package": {"name": "weather-js", "version": "1.0.0", "description": "Weather"}},
    {"package": {"name": "forecast", "version": "3.0.0", "keywords": ["MCP", "weather"]}},
    {"package": {"name": "modelctx", "description": "A Model Context Protocol server",
                 "keywords": ["modelcontextprotocol"]}},
    {"package": "broken"}
  ]})");
  ASSERT_TRUE(hits.has_value()) << hits.error().message;
  ASSERT_EQ(hits->size(), 3U);
  EXPECT_EQ((*hits)[0].fullName, "@a/weather-mcp");
  EXPECT_FALSE((*hits)[0].verified);
  EXPECT_EQ((*hits)[0].runners[0].identifier, "@a/weather-mcp");
  EXPECT_EQ((*hits)[1].fullName, "forecast");
  EXPECT_EQ((*hits)[2].fullName, "modelctx");
  EXPECT_FALSE(parseNpmAnswer("{\"objects\": {}}").has_value());
  EXPECT_FALSE(parseNpmAnswer("<html>").has_value());
}

}  // namespace
}  // namespace kaja::marketplace::sync
