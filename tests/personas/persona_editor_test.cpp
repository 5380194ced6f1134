#include "personas/persona_editor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kaja::personas {
namespace {

using ::testing::HasSubstr;

core::Persona sample() {
  core::Persona persona;
  persona.name = "p";
  persona.abilities = {{"time", std::nullopt, {}},
                       {"filesystem", std::nullopt, {{"~/docs", false, true}}}};
  return persona;
}

bool takesFolders(const std::string& name) { return name == "filesystem" || name == "drive"; }

TEST(PersonaEditorTest, AddAndRemoveAbilities) {
  core::Persona persona = sample();
  EXPECT_FALSE(addAbility(persona, "time", std::nullopt));
  EXPECT_TRUE(addAbility(persona, "time", std::vector<std::string>{"now"}));
  EXPECT_EQ(persona.abilities[0].tools, (std::vector<std::string>{"now"}));
  EXPECT_TRUE(addAbility(persona, "filesystem", std::vector<std::string>{"read"}));
  EXPECT_EQ(persona.abilities[1].roots.size(), 1u);  // its folders stay
  EXPECT_TRUE(addAbility(persona, "git", std::nullopt));
  EXPECT_EQ(persona.abilities.back().ability, "git");

  EXPECT_TRUE(removeAbility(persona, "git"));
  auto missing = removeAbility(persona, "tme");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("did you mean \"time\"?"));
  EXPECT_EQ(persona.abilities.size(), 2u);
}

TEST(PersonaEditorTest, FolderPathsMustBeAbsoluteOrHome) {
  EXPECT_EQ(folderPath("/srv/data/"), "/srv/data");
  EXPECT_EQ(folderPath("~/x"), "~/x");
  EXPECT_EQ(folderPath("/"), "/");
  EXPECT_FALSE(folderPath("docs"));
  EXPECT_FALSE(folderPath("./docs"));
  EXPECT_FALSE(folderPath(""));
  EXPECT_FALSE(folderPath("~bob/x"));
}

TEST(PersonaEditorTest, FoldersGoToTheAbilityThatTakesThem) {
  core::Persona persona = sample();
  auto entry = folderEntry(persona, std::nullopt, takesFolders);
  ASSERT_TRUE(entry);
  EXPECT_EQ((*entry)->ability, "filesystem");
  EXPECT_TRUE(addFolder(**entry, {"/data", true, false}));
  EXPECT_FALSE(addFolder(**entry, {"/data", true, false}));
  EXPECT_TRUE(addFolder(**entry, {"/data", false, false}));
  EXPECT_EQ((*entry)->roots.size(), 2u);
  EXPECT_FALSE((*entry)->roots[1].readOnly);

  EXPECT_FALSE(folderEntry(persona, std::string("time"), takesFolders));
  EXPECT_FALSE(folderEntry(persona, std::string("drive"), takesFolders));
  addAbility(persona, "drive", std::nullopt);
  auto several = folderEntry(persona, std::nullopt, takesFolders);
  ASSERT_FALSE(several);
  EXPECT_THAT(several.error().message, HasSubstr("--ability"));
  EXPECT_TRUE(folderEntry(persona, std::string("drive"), takesFolders));

  EXPECT_TRUE(removeFolder(persona, "/data", std::nullopt));
  auto gone = removeFolder(persona, "/data", std::nullopt);
  ASSERT_FALSE(gone);
  EXPECT_THAT(gone.error().message, HasSubstr("~/docs"));
  EXPECT_FALSE(removeFolder(persona, "~/docs", std::string("drive")));
  EXPECT_TRUE(removeFolder(persona, "~/docs", std::string("filesystem")));
}

}  // namespace
}  // namespace kaja::personas
