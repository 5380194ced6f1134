// `kaja persona new|add|remove|folder` and `kaja enable|disable` end to end: each change is
// what `kaja personas --json` then loads; a shipped persona is changed as the user's copy.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_edit_fixture.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

class PersonaEditCliTest : public ::testing::Test, public testing::CliEditFixture {
 protected:
  json persona(const std::string& name) {
    auto listed = kaja({"personas", "--json"});
    EXPECT_EQ(listed.exitCode, 0) << listed.err;
    for (const auto& item : json::parse(listed.out)) {
      if (item["name"] == name) return item;
    }
    return nullptr;
  }
  static std::vector<std::string> abilityNames(const json& item) {
    std::vector<std::string> names;
    for (const auto& entry : item["abilities"]) names.push_back(entry["name"]);
    return names;
  }
  static json entry(const json& item, const std::string& ability) {
    for (const auto& each : item["abilities"]) {
      if (each["name"] == ability) return each;
    }
    return nullptr;
  }
  void expectRefusedUnchanged(const std::vector<std::string>& args, const std::string& words) {
    auto before = snapshot();
    auto result = kaja(args);
    EXPECT_EQ(result.exitCode, 2) << result.err;
    EXPECT_THAT(result.err, HasSubstr(words));
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_TRUE(result.err.ends_with(".\n") || result.err.ends_with("?\n")) << result.err;
    EXPECT_EQ(snapshot(), before) << "files changed by: " << result.err;
  }
};

TEST_F(PersonaEditCliTest, NewPersonaGetsAbilitiesToolsAndFolders) {
  ASSERT_EQ(kaja({"persona", "new", "work", "--description", "my \"work\""}).exitCode, 0);
  auto added = kaja({"persona", "add", "work", "echo", "--tools", "a, b"});
  ASSERT_EQ(added.exitCode, 0) << added.err;
  ASSERT_EQ(kaja({"persona", "add", "work", "files"}).exitCode, 0);
  auto folder = kaja({"persona", "folder", "add", "work", home_ + "/docs/", "--read-only"});
  ASSERT_EQ(folder.exitCode, 0) << folder.err;
  ASSERT_EQ(kaja({"persona", "folder", "add", "work", "~/notes", "--backup"}).exitCode, 0);

  json work = persona("work");
  ASSERT_FALSE(work.is_null());
  EXPECT_EQ(work["source"], "user");
  EXPECT_EQ(work["error"], nullptr);
  EXPECT_EQ(work["description"], "my \"work\"");
  EXPECT_EQ(abilityNames(work), (std::vector<std::string>{"echo", "files"}));
  EXPECT_EQ(entry(work, "echo")["tools"], json({"a", "b"}));
  json roots = entry(work, "files")["roots"];
  ASSERT_EQ(roots.size(), 2u);
  EXPECT_EQ(roots[0]["path"], home_ + "/docs");
  EXPECT_EQ(roots[0]["readOnly"], true);
  EXPECT_EQ(roots[1]["path"], "~/notes");
  EXPECT_EQ(roots[1]["backup"], true);

  ASSERT_EQ(kaja({"persona", "folder", "rm", "work", home_ + "/docs"}).exitCode, 0);
  ASSERT_EQ(kaja({"persona", "remove", "work", "echo"}).exitCode, 0);
  work = persona("work");
  EXPECT_EQ(abilityNames(work), (std::vector<std::string>{"files"}));
  EXPECT_EQ(entry(work, "files")["roots"].size(), 1u);
}

TEST_F(PersonaEditCliTest, ShippedPersonaIsChangedAsTheUsersCopy) {
  const std::string shipped = shippedMarket() + "/personas/default.toml";
  const std::string before = testing::readFile(shipped);
  auto disabled = kaja({"disable", "echo"});
  ASSERT_EQ(disabled.exitCode, 0) << disabled.err;
  EXPECT_THAT(disabled.err, HasSubstr("your own copy"));
  EXPECT_EQ(testing::readFile(shipped), before);
  json copy = persona("default");
  EXPECT_EQ(copy["source"], "user");
  EXPECT_EQ(abilityNames(copy), (std::vector<std::string>{"files"}));
  // The folders of the entries it kept stay as they were.
  EXPECT_EQ(entry(copy, "files")["roots"][0]["path"], "~/docs");

  ASSERT_EQ(kaja({"enable", "echo", "--tools", "x"}).exitCode, 0);
  copy = persona("default");
  EXPECT_EQ(abilityNames(copy), (std::vector<std::string>{"files", "echo"}));
  EXPECT_EQ(entry(copy, "echo")["tools"], json({"x"}));
  auto again = kaja({"enable", "echo"});
  EXPECT_EQ(again.exitCode, 0);
  EXPECT_THAT(again.err, HasSubstr("nothing was changed"));

  // A copy of a persona under a new name, made active, takes enable too.
  ASSERT_EQ(kaja({"persona", "new", "mine", "--from", "plain"}).exitCode, 0);
  ASSERT_EQ(kaja({"persona", "use", "mine"}).exitCode, 0);
  ASSERT_EQ(kaja({"enable", "files"}).exitCode, 0);
  EXPECT_EQ(abilityNames(persona("mine")), (std::vector<std::string>{"echo", "files"}));
  EXPECT_EQ(abilityNames(persona("plain")), (std::vector<std::string>{"echo"}));
}

TEST_F(PersonaEditCliTest, FolderNeedsAnAbilityThatTakesFolders) {
  ASSERT_EQ(kaja({"add", "files2", "--", "/bin/cat"}).exitCode, 0);
  // files2 takes no folders, so files is still the only one.
  ASSERT_EQ(kaja({"persona", "add", "default", "files2"}).exitCode, 0);
  auto given = kaja({"persona", "folder", "add", "default", "~/more"});
  EXPECT_EQ(given.exitCode, 0) << given.err;
  EXPECT_THAT(given.err, HasSubstr("does not exist yet"));
  EXPECT_EQ(entry(persona("default"), "files")["roots"].size(), 2u);
  expectRefusedUnchanged({"persona", "folder", "add", "default", "/x", "--ability", "files2"},
                         "takes no folders");
  expectRefusedUnchanged({"persona", "folder", "add", "plain", "/x"},
                         "lists no ability that takes folders");
}

TEST_F(PersonaEditCliTest, BadInputChangesNoFile) {
  ASSERT_EQ(kaja({"persona", "new", "work"}).exitCode, 0);
  expectRefusedUnchanged({"persona", "folder", "add", "default", "docs"}, "is relative");
  expectRefusedUnchanged({"persona", "folder", "add", "default", "~bob/x"}, "another user");
  expectRefusedUnchanged({"persona", "add", "defualt", "echo"}, "Did you mean \"default\"?");
  expectRefusedUnchanged({"persona", "add", "work", "ecoh"}, "Did you mean \"echo\"?");
  expectRefusedUnchanged({"persona", "remove", "default", "fils"}, "did you mean \"files\"?");
  expectRefusedUnchanged({"persona", "new", "work"}, "already exists");
  expectRefusedUnchanged({"persona", "new", "a/b"}, "not a valid persona name");
  expectRefusedUnchanged({"persona", "new", "copy", "--from", "nope"}, "no persona named");
  expectRefusedUnchanged({"persona", "folder", "rm", "default", "/not/there"}, "gives ~/docs");
  expectRefusedUnchanged({"disable", "nothing"}, "does not list");
  expectRefusedUnchanged({"persona", "add", "default", "echo", "--tools", ","}, "--tools");
}

}  // namespace
}  // namespace kaja::cli
