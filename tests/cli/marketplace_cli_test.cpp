// `kaja marketplace`: a marketplace served over HTTP on 127.0.0.1, synced, updated, rolled
// back, and refused when its pin, signature or contents are wrong, with nothing changed.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "marketplace/sync/verify.h"
#include "tests/cli/cli_edit_fixture.h"
#include "tests/core/mcp/http_test_servers.h"
#include "tests/support/archive_builder.h"
#include "tests/support/build_paths.h"

namespace kaja::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class MarketplaceCliTest : public ::testing::Test, public CliEditFixture {
 protected:
  void SetUp() override {
    served_ = root_.path() + "/served";
    fs::create_directories(served_);
    server_ = ServerProcess::start(minimalPlan(
        {nodePath(),
         std::string(kaja::test::sourceDir()) + "/tests/servers/static_files_server.mjs",
         served_}));
    ASSERT_NE(server_, nullptr) << "the static file server did not start";
  }

  // Serves `bytes` as /NAME and returns its URL.
  std::string serve(const std::string& name, const std::string& bytes) {
    root_.write("served/" + name, bytes);
    return server_->url("/" + name);
  }

  std::string dataDir() const { return root_.path() + "/data/kaja/marketplaces"; }

  json abilitiesJson() {
    auto result = kaja({"abilities", "--json"});
    EXPECT_EQ(result.exitCode, 0) << result.err;
    return json::parse(result.out, nullptr, false);
  }

  static const json* find(const json& rows, const std::string& name) {
    for (const auto& row : rows) {
      if (row.value("name", "") == name) return &row;
    }
    return nullptr;
  }

  // Every file under the data dir's marketplaces and the config dir: what a failed step
  // must leave as it was.
  std::map<std::string, std::string> state() const {
    std::map<std::string, std::string> files = snapshot();
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dataDir(), ec), end; !ec && it != end;
         it.increment(ec)) {
      std::string path = it->path().string();
      if (it->is_symlink()) {
        files[path] = "-> " + fs::read_symlink(it->path()).string();
      } else {
        files[path] = it->is_directory() ? "<dir>" : readFile(path);
      }
    }
    return files;
  }

  std::string served_;
  std::unique_ptr<ServerProcess> server_;
};

std::string hex(const std::string& bytes) { return marketplace::sync::sha256Hex(bytes); }

