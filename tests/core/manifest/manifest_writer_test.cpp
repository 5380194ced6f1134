#include "core/manifest/manifest_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/manifest/ability_loader.h"
#include "core/manifest/persona_loader.h"
#include "core/manifest/toml_value.h"
#include "tests/support/temp_dir.h"

namespace kaja::core {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(ManifestWriterTest, EveryByteOfAStringRoundTrips) {
  std::string every;
  for (int c = 1; c < 128; ++c) every += static_cast<char>(c);
  every += "é ☃";
  Ability ability;
  ability.name = "bytes";
  ability.description = every;
  ability.command = "/bin/cat";
  ability.args = {every, "\"", "\\", "\n", "'''", "\"\"\""};
  ability.env = {{"WEIRD", every}};
  std::string text = formatAbility(ability);
  auto root = parseTomlText(text, "bytes.toml");
  ASSERT_TRUE(root) << root.error().describe() << "\n" << text;
  auto back = abilityFromToml(*root, "bytes", "bytes.toml");
  ASSERT_TRUE(back) << back.error().describe();
  EXPECT_EQ(back->description, every);
  EXPECT_EQ(back->args, ability.args);
  EXPECT_EQ(back->env, ability.env);
}

TEST(ManifestWriterTest, SecretEnvAndHeadersBecomeTheKey) {
  EXPECT_TRUE(looksSecret("OPENAI_API_KEY"));
  EXPECT_TRUE(looksSecret("github_token"));
  EXPECT_TRUE(looksSecret("Authorization"));
  EXPECT_TRUE(looksSecret("X-Api-Key"));
  EXPECT_TRUE(looksSecret("DB_PASSWORD"));
  EXPECT_FALSE(looksSecret("LOG_LEVEL"));
  EXPECT_FALSE(looksSecret("X-Trace"));

  AbilityDraft local{.name = "x", .command = "/bin/cat", .env = {{"MODE", "a"}, {"API_KEY", "k1"}}};
  auto plan = planAbility(local);
  ASSERT_TRUE(plan) << plan.error().describe();
  EXPECT_EQ(plan->key, "k1");
  ASSERT_TRUE(plan->ability.auth);
  EXPECT_EQ(plan->ability.auth->in, KeyPlacement::kEnv);
  EXPECT_EQ(plan->ability.auth->name, "API_KEY");
  EXPECT_EQ(plan->ability.env, (std::map<std::string, std::string>{{"MODE", "a"}}));
  EXPECT_THAT(formatAbility(plan->ability), Not(HasSubstr("k1")));

  AbilityDraft remote{.name = "r",
                      .transport = Transport::kHttp,
                      .url = "https://h/mcp",
                      .headers = {{"Authorization", "Bearer abc def"}}};
  plan = planAbility(remote);
  ASSERT_TRUE(plan) << plan.error().describe();
  EXPECT_EQ(plan->ability.auth->prefix, "Bearer ");
  EXPECT_EQ(plan->key, "abc def");
  EXPECT_EQ(plan->ability.auth->in, KeyPlacement::kHeader);

  AbilityDraft reference{
      .name = "g", .command = "/bin/cat", .env = {{"GITHUB_TOKEN", "${GITHUB_TOKEN}"}}};
  auto referenced = planAbility(reference);
  ASSERT_TRUE(referenced) << referenced.error().describe();
  EXPECT_FALSE(referenced->key);
  EXPECT_EQ(referenced->keyReference, "${GITHUB_TOKEN}");
  EXPECT_EQ(referenced->ability.auth->name, "GITHUB_TOKEN");
  EXPECT_TRUE(referenced->ability.env.empty());

  local.env.emplace_back("OTHER_TOKEN", "k2");
  auto two = planAbility(local);
  ASSERT_FALSE(two);
  EXPECT_THAT(two.error().message, HasSubstr("one key per ability"));
  remote.headers = {{"X-Trace", "1"}};
  EXPECT_FALSE(planAbility(remote));
  remote.headers = {{"Authorization", "Bearer a\r\nX-Injected: 1"}};
  EXPECT_FALSE(planAbility(remote));
}

TEST(ManifestWriterTest, WritesOnlyWhatTheLoaderAccepts) {
  testing::TempDir dir;
  const std::string abilities = dir.path() + "/abilities";
  auto written = writeAbilityManifest(abilities, "good", "command = \"/bin/cat\"\n", false);
  ASSERT_TRUE(written) << written.error().describe();
  EXPECT_EQ(written->manifestPath, abilities + "/good/mcp.toml");
  EXPECT_EQ(entries(abilities), std::vector<std::string>{"good"});

  auto bad = writeAbilityManifest(abilities, "bad", "command = \"/bin/cat\"\nurl = \"x\"\n", false);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().context, abilities + "/bad/mcp.toml:2");
  auto syntax = writeAbilityManifest(abilities, "syntax", "command = \n", false);
  ASSERT_FALSE(syntax);
  EXPECT_THAT(syntax.error().context, ::testing::StartsWith(abilities + "/syntax/mcp.toml:"));
  EXPECT_EQ(entries(abilities), std::vector<std::string>{"good"});

