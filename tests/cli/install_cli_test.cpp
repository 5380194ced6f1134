// `kaja install NAME`: a server kaja knows is shown, connected once and only then added to
// the active persona; a failure of any kind is reported and changes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_edit_fixture.h"
#include "tests/core/mcp/test_servers.h"
#include "tests/support/build_paths.h"

namespace kaja::testing {
namespace {

class InstallCliTest : public ::testing::Test, public CliEditFixture {
 protected:
  // A shipped ability that runs `script` under node with `args`, listed in no persona.
  void shipNode(const std::string& name, const std::string& script, const std::string& args) {
    root_.write("market/abilities/" + name + "/mcp.toml",
                "command = \"" + nodePath() + "\"\nargs = [\"" + script + "\"" + args + "]\n");
  }
  std::string persona() const { return readFile(userMarket() + "/personas/default.toml"); }
};

TEST_F(InstallCliTest, ShowsWhatRunsConnectsAndAddsItToThePersona) {
  shipNode("everything", npmServerScript("server-everything"), ", \"stdio\"");
  auto result = kaja({"install", "everything", "--json"});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_NE(result.err.find("installing everything: runs"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("shipped with kaja"), std::string::npos) << result.err;
  auto report = nlohmann::json::parse(result.out);
  EXPECT_GT(report["tools"].get<int>(), 5);
  EXPECT_NE(persona().find("everything"), std::string::npos) << persona();

  auto again = kaja({"install", "everything"});
  EXPECT_EQ(again.exitCode, 0);
  EXPECT_NE(again.err.find("already"), std::string::npos) << again.err;
}

TEST_F(InstallCliTest, FailuresAreReportedAndChangeNothing) {
  root_.write("tools/none.json", "[]");
  shipNode("empty",
           std::string(kaja::test::sourceDir()) + "/tests/servers/scripted_tools_server.mjs",
           ", \"" + root_.path() + "/tools/none.json\"");
  root_.write("market/abilities/dead/mcp.toml", "command = \"/bin/false\"\n");
  root_.write("market/abilities/keyed/mcp.toml",
              "command = \"/bin/cat\"\nauth = { type = \"apiKey\", in = \"env\", name = \"K\" }\n");
  const auto before = snapshot();

  auto empty = kaja({"install", "empty"});
  EXPECT_EQ(empty.exitCode, 1) << empty.err;
  EXPECT_NE(empty.err.find("offers no tools"), std::string::npos) << empty.err;
  auto dead = kaja({"install", "dead"});
  EXPECT_EQ(dead.exitCode, 4) << dead.err;
  EXPECT_NE(dead.err.find("did not connect, so it was not installed"), std::string::npos)
      << dead.err;
  auto keyed = kaja({"install", "keyed"});
  EXPECT_EQ(keyed.exitCode, 2) << keyed.err;
  EXPECT_NE(keyed.err.find("kaja key set keyed"), std::string::npos) << keyed.err;
  auto unknown = kaja({"install", "spotify-mcp"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_NE(unknown.err.find("kaja find spotify-mcp"), std::string::npos) << unknown.err;

  root_.write("config/kaja/marketplace/abilities/mine/mcp.toml", "command = \"/bin/cat\"\n");
  auto own = kaja({"install", "mine"});
  EXPECT_EQ(own.exitCode, 2);
  EXPECT_NE(own.err.find("kaja enable mine"), std::string::npos) << own.err;
  std::filesystem::remove_all(userMarket());
  EXPECT_EQ(snapshot(), before);
}

}  // namespace
}  // namespace kaja::testing