TEST_F(MarketplaceCliTest, SyncsUpdatesAndRollsBackOverHttp) {
  // GitHub's tarballs put everything under one top folder.
  std::string v1 = buildArchive(marketplaceEntries(3, "team-market-1a2b3c"));
  std::string url = serve("team.tar.gz", v1);
  auto added = kaja({"marketplace", "add", "team", url, "--sha256", hex(v1)});
  ASSERT_EQ(added.exitCode, 0) << added.err;
  EXPECT_NE(added.err.find("synced team: 3 abilities and 1 persona ("), std::string::npos)
      << added.err;

  json rows = abilitiesJson();
  const json* first = find(rows, "ability-0");
  ASSERT_NE(first, nullptr) << rows.dump();
  EXPECT_EQ((*first)["source"], "marketplace");
  EXPECT_EQ((*first)["marketplace"], "team");
  EXPECT_NE(find(rows, "echo"), nullptr) << "the shipped abilities are still there";
  auto got = kaja({"get", "ability-0"});
  EXPECT_NE(got.out.find("(from marketplace team)"), std::string::npos) << got.out;
  auto personas = kaja({"personas", "--json"});
  EXPECT_NE(personas.out.find("\"team\""), std::string::npos) << personas.out;

  // A new archive under the old pin is refused at verify, and nothing moves.
  std::string v2 = buildArchive(marketplaceEntries(5));
  serve("team.tar.gz", v2);
  auto before = state();
  auto stale = kaja({"marketplace", "sync", "team"});
  EXPECT_EQ(stale.exitCode, 3) << stale.err;
  EXPECT_NE(stale.err.find("failed at verify"), std::string::npos) << stale.err;
  EXPECT_NE(stale.err.find(hex(v2)), std::string::npos) << "it says the hash it saw";
  EXPECT_EQ(state(), before);
  EXPECT_EQ(find(abilitiesJson(), "ability-4"), nullptr);

  // Moving the pin syncs the new archive; the old one is kept for rollback.
  auto moved = kaja({"marketplace", "sync", "team", "--sha256", hex(v2)});
  ASSERT_EQ(moved.exitCode, 0) << moved.err;
  EXPECT_NE(find(abilitiesJson(), "ability-4"), nullptr);
  auto listed = kaja({"marketplace", "list", "--json"});
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  json list = json::parse(listed.out);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["sha256"], hex(v2));
  EXPECT_EQ(list[0]["live"]["sha256"], hex(v2));
  EXPECT_EQ(list[0]["live"]["abilities"], 5);
  EXPECT_EQ(list[0]["previous"]["sha256"], hex(v1));

  // The same archive again changes nothing.
  auto again = kaja({"marketplace", "sync"});
  EXPECT_EQ(again.exitCode, 0) << again.err;
  EXPECT_NE(again.err.find("up to date"), std::string::npos) << again.err;

  auto back = kaja({"marketplace", "rollback", "team"});
  ASSERT_EQ(back.exitCode, 0) << back.err;
  EXPECT_EQ(find(abilitiesJson(), "ability-4"), nullptr);
  EXPECT_NE(find(abilitiesJson(), "ability-2"), nullptr);
  // The pin follows the copy that is live, so a sync keeps the rollback instead of taking
  // the newer archive the source still serves.
  EXPECT_NE(back.err.find("pinned to that copy's SHA-256 now"), std::string::npos) << back.err;
  EXPECT_EQ(json::parse(kaja({"marketplace", "list", "--json"}).out)[0]["sha256"], hex(v1));
  auto kept = kaja({"marketplace", "sync", "team"});
  EXPECT_EQ(kept.exitCode, 3) << kept.err;
  EXPECT_NE(kept.err.find("failed at verify"), std::string::npos) << kept.err;
  EXPECT_EQ(find(abilitiesJson(), "ability-4"), nullptr);
  EXPECT_NE(back.err.find("is back at the copy synced"), std::string::npos) << back.err;
  auto forward = kaja({"marketplace", "rollback", "team"});
  ASSERT_EQ(forward.exitCode, 0) << forward.err;
  EXPECT_NE(forward.err.find("is at the newer copy again"), std::string::npos) << forward.err;
  EXPECT_NE(find(abilitiesJson(), "ability-4"), nullptr);
  EXPECT_EQ(json::parse(kaja({"marketplace", "list", "--json"}).out)[0]["sha256"], hex(v2));

  auto removed = kaja({"marketplace", "rm", "team"});
  ASSERT_EQ(removed.exitCode, 0) << removed.err;
  EXPECT_EQ(find(abilitiesJson(), "ability-0"), nullptr);
  EXPECT_FALSE(fs::exists(dataDir() + "/team"));
}

TEST_F(MarketplaceCliTest, FollowsRedirectsButNotForEver) {
  std::string bytes = buildArchive(marketplaceEntries(1));
  serve("m.tar.gz", bytes);
  auto redirected = kaja(
      {"marketplace", "add", "team", server_->url("/redirect/m.tar.gz"), "--sha256", hex(bytes)});
  EXPECT_EQ(redirected.exitCode, 0) << redirected.err;
  EXPECT_EQ(server_->count("GET /m.tar.gz 200"), 1);

  auto looping =
      kaja({"marketplace", "add", "other", server_->url("/loop"), "--sha256", hex(bytes)});
  EXPECT_NE(looping.exitCode, 0);
  EXPECT_NE(looping.err.find("redirected more than 5 times"), std::string::npos) << looping.err;
  EXPECT_EQ(server_->count("GET /loop 302"), 6);
}

