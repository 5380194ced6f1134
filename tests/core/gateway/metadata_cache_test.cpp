#include "core/gateway/metadata_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "tests/support/temp_dir.h"

namespace kaja::core::gateway {
namespace {

namespace fs = std::filesystem;
using mcp::Json;

Activation stdioActivation(const std::string& name, std::vector<std::string> argv,
                           std::vector<EnvVar> env = {}) {
  Activation activation;
  activation.ability.name = name;
  LaunchPlan plan;
  plan.argv = std::move(argv);
  plan.env = std::move(env);
  activation.resolution.launch = std::move(plan);
  return activation;
}

std::vector<mcp::Tool> someTools() {
  std::vector<mcp::Tool> tools;
  for (const char* name : {"read", "write"}) {
    auto tool = mcp::Tool::fromJson(Json{{"name", name},
                                         {"description", std::string("does ") + name},
                                         {"inputSchema", {{"type", "object"}}}});
    tools.push_back(*tool);
  }
  return tools;
}

mcp::ServerInfo someServer() {
  mcp::ServerInfo server;
  server.name = "files";
  server.version = "1.2.3";
  server.protocolVersion = "2025-11-25";
  server.capabilities = {{"tools", Json::object()}, {"resources", Json::object()}};
  return server;
}

std::vector<std::string> filesIn(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

// The key is the SHA-256 of the configuration as compact JSON with sorted keys: a known
// answer, so that entries an earlier kaja wrote are still found whatever library hashes.
TEST(MetadataCacheTest, TheKeyIsTheSha256OfTheConfiguration) {
  const auto activation = stdioActivation("files", {"node", "server.js"}, {{"TOKEN", "a"}});
  // sha256 of {"ability":"files","argv":["node","server.js"],"env":[["TOKEN","a"]],
  // "transport":"stdio"}, from Python's hashlib.
  EXPECT_EQ(MetadataCache::keyOf(activation),
            "a9b13bac35b8bdfd9a9b58ca19ba774f46ae580c479fccb03695d1af7c529803");
}

TEST(MetadataCacheTest, KeepsToolsAndServerBetweenRuns) {
  kaja::testing::TempDir dir;
  const auto activation = stdioActivation("files", {"/usr/bin/node", "server.js"});
  MetadataCache cache(dir.path() + "/cache");
  EXPECT_FALSE(cache.load(activation));
  ASSERT_TRUE(cache.save(activation, someServer(), someTools()));
  auto entry = MetadataCache(dir.path() + "/cache").load(activation);
  ASSERT_TRUE(entry);
  ASSERT_EQ(entry->tools.size(), 2U);
  EXPECT_EQ(entry->tools[1].name, "write");
  EXPECT_EQ(entry->tools[1].description, "does write");
  EXPECT_EQ(entry->server.version, "1.2.3");
  EXPECT_TRUE(entry->server.capabilities.contains("resources"));
  EXPECT_EQ(entry->ttlSeconds, kMetadataTtl.count());
  EXPECT_FALSE(entry->staleAt(entry->savedAt));
  EXPECT_TRUE(entry->staleAt(entry->savedAt + kMetadataTtl.count()));
  const auto names = filesIn(dir.path() + "/cache");
  ASSERT_EQ(names.size(), 1U);
  struct stat info {};
  ASSERT_EQ(::stat((dir.path() + "/cache/" + names[0]).c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600U);
}

// A 2026-07-28 server's ttlMs shortens an entry's life, never lengthens it past 7 days.
TEST(MetadataCacheTest, TheServersOwnTimeToLiveIsKeptUpToSevenDays) {
  using std::chrono::milliseconds;
  EXPECT_EQ(MetadataCache::freshFor(std::nullopt), kMetadataTtl.count());
  EXPECT_EQ(MetadataCache::freshFor(milliseconds(300000)), 300);
  EXPECT_EQ(MetadataCache::freshFor(milliseconds(0)), 0);
  EXPECT_EQ(MetadataCache::freshFor(milliseconds(999)), 0);
  EXPECT_EQ(MetadataCache::freshFor(milliseconds(1LL << 40)), kMetadataTtl.count());
  EXPECT_EQ(MetadataCache::freshFor(milliseconds(-5)), 0);

  kaja::testing::TempDir dir;
  const auto activation = stdioActivation("files", {"/usr/bin/node", "server.js"});
  MetadataCache cache(dir.path() + "/cache");
  ASSERT_TRUE(cache.save(activation, someServer(), someTools(), 300));
  auto entry = cache.load(activation);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->ttlSeconds, 300);
  EXPECT_FALSE(entry->staleAt(entry->savedAt + 299));
  EXPECT_TRUE(entry->staleAt(entry->savedAt + 300));
  // One that says 0 is stale at once: listed from the cache while it is refreshed.
  ASSERT_TRUE(cache.save(activation, someServer(), someTools(), 0));
  entry = cache.load(activation);
  ASSERT_TRUE(entry);
  EXPECT_TRUE(entry->staleAt(entry->savedAt));
}

TEST(MetadataCacheTest, AnyChangeToHowTheServerStartsMissesAndReplacesTheOldEntry) {
  kaja::testing::TempDir dir;
  MetadataCache cache(dir.path());
  const auto first = stdioActivation("files", {"node", "server.js"}, {{"TOKEN", "a"}});
  ASSERT_TRUE(cache.save(first, someServer(), someTools()));
  // Another argument, another environment value (a new key), another name, a remote URL.
  const auto otherArg = stdioActivation("files", {"node", "server.js", "--ro"}, {{"TOKEN", "a"}});
  const auto otherKey = stdioActivation("files", {"node", "server.js"}, {{"TOKEN", "b"}});
  const auto otherName = stdioActivation("files2", {"node", "server.js"}, {{"TOKEN", "a"}});
  for (const auto* changed : {&otherArg, &otherKey, &otherName}) {
    EXPECT_NE(MetadataCache::keyOf(*changed), MetadataCache::keyOf(first));
    EXPECT_FALSE(cache.load(*changed));
  }
  Activation remote;
  remote.ability.name = "files";
  remote.ability.transport = Transport::kHttp;
  remote.resolution.remote = RemotePlan{"https://a.example/mcp"};
  Activation remoteOther = remote;
  remoteOther.resolution.remote->headers = {{"Authorization", "Bearer x"}};
  EXPECT_NE(MetadataCache::keyOf(remote), MetadataCache::keyOf(remoteOther));
  // Saving the changed configuration drops the entry no start can reach any more, and
  // leaves other abilities' entries alone.
  ASSERT_TRUE(cache.save(otherName, someServer(), someTools()));
  ASSERT_TRUE(cache.save(otherArg, someServer(), someTools()));
  EXPECT_FALSE(cache.load(first));
  EXPECT_TRUE(cache.load(otherArg));
  EXPECT_TRUE(cache.load(otherName));
  EXPECT_EQ(filesIn(dir.path()).size(), 2U);
  // The secret itself is never written.
  for (const auto& name : filesIn(dir.path())) {
    std::ifstream in(dir.path() + "/" + name);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(text.find("\"TOKEN\""), std::string::npos) << text;
  }
}

TEST(MetadataCacheTest, ADamagedOrForeignFileIsIgnoredNotTrustedInPart) {
  kaja::testing::TempDir dir;
  MetadataCache cache(dir.path());
  const auto activation = stdioActivation("files", {"node", "server.js"});
  ASSERT_TRUE(cache.save(activation, someServer(), someTools()));
  const std::string file = dir.path() + "/" + filesIn(dir.path())[0];
  std::ifstream in(file);
  Json good = Json::parse(in);
  const std::vector<std::pair<std::string, std::function<void(Json&)>>> damages = {
      {"not json", nullptr},
      {"wrong key", [](Json& j) { j["key"] = std::string(64, '0'); }},
      {"newer format", [](Json& j) { j["format"] = 99; }},
      {"tools not a list", [](Json& j) { j["tools"] = "read"; }},
      {"a tool with no name", [](Json& j) { j["tools"][1].erase("name"); }},
      {"a tool name that is a number", [](Json& j) { j["tools"][0]["name"] = 7; }},
      {"capabilities a string", [](Json& j) { j["server"]["capabilities"] = "all"; }},
      {"savedAt a string", [](Json& j) { j["savedAt"] = "yesterday"; }},
      // Entries kaja never writes, planted by someone else.
      {"saved in the future",
       [](Json& j) { j["savedAt"] = j["savedAt"].get<std::int64_t>() + 86400; }},
      {"a TTL past kaja's", [](Json& j) { j["ttlSeconds"] = std::int64_t{1} << 40; }},
      {"a negative TTL", [](Json& j) { j["ttlSeconds"] = -1; }},
      {"one tool twice", [](Json& j) { j["tools"].push_back(j["tools"][0]); }},
      {"an empty tool name", [](Json& j) { j["tools"][0]["name"] = ""; }},
  };
  for (const auto& [what, damage] : damages) {
    std::ofstream out(file, std::ios::trunc);
    if (damage) {
      Json bad = good;
      damage(bad);
      out << bad.dump();
    } else {
      out << good.dump().substr(0, 40) << "\xff\xfe";
    }
    out.close();
    EXPECT_FALSE(cache.load(activation)) << what;
  }
  EXPECT_FALSE(MetadataCache("").load(activation));
  EXPECT_TRUE(MetadataCache("").save(activation, someServer(), someTools()));
}

TEST(MetadataCacheTest, SomethingOtherThanAFileWhereTheEntryGoesIsSkippedThenReplaced) {
  kaja::testing::TempDir dir;
  MetadataCache cache(dir.path());
  const auto activation = stdioActivation("files", {"node", "server.js"});
  ASSERT_TRUE(cache.save(activation, someServer(), someTools()));
  const std::string file = dir.path() + "/" + filesIn(dir.path())[0];
  for (const char* kind : {"folder", "fifo", "link to a folder"}) {
    fs::remove_all(file);
    const std::string what = kind;
    if (what == "folder") {
      fs::create_directory(file);
    } else if (what == "fifo") {
      ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
    } else {
      fs::create_directory_symlink(dir.path(), file);
    }
    // Neither blocks (a FIFO with no writer) nor throws.
    EXPECT_FALSE(cache.load(activation)) << kind;
    ASSERT_TRUE(cache.save(activation, someServer(), someTools())) << kind;
    EXPECT_TRUE(cache.load(activation)) << kind;
  }
  EXPECT_TRUE(fs::is_directory(dir.path()));
}

TEST(MetadataCacheTest, ThePathOfTheProcessThatStartedKajaIsNotPartOfTheKey) {
  const auto terminal = stdioActivation("files", {"node", "s.js"}, {{"PATH", "/usr/bin:/bin"}});
  const auto app = stdioActivation("files", {"node", "s.js"}, {{"PATH", "/opt/x/bin:/usr/bin"}});
  EXPECT_EQ(MetadataCache::keyOf(terminal), MetadataCache::keyOf(app));
}

}  // namespace
}  // namespace kaja::core::gateway
