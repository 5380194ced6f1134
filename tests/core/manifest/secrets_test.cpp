#include "core/manifest/secrets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/temp_dir.h"

namespace kaja::core {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(SecretsTest, MissingFileIsEmpty) {
  kaja::testing::TempDir dir;
  auto secrets = Secrets::load(dir.path() + "/nope/secrets.toml");
  ASSERT_TRUE(secrets.has_value());
  EXPECT_FALSE(secrets->key("geo").has_value());
}

TEST(SecretsTest, SaveWritesMode0600AtomicallyAndRoundTrips) {
  kaja::testing::TempDir dir;
  std::string file = dir.path() + "/config/kaja/secrets.toml";
  Secrets secrets;
  secrets.set("geo-service", "AIza\"quoted\\slash");
  secrets.set("context7", "ctx-123");
  ::umask(022);
  ASSERT_TRUE(secrets.save(file).has_value());
  struct stat info {};
  ASSERT_EQ(::stat(file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((dir.path() + "/config/kaja").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  EXPECT_FALSE(Secrets::permissionProblem(file).has_value());

  auto loaded = Secrets::load(file);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().describe();
  EXPECT_EQ(loaded->key("geo-service"), "AIza\"quoted\\slash");
  EXPECT_EQ(loaded->key("context7"), "ctx-123");

  // No temporary file is left beside it.
  int entries = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator(dir.path() + "/config/kaja")) {
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(SecretsTest, RemoveKeepsOtherKeys) {
  kaja::testing::TempDir dir;
  std::string file = dir.path() + "/secrets.toml";
  Secrets secrets;
  secrets.set("a", "1");
  secrets.set("b", "2");
  EXPECT_TRUE(secrets.remove("a"));
  EXPECT_FALSE(secrets.remove("a"));
  ASSERT_TRUE(secrets.save(file).has_value());
  auto loaded = Secrets::load(file);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_FALSE(loaded->has("a"));
  EXPECT_EQ(loaded->key("b"), "2");
}

TEST(SecretsTest, ReadableByOthersIsReportedWithFix) {
  kaja::testing::TempDir dir;
  std::string file = dir.write("secrets.toml", "[abilities.x]\napi_key = \"k\"\n");
  ::chmod(file.c_str(), 0644);
  auto problem = Secrets::permissionProblem(file);
  ASSERT_TRUE(problem.has_value());
  EXPECT_THAT(*problem, HasSubstr("chmod 600"));
  ::chmod(file.c_str(), 0640);
  EXPECT_TRUE(Secrets::permissionProblem(file).has_value());
  ::chmod(file.c_str(), 0600);
  EXPECT_FALSE(Secrets::permissionProblem(file).has_value());
}

TEST(SecretsTest, BrokenFileErrorNeverQuotesTheKey) {
  kaja::testing::TempDir dir;
  std::string file =
      dir.write("secrets.toml", "[abilities.geo]\napi_key = \"sk-live-SECRET-VALUE\n");
  auto loaded = Secrets::load(file);
  ASSERT_FALSE(loaded.has_value());
  EXPECT_THAT(loaded.error().describe(), Not(HasSubstr("SECRET")));
  EXPECT_THAT(loaded.error().detail, Not(HasSubstr("SECRET")));
  EXPECT_THAT(loaded.error().context, HasSubstr("secrets.toml:"));
}

TEST(SecretsTest, UnknownKeysAndWrongTypesAreErrors) {
  kaja::testing::TempDir dir;
  auto typo = Secrets::load(dir.write("a.toml", "[abilities.geo]\napikey = \"v\"\n"));
  ASSERT_FALSE(typo.has_value());
  EXPECT_THAT(typo.error().message, HasSubstr("did you mean \"abilities.geo.api_key\"?"));
  auto number = Secrets::load(dir.write("b.toml", "[abilities.geo]\napi_key = 5\n"));
  ASSERT_FALSE(number.has_value());
  EXPECT_THAT(number.error().message, HasSubstr("must be a string"));
}

TEST(SecretsTest, CheckKeyRefusesEmptyAndControlCharacters) {
  EXPECT_FALSE(Secrets::checkKey("").has_value());
  EXPECT_FALSE(Secrets::checkKey("abc\ndef").has_value());
  EXPECT_FALSE(Secrets::checkKey("abc\tdef").has_value());
  EXPECT_TRUE(Secrets::checkKey("sk-abc_DEF.123").has_value());
}

TEST(SecretsTest, ControlCharactersInAHandEditedKeyAreRefusedWithoutShowingIt) {
  // Each spelling a hand edit or a hostile file can give: TOML escapes and raw bytes.
  const std::vector<std::pair<std::string, std::string>> spellings = {
      {"crlf", R"("SECRETVALUE\r\nX-Injected: 1")"},
      {"lf", R"("SECRETVALUE\nHost: evil")"},
      {"cr", R"("SECRETVALUE\r")"},
      {"nul", R"("SECRETVALUE\u0000")"},
      {"tab", R"("SECRETVALUE\tX")"},
      {"esc", R"("SECRETVALUE\u001b[2J")"},
      {"del", R"("SECRETVALUE\u007f")"},
      {"c1 next line", R"("SECRETVALUE\u0085X")"},
      {"multi-line string", "\"\"\"SECRETVALUE\nX-Injected: 1\"\"\""},
      {"literal multi-line", "'''SECRETVALUE\r\nX: 1'''"},
  };
  for (const auto& [spelling, value] : spellings) {
    kaja::testing::TempDir dir;
    std::string file = dir.write(
        "secrets.toml",
        "[abilities.good]\napi_key = \"fine\"\n[abilities.geo]\napi_key = " + value + "\n");
    auto loaded = Secrets::load(file);
    ASSERT_FALSE(loaded.has_value()) << spelling;
    std::string said = loaded.error().describe() + loaded.error().detail;
    EXPECT_EQ(loaded.error().code, ErrorCode::kInvalidConfig) << spelling;
    EXPECT_THAT(said, HasSubstr(file)) << spelling;
    EXPECT_THAT(said, HasSubstr("\"geo\"")) << spelling;
    EXPECT_THAT(said, HasSubstr("control character")) << spelling;
    EXPECT_THAT(said, Not(HasSubstr("SECRET"))) << spelling;
    EXPECT_THAT(said, Not(HasSubstr("Inject"))) << spelling;
    EXPECT_EQ(said.find('\n'), std::string::npos) << spelling;
  }
}

TEST(SecretsTest, AnAbilityNameWithAControlCharacterIsShownEscaped) {
  kaja::testing::TempDir dir;
  std::string file =
      dir.write("secrets.toml", "[abilities.\"a\\u001b[31mb\"]\napi_key = \"k\\r\\n\"\n");
  auto loaded = Secrets::load(file);
  ASSERT_FALSE(loaded.has_value());
  EXPECT_THAT(loaded.error().describe(), HasSubstr(R"("a\u001b[31mb")"));
  EXPECT_EQ(loaded.error().describe().find('\x1b'), std::string::npos);
}

TEST(SecretsTest, CheckKeyRefusesC1ControlsToo) {
  EXPECT_FALSE(Secrets::checkKey("abc\u0085def").has_value());
  EXPECT_FALSE(Secrets::checkKey("abc\u009bdef").has_value());
  EXPECT_TRUE(Secrets::checkKey("abc\u00a0def\u00e9").has_value());
}

TEST(SecretsTest, AKeyForOneScriptIsNotSentToAnotherRunByTheSameInterpreter) {
  kaja::testing::TempDir dir;
  const std::string file = dir.path() + "/secrets.toml";
  Ability mine;
  mine.name = "notes";
  mine.command = "/usr/bin/node";
  mine.args = {"/srv/notes.js"};
  Secrets secrets;
  secrets.setFor(mine, "sk-notes-1");
  ASSERT_TRUE(secrets.save(file).has_value());

  for (const auto& args : std::vector<std::vector<std::string>>{
           {"/srv/other.js"}, {"/srv/notes.js", "--upload-to", "evil"}, {}, {"/srv/notes.js "}}) {
    Ability moved = mine;
    moved.args = args;
    auto loaded = Secrets::load(file);
    ASSERT_TRUE(loaded.has_value());
    EXPECT_TRUE(loaded->withholdMoved(moved)) << ::testing::PrintToString(args);
    EXPECT_FALSE(loaded->key("notes").has_value());
  }
  auto same = Secrets::load(file);
  ASSERT_TRUE(same.has_value());
  EXPECT_FALSE(same->withholdMoved(mine));
  EXPECT_EQ(same->key("notes"), "sk-notes-1");

  // A key stored when only the program counted still counts for that program.
  dir.write("old.toml",
            "[abilities.notes]\napi_key = \"sk-old\"\nfor = \"command:/usr/bin/node\"\n");
  auto old = Secrets::load(dir.path() + "/old.toml");
  ASSERT_TRUE(old.has_value()) << old.error().message;
  EXPECT_FALSE(old->withholdMoved(mine));
  Ability other = mine;
  other.command = "/bin/sh";
  EXPECT_TRUE(old->withholdMoved(other));
}

}  // namespace
}  // namespace kaja::core