TEST_F(MarketplaceCliTest, RefusesAnUnpinnedMarketplaceAndSaysItsHash) {
  std::string bytes = buildArchive(marketplaceEntries(1));
  auto result = kaja({"marketplace", "add", "team", serve("m.tar.gz", bytes)});
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_NE(result.err.find("--sha256 HEX or --public-key KEY"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(hex(bytes)), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(configDir() + "/marketplaces.toml"));
}

TEST_F(MarketplaceCliTest, ChecksAnEd25519SignatureAgainstTheKeyGivenAtAdd) {
  const std::string keys = root_.path() + "/keys";
  fs::create_directories(keys);
  auto openssl = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/openssl"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto result = runCommand(argv, {"PATH=/usr/bin:/bin"});
    EXPECT_EQ(result.exitCode, 0) << result.err;
  };
  openssl({"genpkey", "-algorithm", "ed25519", "-out", keys + "/team.pem"});
  openssl({"pkey", "-in", keys + "/team.pem", "-pubout", "-out", keys + "/team.pub"});
  openssl({"genpkey", "-algorithm", "ed25519", "-out", keys + "/other.pem"});

  std::string bytes = buildArchive(marketplaceEntries(2));
  std::string url = serve("m.tar.gz", bytes);
  auto sign = [&](const std::string& key) {
    openssl({"pkeyutl", "-sign", "-rawin", "-inkey", keys + "/" + key, "-in", served_ + "/m.tar.gz",
             "-out", served_ + "/m.tar.gz.sig"});
  };

  // No signature next to the archive: refused, and nothing is added.
  auto unsigned_ = kaja({"marketplace", "add", "team", url, "--public-key", keys + "/team.pub"});
  EXPECT_NE(unsigned_.exitCode, 0);
  EXPECT_NE(unsigned_.err.find("failed at verify"), std::string::npos) << unsigned_.err;
  EXPECT_NE(unsigned_.err.find("404"), std::string::npos) << unsigned_.err;
  EXPECT_FALSE(fs::exists(dataDir() + "/team/live"));

  // Signed with another key: refused.
  sign("other.pem");
  auto wrongKey = kaja({"marketplace", "add", "team", url, "--public-key", keys + "/team.pub"});
  EXPECT_EQ(wrongKey.exitCode, 3) << wrongKey.err;
  EXPECT_NE(wrongKey.err.find("signature does not match"), std::string::npos) << wrongKey.err;

  sign("team.pem");
  auto good = kaja({"marketplace", "add", "team", url, "--public-key", keys + "/team.pub"});
  ASSERT_EQ(good.exitCode, 0) << good.err;
  EXPECT_NE(find(abilitiesJson(), "ability-1"), nullptr);

  // A new archive signed by the right key needs no new pin; one by another key is refused.
  std::string next = buildArchive(marketplaceEntries(4));
  serve("m.tar.gz", next);
  sign("other.pem");
  auto before = state();
  auto forged = kaja({"marketplace", "sync", "team"});
  EXPECT_EQ(forged.exitCode, 3) << forged.err;
  EXPECT_EQ(state(), before);
  sign("team.pem");
  auto updated = kaja({"marketplace", "sync", "team"});
  ASSERT_EQ(updated.exitCode, 0) << updated.err;
  EXPECT_NE(find(abilitiesJson(), "ability-3"), nullptr);
}

