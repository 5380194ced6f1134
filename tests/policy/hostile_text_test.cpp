// Hostile text from a server, end to end through `kaja tools`, `kaja call` and `kaja doctor`:
// injections spelled to slip past the scanner, invisible and tag characters, terminal escapes,
// malformed and oversized results, stderr that is not UTF-8. The server is
// tests/servers/hostile_text_server.mjs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::policy_test {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// Byte sequences that must never reach a terminal from a server.
const std::vector<std::pair<std::string, std::string>>& terminalHazards() {
  static const std::vector<std::pair<std::string, std::string>> kHazards = {
      {"ESC", "\x1b"},         {"bare CR", "\r"},       {"BEL", "\x07"},
      {"8-bit CSI", "\x9b"},   {"C1 CSI", "\xc2\x9b"},  {"RLO", "\xe2\x80\xae"},
      {"LRI", "\xe2\x81\xa6"}, {"PDI", "\xe2\x81\xa9"}, {"ZWSP", "\xe2\x80\x8b"},
      {"tag", "\xf3\xa0\x81"},
  };
  return kHazards;
}

void expectTerminalSafe(const std::string& text, const std::string& what) {
  for (const auto& [name, bytes] : terminalHazards()) {
    EXPECT_EQ(text.find(bytes), std::string::npos) << name << " in " << what << ":\n" << text;
  }
}

class HostileTextTest : public ::testing::Test {
 protected:
  HostileTextTest() {
    std::string script =
        std::string(kaja::test::sourceDir()) + "/tests/servers/hostile_text_server.mjs";
    root_.write("market/abilities/h/mcp.toml",
                "command = \"node\"\nargs = [\"" + script + "\", \"serve\"]\n");
    root_.write("market/abilities/crash/mcp.toml",
                "command = \"node\"\nargs = [\"" + script + "\", \"crash\"]\n");
    root_.write("market/personas/p.toml", "abilities = [{ name = \"h\" }]\n");
    root_.write("home/.keep", "");
  }

  testing::CommandResult kaja(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    testing::RunOptions options;
    options.timeoutSeconds = 60;
    return testing::runCommandWith(
        argv,
        {"HOME=" + root_.path() + "/home", "XDG_CONFIG_HOME=" + root_.path() + "/config",
         "XDG_DATA_HOME=" + root_.path() + "/data", "PATH=/usr/local/bin:/usr/bin:/bin",
         "KAJA_SHIPPED_MARKETPLACE=" + root_.path() + "/market"},
        options);
  }

  testing::CommandResult readThroughFilesystem(size_t size);

  testing::TempDir root_;
};

