#include "marketplace/catalog.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/build_paths.h"
#include "tests/support/temp_dir.h"

namespace kaja::marketplace {
namespace {

using ::testing::HasSubstr;

TEST(CatalogTest, UserLayerReplacesWholeEntryAndBrokenFilesHideNothing) {
  kaja::testing::TempDir shipped;
  kaja::testing::TempDir user;
  shipped.write("abilities/alpha/mcp.toml",
                "description = \"shipped alpha\"\ncommand = \"/bin/cat\"\ntools = [\"a\"]\n");
  shipped.write("abilities/beta/mcp.toml", "command = \"/bin/cat\"\n");
  shipped.write("personas/default.toml", "abilities = [\"alpha\", \"beta\"]\n");
  // The user's alpha has no tools list: the shipped one's must not leak through.
  user.write("abilities/alpha/mcp.toml", "description = \"mine\"\ncommand = \"/bin/true\"\n");
  user.write("abilities/gamma/mcp.toml", "command = \"/bin/cat\"\ntransport = \"htp\"\n");
  user.write("abilities/delta/mcp.toml", "command = \"/bin/cat\"\n");
  user.write("personas/default.toml", "abilities = [\"alpha\", \"gamma\", \"nope\"]\n");
  user.write("personas/broken.toml", "abilities = [\n");

  Catalog catalog = Catalog::load({shipped.path(), user.path()});
  ASSERT_EQ(catalog.abilities().size(), 4u);
  const core::Ability* alpha = catalog.findAbility("alpha");
  ASSERT_NE(alpha, nullptr);
  EXPECT_EQ(alpha->description, "mine");
  EXPECT_FALSE(alpha->tools.has_value());
  EXPECT_FALSE(alpha->shipped);
  ASSERT_NE(catalog.findAbility("beta"), nullptr);
  EXPECT_TRUE(catalog.findAbility("beta")->shipped);
  ASSERT_NE(catalog.findAbility("delta"), nullptr);

  const AbilityRecord* gamma = catalog.findAbilityRecord("gamma");
  ASSERT_NE(gamma, nullptr);
  EXPECT_EQ(catalog.findAbility("gamma"), nullptr);
  ASSERT_FALSE(gamma->ability.has_value());
  EXPECT_THAT(gamma->error.message, HasSubstr("did you mean \"http\"?"));

  ASSERT_EQ(catalog.personas().size(), 2u);
  const core::Persona* persona = catalog.findPersona("default");
  ASSERT_NE(persona, nullptr);
  EXPECT_EQ(persona->abilities.size(), 3u);
  const PersonaRecord& record = catalog.personas()[1];
  EXPECT_EQ(record.name, "default");
  ASSERT_EQ(record.warnings.size(), 2u);
  EXPECT_THAT(record.warnings[0], HasSubstr("\"gamma\", whose manifest is broken"));
  EXPECT_THAT(record.warnings[1], HasSubstr("\"nope\", but no such ability exists"));
  EXPECT_EQ(catalog.findPersona("broken"), nullptr);
  EXPECT_FALSE(catalog.personas()[0].persona.has_value());
}

TEST(CatalogTest, MissingLayersAreEmpty) {
  Catalog catalog = Catalog::load({"/nonexistent/kaja/a", "/nonexistent/kaja/b"});
  EXPECT_TRUE(catalog.abilities().empty());
  EXPECT_TRUE(catalog.personas().empty());
}

TEST(CatalogTest, ShippedMarketplaceLoadsCleanly) {
  Catalog catalog = Catalog::load({std::string(kaja::test::sourceDir()) + "/marketplace"});
  std::vector<std::string> names;
  for (const auto& record : catalog.abilities()) {
    EXPECT_TRUE(record.ability.has_value()) << record.name << ": " << record.error.describe();
    names.push_back(record.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"chrome-devtools", "context7", "filesystem",
                                             "geo-service", "sequential-thinking", "time"}));
  EXPECT_GE(catalog.personas().size(), 2u);
  for (const auto& record : catalog.personas()) {
    EXPECT_TRUE(record.persona.has_value()) << record.name;
    EXPECT_TRUE(record.warnings.empty()) << record.name;
  }
}

}  // namespace
}  // namespace kaja::marketplace