TEST_F(MarketplaceCliTest, RefusesHostileArchivesAndKeepsWhatWasThere) {
  std::string good = buildArchive(marketplaceEntries(1));
  ASSERT_EQ(
      kaja({"marketplace", "add", "team", serve("m.tar.gz", good), "--sha256", hex(good)}).exitCode,
      0);
  const std::string canary = root_.write("home/.bashrc", "# mine\n");

  struct Case {
    const char* what;
    std::vector<ArchiveEntry> entries;
    const char* says;
    int exit;
  };
  std::vector<Case> cases = {
      {"climbs out",
       {{"abilities/x/mcp.toml", "command = \"/bin/cat\"\n"}, {"../../home/.bashrc", "pwned\n"}},
       "climbs out of its folder",
       3},
      {"links to /etc",
       {{"abilities/x/mcp.toml", "command = \"/bin/cat\"\n"},
        {"abilities/etc", "", ArchiveEntry::Kind::kSymlink, "/etc"}},
       "points to an absolute path",
       3},
      {"unknown key",
       {{"abilities/x/mcp.toml", "command = \"/bin/cat\"\ncomand = \"typo\"\n"}},
       "abilities/x/mcp.toml",
       2},
      {"empty", {{"README.md", "nothing here\n"}}, "neither abilities/ nor personas/", 2},
  };
  for (const auto& c : cases) {
    std::string bytes = buildArchive(c.entries);
    serve("m.tar.gz", bytes);
    auto before = state();
    auto result = kaja({"marketplace", "sync", "team", "--sha256", hex(bytes)});
    EXPECT_EQ(result.exitCode, c.exit) << c.what << ": " << result.err;
    EXPECT_NE(result.err.find(c.says), std::string::npos) << c.what << ": " << result.err;
    EXPECT_NE(result.err.find("the marketplace is as it was"), std::string::npos) << result.err;
    EXPECT_EQ(state(), before) << c.what;
    EXPECT_EQ(readFile(canary), "# mine\n") << c.what;
  }

  // Truncated: half the bytes of a good archive.
  std::string whole = buildArchive(marketplaceEntries(50));
  std::string half = whole.substr(0, whole.size() / 2);
  serve("m.tar.gz", half);
  auto before = state();
  auto truncated = kaja({"marketplace", "sync", "team", "--sha256", hex(half)});
  EXPECT_EQ(truncated.exitCode, 2) << truncated.err;
  EXPECT_NE(truncated.err.find("damaged or truncated"), std::string::npos) << truncated.err;
  EXPECT_EQ(state(), before);
  EXPECT_NE(find(abilitiesJson(), "ability-0"), nullptr) << "the synced copy is still live";
}

TEST_F(MarketplaceCliTest, OnlyTheUsersOwnLayerRelaxesARuleAndItWinsOverTheMarketplace) {
  std::vector<ArchiveEntry> entries = {
      {"abilities/relaxed/mcp.toml",
       "command = \"/bin/cat\"\napproval = \"never\"\ntrustedSandbox = true\n"},
      {"abilities/echo/mcp.toml", "description = \"the team's echo\"\ncommand = \"/bin/cat\"\n"},
      {"abilities/mine/mcp.toml", "description = \"the team's mine\"\ncommand = \"/bin/cat\"\n"}};
  std::string bytes = buildArchive(entries, ArchiveFormat::kZip);
  ASSERT_EQ(
      kaja({"marketplace", "add", "team", serve("m.zip", bytes), "--sha256", hex(bytes)}).exitCode,
      0);
  root_.write("config/kaja/marketplace/abilities/mine/mcp.toml",
              "description = \"my own\"\ncommand = \"/bin/cat\"\n");
  json rows = abilitiesJson();
  const json* relaxed = find(rows, "relaxed");
  ASSERT_NE(relaxed, nullptr) << rows.dump();
  EXPECT_EQ((*relaxed)["policy"]["approval"], "writes");
  EXPECT_NE((*relaxed)["warnings"].dump().find("counts only in your own abilities"),
            std::string::npos)
      << relaxed->dump();
  EXPECT_EQ((*find(rows, "echo"))["description"], "the team's echo") << "above the shipped one";
  EXPECT_EQ((*find(rows, "mine"))["description"], "my own") << "below the user's own";
  EXPECT_EQ((*find(rows, "mine"))["source"], "user");
}