  // Replacing: refused without `replace`, and a refused replacement keeps the old file.
  EXPECT_FALSE(writeAbilityManifest(abilities, "good", "command = \"/bin/echo\"\n", false));
  EXPECT_FALSE(writeAbilityManifest(abilities, "good", "command = 1\n", true));
  EXPECT_EQ(testing::readFile(abilities + "/good/mcp.toml"), "command = \"/bin/cat\"\n");
  EXPECT_EQ(entries(abilities + "/good"), std::vector<std::string>{"mcp.toml"});

  // A hook that fails stops the write.
  auto hooked = writeAbilityManifest(abilities, "hooked", "command = \"/bin/cat\"\n", false,
                                     [] { return fail(ErrorCode::kIo, "no"); });
  EXPECT_FALSE(hooked);
  EXPECT_EQ(entries(abilities), std::vector<std::string>{"good"});
  EXPECT_FALSE(writeAbilityManifest(abilities, "../up", "command = \"/bin/cat\"\n", false));
  EXPECT_FALSE(fs::exists(dir.path() + "/up"));
}

TEST(ManifestWriterTest, PersonaRoundTripsThroughItsLoader) {
  Persona persona;
  persona.name = "p";
  persona.description = "a \"quoted\"\nline";
  persona.abilities = {{"plain", std::nullopt, {}},
                       {"narrow", std::vector<std::string>{"a", "b"}, {}},
                       {"fs", std::nullopt, {{"~/x", false, false}, {"/y z", true, true}}}};
  testing::TempDir dir;
  const std::string file = dir.path() + "/personas/p.toml";
  auto written = writePersonaFile(file, formatPersona(persona));
  ASSERT_TRUE(written) << written.error().describe();
  EXPECT_EQ(written->description, persona.description);
  ASSERT_EQ(written->abilities.size(), 3u);
  EXPECT_EQ(written->abilities[1].tools, persona.abilities[1].tools);
  EXPECT_EQ(written->abilities[2].roots[1].path, "/y z");
  EXPECT_TRUE(written->abilities[2].roots[1].readOnly);
  EXPECT_TRUE(written->abilities[2].roots[1].backup);
  EXPECT_FALSE(written->abilities[2].roots[0].readOnly);

  const std::string kept = testing::readFile(file);
  auto refused = writePersonaFile(file, "abilities = [\"bad name\"]\n");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().context, file + ":1");
  EXPECT_EQ(testing::readFile(file), kept);
  EXPECT_EQ(entries(dir.path() + "/personas"), std::vector<std::string>{"p.toml"});
  Persona empty;
  empty.name = "e";
  EXPECT_TRUE(writePersonaFile(dir.path() + "/personas/e.toml", formatPersona(empty)));
}

}  // namespace
}  // namespace kaja::core
