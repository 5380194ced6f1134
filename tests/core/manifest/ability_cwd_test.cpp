// The manifest's `cwd`: read and checked by the loader, written by the manifest writer,
// kept out of the cloud, and given to the process launcher by runner resolution.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/manifest/ability_loader.h"
#include "core/manifest/cloud_eligibility.h"
#include "core/manifest/manifest_writer.h"
#include "core/manifest/toml_value.h"
#include "core/runner/runner_resolver.h"
#include "tests/support/temp_dir.h"

namespace kaja::core {
namespace {

using ::testing::HasSubstr;

Result<Ability> parse(const std::string& toml) {
  auto root = parseTomlText(toml, "mcp.toml");
  if (!root) return std::unexpected(root.error());
  return abilityFromToml(*root, "demo", "mcp.toml");
}

TEST(AbilityCwdTest, LoaderReadsAnAbsoluteOrHomeFolder) {
  auto absolute = parse("command = \"/bin/cat\"\ncwd = \"/srv/data\"\n");
  ASSERT_TRUE(absolute) << absolute.error().describe();
  EXPECT_EQ(absolute->cwd, "/srv/data");
  auto home = parse("command = \"/bin/cat\"\ncwd = \"~/notes\"\n");
  ASSERT_TRUE(home) << home.error().describe();
  EXPECT_EQ(home->cwd, "~/notes");
  auto none = parse("command = \"/bin/cat\"\n");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->cwd.has_value());
  EXPECT_FALSE(none->isLocalOnly());
}

TEST(AbilityCwdTest, LoaderRefusesOtherFoldersNamingTheLine) {
  for (const char* value : {"relative/dir", "", "${workspaceFolder}", "~user/x"}) {
    auto refused = parse(std::string("command = \"/bin/cat\"\ncwd = \"") + value + "\"\n");
    ASSERT_FALSE(refused) << value;
    EXPECT_THAT(refused.error().message, HasSubstr("\"cwd\" must be an absolute path")) << value;
    EXPECT_EQ(refused.error().context, "mcp.toml:2") << value;
  }
  auto control = parse("command = \"/bin/cat\"\ncwd = \"/tmp/a\\nb\"\n");
  ASSERT_FALSE(control);
  EXPECT_THAT(control.error().message, HasSubstr("control characters"));
  auto remote = parse("transport = \"http\"\nurl = \"https://example.com/mcp\"\ncwd = \"/tmp\"\n");
  ASSERT_FALSE(remote);
  EXPECT_THAT(remote.error().message, HasSubstr("\"cwd\" only applies to stdio abilities"));
  auto typed = parse("command = \"/bin/cat\"\ncwd = 3\n");
  ASSERT_FALSE(typed);
  EXPECT_THAT(typed.error().describe(), HasSubstr("cwd"));
}

TEST(AbilityCwdTest, WriterKeepsItAndTheLoaderReadsItBack) {
  AbilityDraft draft;
  draft.name = "demo";
  draft.command = "/bin/cat";
  draft.cwd = "/srv/with \"quotes\" and \\ backslash";
  auto plan = planAbility(draft);
  ASSERT_TRUE(plan) << plan.error().describe();
  std::string text = formatAbility(plan->ability);
  EXPECT_THAT(text, HasSubstr("cwd = "));
  auto back = parse(text);
  ASSERT_TRUE(back) << back.error().describe() << "\n" << text;
  EXPECT_EQ(back->cwd, draft.cwd);
}

TEST(AbilityCwdTest, AServerWithAFolderStaysOnTheUsersMachine) {
  auto ability = parse("command = \"/bin/cat\"\ncwd = \"/srv\"\ntools = [\"read\"]\n");
  ASSERT_TRUE(ability);
  EXPECT_TRUE(ability->isLocalOnly());
  auto why = cloudRefusal(*ability, false);
  ASSERT_TRUE(why.has_value());
  EXPECT_THAT(*why, HasSubstr("cwd"));
}

TEST(AbilityCwdTest, RunnerStartsTheServerInItsFolder) {
  kaja::testing::TempDir bin;
  const std::string cat = bin.writeScript("bin/tool", "exit 0");
  RunnerContext context{ExecutableFinder(bin.path() + "/bin", {}), HostEnv{}, {}, {}};
  context.host.set("HOME", "/home/tester");
  auto home = parse("command = \"tool\"\ncwd = \"~/work\"\n");
  ASSERT_TRUE(home);
  Resolution resolved = resolveAbility(*home, context, std::nullopt);
  ASSERT_EQ(resolved.state, AbilityState::kOn) << resolved.reason;
  ASSERT_TRUE(resolved.launch.has_value());
  EXPECT_EQ(resolved.launch->argv.front(), cat);
  EXPECT_EQ(resolved.launch->workingDir, "/home/tester/work");

  auto plain = parse("command = \"tool\"\n");
  ASSERT_TRUE(plain);
  EXPECT_EQ(resolveAbility(*plain, context, std::nullopt).launch->workingDir, "");
}

}  // namespace
}  // namespace kaja::core