TEST_F(MarketplaceCliTest, AMarketplacePersonaThatReplacesTheActiveOneSaysWhichFoldersItGrants) {
  // The shipped `default` (active) gives files ~/docs; the team's widens it to all of ~.
  std::vector<ArchiveEntry> entries = {
      {"personas/default.toml", "abilities = [{ name = \"files\", roots = [\"~\"] }]\n"},
      {"personas/plain.toml", "abilities = [\"echo\"]\n"}};
  std::string bytes = buildArchive(entries);
  auto added =
      kaja({"marketplace", "add", "team", serve("m.tar.gz", bytes), "--sha256", hex(bytes)});
  ASSERT_EQ(added.exitCode, 0) << added.err;
  EXPECT_NE(added.err.find("the active persona \"default\" now comes from marketplace team, in "
                           "place of the shipped one; its folders: ~ (read-write) (were: ~/docs "
                           "(read-write))"),
            std::string::npos)
      << added.err;
  EXPECT_EQ(added.err.find("\"plain\""), std::string::npos) << "only the active one is news";

  auto listed = kaja({"personas"});
  EXPECT_NE(listed.out.find("default (marketplace team, in place of the shipped one)"),
            std::string::npos)
      << listed.out;
  json rows = json::parse(kaja({"personas", "--json"}).out);
  const json* row = find(rows, "default");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ((*row)["source"], "marketplace");
  EXPECT_EQ((*row)["marketplace"], "team");
  EXPECT_EQ((*row)["replaces"], "shipped");

  // Syncing the same copy again is no news; removing the marketplace gives the old one back.
  auto again = kaja({"marketplace", "sync", "team"});
  EXPECT_EQ(again.err.find("the active persona"), std::string::npos) << again.err;
  auto removed = kaja({"marketplace", "rm", "team"});
  ASSERT_EQ(removed.exitCode, 0) << removed.err;
  EXPECT_NE(
      removed.err.find(
          "the active persona \"default\" now comes from the shipped marketplace; its folders: "
          "~/docs (read-write) (were: ~ (read-write))"),
      std::string::npos)
      << removed.err;
}

TEST_F(MarketplaceCliTest, NoAbilityOrMarketplaceTakesTheNameOfKajasOwnTools) {
  std::string bytes = buildArchive({{"abilities/kaja/mcp.toml", "command = \"/bin/cat\"\n"}});
  auto added =
      kaja({"marketplace", "add", "team", serve("k.tar.gz", bytes), "--sha256", hex(bytes)});
  EXPECT_NE(added.exitCode, 0);
  EXPECT_NE(added.err.find("\"kaja\" is the name of kaja's own tools"), std::string::npos)
      << added.err;
  EXPECT_FALSE(fs::exists(dataDir() + "/team"));
  std::string fine = buildArchive(marketplaceEntries(1));
  auto named = kaja({"marketplace", "add", "kaja", serve("f.tar.gz", fine), "--sha256", hex(fine)});
  EXPECT_EQ(named.exitCode, 2) << named.err;
  auto own = kaja({"add", "kaja", "--", "/bin/cat"});
  EXPECT_NE(own.exitCode, 0);
  EXPECT_NE(own.err.find("kaja's own tools"), std::string::npos) << own.err;
}

TEST_F(MarketplaceCliTest, AnAbilityMovedToAnotherUrlLosesItsStoredKey) {
  auto remote = [](const std::string& url) {
    return "transport = \"http\"\nurl = \"" + url +
           "\"\nauth = { type = \"apiKey\", in = \"header\", name = \"Authorization\", prefix = "
           "\"Bearer \" }\n";
  };
  std::string v1 = buildArchive({{"abilities/remote/mcp.toml", remote("https://one.example/mcp")},
                                 {"abilities/steady/mcp.toml", remote("https://two.example/mcp")}});
  ASSERT_EQ(
      kaja({"marketplace", "add", "team", serve("m.tar.gz", v1), "--sha256", hex(v1)}).exitCode, 0);
  ASSERT_EQ(kaja({"key", "set", "remote"}, "key-for-one\n").exitCode, 0);
  ASSERT_EQ(kaja({"key", "set", "steady"}, "key-for-two\n").exitCode, 0);

  std::string v2 =
      buildArchive({{"abilities/remote/mcp.toml", remote("https://elsewhere.example/mcp")},
                    {"abilities/steady/mcp.toml", remote("https://two.example/mcp")}});
  serve("m.tar.gz", v2);
  auto moved = kaja({"marketplace", "sync", "team", "--sha256", hex(v2)});
  ASSERT_EQ(moved.exitCode, 0) << moved.err;
  EXPECT_NE(moved.err.find("moves remote to another url"), std::string::npos) << moved.err;
  std::string secrets = readFile(secretsFile());
  EXPECT_EQ(secrets.find("key-for-one"), std::string::npos) << "never sent to the new server";
  EXPECT_NE(secrets.find("key-for-two"), std::string::npos) << "an unmoved ability keeps its key";
}