TEST_F(HostileTextTest, ToolsOffersOnlyCleanToolsWithCleanText) {
  auto listed = kaja({"tools", "--persona", "p", "--json"});
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  json report = json::parse(listed.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << listed.out;
  std::set<std::string> offered;
  for (const auto& tool : report["tools"]) {
    offered.insert(tool["tool"].get<std::string>());
    // What the model is offered is exactly what was scanned: no invisible or control text.
    std::string description = tool["description"];
    for (std::string hidden : {"\u200b", "\u200d", "\u00ad", "\u2066", "\u2069", "\x07", "\x1b"}) {
      EXPECT_EQ(description.find(hidden), std::string::npos) << tool.dump();
    }
  }
  EXPECT_EQ(offered,
            (std::set<std::string>{"clean", "decorated", "blocks", "wrongtypes", "big", "large"}));
  std::set<std::string> dropped;
  for (const auto& drop : report["dropped"]) {
    dropped.insert(drop["tool"].get<std::string>());
    EXPECT_TRUE(drop["rule"].get<std::string>().starts_with("T7")) << drop["rule"];
  }
  for (const char* name :
       {"braille", "apostrophe", "dash", "middot", "script_g", "armenian_o", "tags"}) {
    EXPECT_TRUE(dropped.contains(name)) << name << " was offered: " << listed.out;
  }
  EXPECT_TRUE(dropped.contains("evil\x1b[31m\u202e")) << listed.out;
  for (const auto& tool : report["tools"]) {
    if (tool["tool"] == "decorated") {
      EXPECT_EQ(tool["description"], "Returns data with a bell and [31mcolour[0m.");
    }
  }
}

TEST_F(HostileTextTest, ToolsTableAndWarningsAreSafeOnATerminal) {
  auto listed = kaja({"tools", "--persona", "p"});
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  expectTerminalSafe(listed.out, "stdout");
  expectTerminalSafe(listed.err, "stderr");
  EXPECT_THAT(listed.out, HasSubstr("mcp__h__clean"));
  // The dropped tool's name is shown, escaped, on one warning line.
  EXPECT_THAT(listed.err, HasSubstr(R"(mcp__h__evil\u001b[31m\u202e left out)"));
  for (const auto& line : {"braille", "apostrophe", "armenian_o", "tags"}) {
    EXPECT_THAT(listed.err, HasSubstr(std::string("mcp__h__") + line + " left out"));
  }
}

// What server-filesystem sends for a large file: the text twice, in content and in
// structuredContent. Both copies are cut, with markers, and the call succeeds.
void expectLargeResultCut(const testing::CommandResult& called, size_t textBytes) {
  ASSERT_FALSE(called.timedOut);
  ASSERT_EQ(called.exitCode, 0) << called.err.substr(0, 2000);
  json result = json::parse(called.out, nullptr, false);
  ASSERT_FALSE(result.is_discarded());
  std::string text = result["content"][0]["text"];
  EXPECT_TRUE(text.starts_with(std::string(32768, 'f')));
  EXPECT_THAT(text, HasSubstr("[kaja: output cut here; " + std::to_string(textBytes - 32768) +
                              " more bytes of text were not shown"));
  std::string structured = result["structuredContent"]["content"];
  EXPECT_THAT(structured, HasSubstr("more bytes cut]"));
  EXPECT_LT(called.out.size(), 80'000u);
  if (kaja::testing::kMemoryIsMeasured) {
    EXPECT_LT(called.peakRssKb, 400'000);
  }
  EXPECT_LT(called.seconds, 30);
}

TEST_F(HostileTextTest, ALargeResultIsCutInContentAndStructuredContent) {
  expectLargeResultCut(kaja({"call", "--persona", "p", "--yes", "--json", "h", "large", "{}"}),
                       1'500'000);
}

TEST_F(HostileTextTest, ATwoMegabyteFileSentTwiceIsCutNotFailed) {
  auto called = kaja({"call", "--persona", "p", "--yes", "--json", "h", "big", "{}"});
  // The 2.2 MB text twice makes one 4.4 MB message: it needs a stdio read bound above 4 MB.
  if (called.err.find("line longer than 4 MB") != std::string::npos) {
    GTEST_SKIP() << "the stdio transport still reads at most 4 MB per message";
  }
  expectLargeResultCut(called, 2'200'000);
}

// The real server-filesystem reading a large text file: it sends the text in content and
// again in structuredContent.
testing::CommandResult HostileTextTest::readThroughFilesystem(size_t size) {
  std::string script = std::string(kaja::test::sourceDir()) +
                       "/tests/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/"
                       "index.js";
  root_.write("market/abilities/fs/mcp.toml", "command = \"node\"\nargs = [\"" + script +
                                                  "\"]\nroots = true\npathArgs = [\"path\"]\n");
  root_.write("market/personas/files.toml",
              "abilities = [{ name = \"fs\", roots = [\"~/docs\"] }]\n");
  std::string name = "docs/f" + std::to_string(size) + ".txt";
  root_.write("home/" + name, std::string(size, 'f'));
  return kaja({"call", "--persona", "files", "--json", "fs", "read_text_file",
               json({{"path", root_.path() + "/home/" + name}}).dump()});
}

TEST_F(HostileTextTest, ServerFilesystemLargeReadIsCutInBothCopies) {
  expectLargeResultCut(readThroughFilesystem(1'500'000), 1'500'000);
}

TEST_F(HostileTextTest, ServerFilesystemTwoMegabyteReadIsCutNotFailed) {
  auto called = readThroughFilesystem(2'200'000);
  if (called.err.find("line longer than 4 MB") != std::string::npos) {
    GTEST_SKIP() << "the stdio transport still reads at most 4 MB per message";
  }
  expectLargeResultCut(called, 2'200'000);
}

TEST_F(HostileTextTest, MalformedBlocksAreShownAsTextAndEverythingIsBounded) {
  auto called = kaja({"call", "--persona", "p", "--yes", "--json", "h", "blocks", "{}"});
  ASSERT_EQ(called.exitCode, 0) << called.err.substr(0, 2000);
  json result = json::parse(called.out, nullptr, false);
  ASSERT_FALSE(result.is_discarded());
  std::string all = result.dump();
  EXPECT_THAT(all, HasSubstr(R"(because its type \"TEXT\" is not one of)"));
  EXPECT_THAT(all, HasSubstr(R"(because its type \"Image\" is not one of)"));
  EXPECT_THAT(all, HasSubstr(R"(because its type \"foo\" is not one of)"));
  EXPECT_THAT(all, HasSubstr("bytes of _meta, annotations, names and other fields were cut"));
  EXPECT_THAT(all, HasSubstr("structured content was cut to its first"));
  EXPECT_LT(called.out.size(), 200'000u);  // the server sent over 2 MB
  expectTerminalSafe(called.out, "json");

  auto plain = kaja({"call", "--persona", "p", "--yes", "h", "blocks", "{}"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err.substr(0, 2000);
  expectTerminalSafe(plain.out, "stdout");
}

TEST_F(HostileTextTest, FieldsOfTheWrongTypeFailTheCallNamingTheField) {
  auto called = kaja({"call", "--persona", "p", "--yes", "--json", "h", "wrongtypes", "{}"});
  EXPECT_EQ(called.exitCode, 1) << called.out << called.err;
  EXPECT_THAT(called.err, HasSubstr("content[0].text is a number, not a string"));
  EXPECT_EQ(std::count(called.err.begin(), called.err.end(), '\n'), 1) << called.err;
  expectTerminalSafe(called.err, "stderr");
}

TEST_F(HostileTextTest, ResultTextReachesTheTerminalEscaped) {
  auto plain = kaja({"call", "--persona", "p", "--yes", "h", "decorated", "{}"});
  ASSERT_EQ(plain.exitCode, 0) << plain.err;
  expectTerminalSafe(plain.out, "stdout");
  EXPECT_THAT(plain.out, HasSubstr("line one\n"));
  EXPECT_THAT(plain.out, HasSubstr(R"(\u001b]0;pwned\u0007\u001b[2J\rline two\u202e end)"));
  EXPECT_THAT(plain.out, HasSubstr("invisible Unicode tag characters"));

  auto json = kaja({"call", "--persona", "p", "--yes", "--json", "h", "decorated", "{}"});
  ASSERT_EQ(json.exitCode, 0) << json.err;
  expectTerminalSafe(json.out, "json");
  EXPECT_THAT(json.out, HasSubstr(R"(line two\u202e end)"));
}

TEST_F(HostileTextTest, ErrorsFromTheServerAndQuotedArgumentsStayOnOneLine) {
  auto failed = kaja({"call", "--persona", "p", "--yes", "h", "clean", R"({"fail": true})"});
  EXPECT_NE(failed.exitCode, 0);
  expectTerminalSafe(failed.err, "stderr");
  EXPECT_THAT(failed.err, HasSubstr("clean"));
  EXPECT_THAT(failed.err, HasSubstr(R"(second line\u202e)"));
  EXPECT_EQ(std::count(failed.err.begin(), failed.err.end(), '\n'), 1) << failed.err;

  for (std::string name : {"no\x1b[31msuch", "two\nlines", "nul\u0085c1", "rlo\u202eexe"}) {
    // No such tool: a usage error, whose message quotes the name and the nearest one safely.
    auto unknown = kaja({"call", "--persona", "p", "--yes", "h", name, "{}"});
    EXPECT_EQ(unknown.exitCode, 2) << unknown.err;
    expectTerminalSafe(unknown.err, "stderr for " + name);
    EXPECT_EQ(std::count(unknown.err.begin(), unknown.err.end(), '\n'), 1) << unknown.err;
  }
}

TEST_F(HostileTextTest, DoctorSurvivesStderrThatIsNotUtf8) {
  auto asJson = kaja({"doctor", "--json", "--verbose"});
  EXPECT_FALSE(asJson.timedOut);
  EXPECT_EQ(asJson.exitCode, 1) << asJson.err;  // one ability failed; kaja did not abort
  json report = json::parse(asJson.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << asJson.out << asJson.err;
  expectTerminalSafe(asJson.out, "doctor --json");
  bool sawCrash = false;
  for (const auto& row : report["abilities"]) {
    if (row["name"] != "crash") continue;
    sawCrash = true;
    EXPECT_EQ(row["state"], "failed");
    std::string tail = row["stderr"];
    EXPECT_THAT(tail, HasSubstr("bad\uFFFD\uFFFD\uFFFD"));
    EXPECT_THAT(tail, HasSubstr("pwned title"));
  }
  EXPECT_TRUE(sawCrash) << asJson.out;

  auto plain = kaja({"doctor", "--verbose"});
  EXPECT_EQ(plain.exitCode, 1);
  expectTerminalSafe(plain.out, "doctor stdout");
  expectTerminalSafe(plain.err, "doctor stderr");
  EXPECT_THAT(plain.out, HasSubstr(R"(\u001b]0;pwned title\u0007)"));
  EXPECT_THAT(plain.out,
              HasSubstr(R"(fake prompt\r\u001b[2Kkaja: all checks passed \u202etxt.exe)"));
}

}  // namespace
}  // namespace kaja::policy_test
