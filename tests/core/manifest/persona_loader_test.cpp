#include "core/manifest/persona_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace kaja::core {
namespace {

using ::testing::HasSubstr;

TEST(PersonaLoaderTest, ReadsNamesEntriesToolsAndRoots) {
  kaja::testing::TempDir dir;
  std::string file = dir.write("personas/writer.toml", R"(
description = "Writes notes"
abilities = [
  "context7",
  { name = "filesystem", tools = ["read_file", "write_file"], roots = [
      "~/notes",
      { path = "~/projects/site", readOnly = true },
      { path = "/etc/hypr", backup = true },
  ] },
]
)");
  auto persona = loadPersona(file);
  ASSERT_TRUE(persona.has_value()) << persona.error().describe();
  EXPECT_EQ(persona->name, "writer");
  EXPECT_EQ(persona->description, "Writes notes");
  ASSERT_EQ(persona->abilities.size(), 2u);
  EXPECT_EQ(persona->abilities[0].ability, "context7");
  EXPECT_FALSE(persona->abilities[0].tools.has_value());
  const auto& fs = persona->abilities[1];
  EXPECT_EQ(fs.ability, "filesystem");
  EXPECT_EQ(fs.tools, (std::vector<std::string>{"read_file", "write_file"}));
  ASSERT_EQ(fs.roots.size(), 3u);
  EXPECT_EQ(fs.roots[0].path, "~/notes");
  EXPECT_FALSE(fs.roots[0].readOnly);
  EXPECT_TRUE(fs.roots[1].readOnly);
  EXPECT_TRUE(fs.roots[2].backup);
}

TEST(PersonaLoaderTest, ErrorsNameFileLineAndKey) {
  kaja::testing::TempDir dir;
  struct Case {
    std::string toml;
    std::string expect;
    int line;
  };
  std::vector<Case> cases = {
      {"description = \"x\"\n", "needs an \"abilities\" list", 1},
      {"abilities = \"filesystem\"\n", "must be an array", 1},
      {"abilities = [\"a\"]\nabilites = []\n", "did you mean \"abilities\"?", 2},
      {"abilities = [\n  { name = \"fs\", tool = [\"x\"] },\n]\n",
       "did you mean \"abilities.tools\"?", 2},
      {"abilities = [\n  { name = \"fs\", roots = [\"relative/dir\"] },\n]\n",
       "must be absolute or start with ~/", 2},
      {"abilities = [\n  { name = \"fs\", roots = [{ path = \"/x\", readonly = true }] },\n]\n",
       "did you mean \"abilities.roots.readOnly\"?", 2},
      {"abilities = [\"bad name\"]\n", "not a valid ability name", 1},
      {"abilities = [\"fs\", \"fs\"]\n", "twice", 1},
      {"abilities = [3]\n", "not an integer", 1},
      {"abilities = [\n  { name = \"fs\", roots = [\"~bob/x\"] },\n]\n", "another user's home", 2},
  };
  for (const auto& c : cases) {
    std::string file = dir.write("personas/p.toml", c.toml);
    auto persona = loadPersona(file);
    ASSERT_FALSE(persona.has_value()) << c.toml;
    EXPECT_THAT(persona.error().message, HasSubstr(c.expect)) << c.toml;
    EXPECT_EQ(persona.error().context, file + ":" + std::to_string(c.line)) << c.toml;
  }
}

}  // namespace
}  // namespace kaja::core