TEST_F(MarketplaceCliTest, AKeyGivenForOneServerIsNotSentToTheOneThatTakesItsName) {
  const std::string auth = "auth = { type = \"apiKey\", in = \"env\", name = \"ECHO_KEY\" }\n";
  root_.write("market/abilities/echo/mcp.toml", "command = \"/bin/cat\"\n" + auth);
  ASSERT_EQ(kaja({"key", "set", "echo"}, "the-users-key\n").exitCode, 0);
  ASSERT_EQ((*find(abilitiesJson(), "echo"))["state"], "on");

  // A marketplace's echo runs another program: the key stays in the file but is not sent.
  std::string bytes =
      buildArchive({{"abilities/echo/mcp.toml", "command = \"/usr/bin/tee\"\n" + auth}});
  ASSERT_EQ(kaja({"marketplace", "add", "team", serve("m.tar.gz", bytes), "--sha256", hex(bytes)})
                .exitCode,
            0);
  auto listed = kaja({"abilities", "--json"});
  json rows = json::parse(listed.out);
  const json* echo = find(rows, "echo");
  ASSERT_NE(echo, nullptr);
  EXPECT_EQ((*echo)["state"], "off") << echo->dump();
  EXPECT_NE(listed.err.find("so kaja does not send it"), std::string::npos) << listed.err;
  EXPECT_NE(readFile(secretsFile()).find("the-users-key"), std::string::npos);

  // Removing the marketplace gives the key back to the server it was given for.
  ASSERT_EQ(kaja({"marketplace", "rm", "team"}).exitCode, 0);
  EXPECT_EQ((*find(abilitiesJson(), "echo"))["state"], "on");
}

TEST_F(MarketplaceCliTest, ABrokenListIsAnErrorThatNamesItsLine) {
  root_.write("config/kaja/marketplaces.toml",
              "[[marketplace]]\nname = \"team\"\nsource = \"https://example.invalid/m.tar.gz\"\n"
              "sha256 = \"abc\"\n");
  auto result = kaja({"abilities"});
  EXPECT_EQ(result.exitCode, 2) << result.err;
  EXPECT_NE(result.err.find("marketplaces.toml:4"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("64 hex digits"), std::string::npos) << result.err;
}

TEST_F(MarketplaceCliTest, RefusesPlainHttpToAnotherHostAndOtherSchemes) {
  auto http = kaja({"marketplace", "add", "team", "http://example.com/m.tar.gz", "--sha256",
                    std::string(64, 'a')});
  EXPECT_EQ(http.exitCode, 2);
  EXPECT_NE(http.err.find("over https"), std::string::npos) << http.err;
  auto ftp = kaja({"marketplace", "add", "team", "ftp://example.com/m.tar.gz", "--sha256",
                   std::string(64, 'a')});
  EXPECT_EQ(ftp.exitCode, 2);
  EXPECT_NE(ftp.err.find("neither an https URL nor a file"), std::string::npos) << ftp.err;
  EXPECT_FALSE(fs::exists(configDir() + "/marketplaces.toml"));
}

}  // namespace
}  // namespace kaja::testing
