// `kaja doctor` end to end on a temporary marketplace of real and broken servers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/run_on_terminal.h"
#include "tests/support/temp_dir.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// Joins the lines a long persona problem was wrapped onto (indented by more than its own).
std::string unwrapped(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && text.compare(i + 1, 5, "     ") == 0) {
      while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
      out += ' ';
      continue;
    }
    out += text[i];
  }
  return out;
}

int modeOf(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 ? static_cast<int>(info.st_mode & 07777) : -1;
}

std::string npmScript(const std::string& package) {
  return std::string(kaja::test::sourceDir()) + "/tests/npm/node_modules/@modelcontextprotocol/" +
         package + "/dist/index.js";
}

class DoctorCliTest : public ::testing::Test {
 protected:
  DoctorCliTest() {
    market_ = root_.path() + "/market";
    root_.write("market/abilities/everything/mcp.toml",
                "command = \"node\"\nargs = [\"" + npmScript("server-everything") +
                    "\", \"stdio\"]\ntools = [\"echo\", \"get-sum\"]\n");
    root_.write("market/abilities/files/mcp.toml",
                "command = \"node\"\nargs = [\"" + npmScript("server-filesystem") +
                    "\"]\nroots = true\npathArgs = [\"path\"]\n");
    root_.write("home/notes/hello.txt", "hi");
    root_.write("market/personas/default.toml",
                "abilities = [{ name = \"files\", roots = [\"~/notes\", \"~/gone\"] }]\n");
  }
  [[nodiscard]] std::vector<std::string> env() const {
    return {"HOME=" + home(),
            "XDG_CONFIG_HOME=" + root_.path() + "/config",
            "XDG_DATA_HOME=" + root_.path() + "/data",
            "PATH=/usr/local/bin:/usr/bin:/bin",
            "KAJA_SHIPPED_MARKETPLACE=" + market_,
            "NO_COLOR=1"};
  }
  [[nodiscard]] std::string home() const { return root_.path() + "/home"; }
  json doctor(std::vector<std::string> extra, int& exitCode) {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja", "doctor",
                                     "--json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto result = testing::runCommand(argv, env());
    exitCode = result.exitCode;
    stderr_ = result.err;
    return json::parse(result.out, nullptr, false);
  }
  testing::CommandResult doctorTable(std::vector<std::string> extra) {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja", "doctor"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return testing::runCommand(argv, env());
  }
  // Writes a persona of the user's own (in the user's marketplace layer).
  void userPersona(const std::string& name, const std::string& toml) {
    root_.write("config/kaja/marketplace/personas/" + name + ".toml", toml);
  }
  static std::vector<json> problemsOf(const json& report, const std::string& persona) {
    std::vector<json> out;
    for (const auto& item : report["personas"]) {
      if (item["persona"] == persona) out.push_back(item);
    }
    return out;
  }
  static json row(const json& report, const std::string& name) {
    for (const auto& item : report["abilities"]) {
      if (item["name"] == name) return item;
    }
    return json();
  }
  testing::TempDir root_;
  std::string market_;
  std::string stderr_;
};

TEST_F(DoctorCliTest, ReportsEveryAbilityAndFailsOnlyForBrokenOnes) {
  root_.write("market/abilities/crashes/mcp.toml",
              "command = \"/bin/sh\"\nargs = [\"-c\", \"echo bad config >&2; exit 3\"]\n");
  root_.write("market/abilities/silent/mcp.toml", "command = \"/bin/sleep\"\nargs = [\"600\"]\n");
  root_.write("market/abilities/absent/mcp.toml", "command = \"kaja-no-such-program\"\n");
  root_.write("market/abilities/keyed/mcp.toml",
              "command = \"/bin/cat\"\nauth = { type = \"apiKey\", in = \"env\", name = \"K\" }\n");
  root_.write("market/abilities/typo/mcp.toml", "comand = \"/bin/cat\"\n");

  int exitCode = -1;
  json report = doctor({"--timeout", "4", "--verbose"}, exitCode);
  ASSERT_TRUE(report.is_object()) << stderr_;
  EXPECT_EQ(exitCode, 1);
  EXPECT_EQ(report["ok"], false);
  EXPECT_EQ(report["abilities"].size(), 7u);

  json everything = row(report, "everything");
  EXPECT_EQ(everything["state"], "ok");
  EXPECT_GT(everything["tools"].get<int>(), 5);
  EXPECT_EQ(everything["offered"], json({"echo", "get-sum"}));
  EXPECT_GT(everything["schemaChars"].get<int>(), 50);
  EXPECT_GE(everything["ms"].get<int>(), 0);

  json files = row(report, "files");
  EXPECT_EQ(files["state"], "ok");
  EXPECT_THAT(files["hint"].get<std::string>(), HasSubstr("~/gone"));

  json crashes = row(report, "crashes");
  EXPECT_EQ(crashes["state"], "failed");
  EXPECT_THAT(crashes["stderr"].get<std::string>(), HasSubstr("bad config"));
  EXPECT_FALSE(crashes["error"].is_null());

  json silent = row(report, "silent");
  EXPECT_EQ(silent["state"], "failed");
  EXPECT_THAT(silent["error"].get<std::string>(), HasSubstr("did not answer within 4 s"));

  json absent = row(report, "absent");
  EXPECT_EQ(absent["state"], "left-out");
  EXPECT_THAT(absent["hint"].get<std::string>(), HasSubstr("kaja-no-such-program"));

  json keyed = row(report, "keyed");
  EXPECT_EQ(keyed["state"], "off");
  EXPECT_THAT(keyed["hint"].get<std::string>(), HasSubstr("kaja key set keyed"));

  json typo = row(report, "typo");
  EXPECT_EQ(typo["state"], "failed");
  EXPECT_THAT(typo["error"].get<std::string>(), HasSubstr("did you mean \"command\"?"));
}

TEST_F(DoctorCliTest, AllGoodExitsZeroAndNamesRootsServersWithoutFolders) {
  root_.write("market/personas/default.toml", "abilities = [\"everything\"]\n");
  int exitCode = -1;
  json report = doctor({}, exitCode);
  ASSERT_TRUE(report.is_object()) << stderr_;
  EXPECT_EQ(exitCode, 0) << report.dump(2);
  EXPECT_EQ(report["ok"], true);
  json files = row(report, "files");
  EXPECT_EQ(files["state"], "ok");
  EXPECT_THAT(files["hint"].get<std::string>(), HasSubstr("no persona gives it folders"));
}

TEST_F(DoctorCliTest, NamedAbilitiesOnlyAndUnknownNameIsUsageError) {
  int exitCode = -1;
  json report = doctor({"everything"}, exitCode);
  EXPECT_EQ(exitCode, 0);
  EXPECT_EQ(report["abilities"].size(), 1u);
  doctor({"nope"}, exitCode);
  EXPECT_EQ(exitCode, 2);
  EXPECT_THAT(stderr_, HasSubstr("no ability named \"nope\""));
  doctor({"--timeout", "soon"}, exitCode);
  EXPECT_EQ(exitCode, 2);
}

TEST_F(DoctorCliTest, WarnsWhenAPersonaOffersTooManyTools) {
  root_.write(
      "market/abilities/everything/mcp.toml",
      "command = \"node\"\nargs = [\"" + npmScript("server-everything") + "\", \"stdio\"]\n");
  for (int i = 0; i < 4; ++i) {
    root_.write(
        "market/abilities/copy" + std::to_string(i) + "/mcp.toml",
        "command = \"node\"\nargs = [\"" + npmScript("server-everything") + "\", \"stdio\"]\n");
  }
  root_.write("market/personas/big.toml",
              "abilities = [\"everything\", \"copy0\", \"copy1\", \"copy2\", \"copy3\"]\n");
  int exitCode = -1;
  json report = doctor({}, exitCode);
  ASSERT_TRUE(report.is_object()) << stderr_;
  ASSERT_EQ(report["warnings"].size(), 1u) << report["warnings"].dump();
  EXPECT_THAT(report["warnings"][0].get<std::string>(), HasSubstr("persona \"big\" offers"));
}

TEST_F(DoctorCliTest, ServersCheapLastTimeStartAtLowerPriority) {
  // `nice` prints the server's niceness to stderr, which --json --verbose shows.
  root_.write("market/abilities/everything/mcp.toml",
              "command = \"/bin/sh\"\nargs = [\"-c\", \"echo niceness=$(nice) >&2; exec node " +
                  npmScript("server-everything") + " stdio\"]\n");
  root_.write("data/kaja/connect-costs.json", "{\"everything\": 100, \"files\": 9000}");
  int exitCode = -1;
  json report = doctor({"--verbose"}, exitCode);
  ASSERT_TRUE(report.is_object()) << stderr_;
  EXPECT_EQ(exitCode, 0) << report.dump(2);
  json everything = row(report, "everything");
  json files = row(report, "files");
  EXPECT_EQ(everything["lowPriority"], true);
  EXPECT_EQ(files["lowPriority"], false);
  EXPECT_THAT(everything["stderr"].get<std::string>(), HasSubstr("niceness=10"));

  // What each used this time replaces what was remembered.
  json remembered = json::parse(testing::readFile(root_.path() + "/data/kaja/connect-costs.json"),
                                nullptr, false);
  ASSERT_TRUE(remembered.is_object());
  EXPECT_EQ(remembered["files"], files["cpuMs"]);
  EXPECT_EQ(remembered["everything"], everything["cpuMs"]);
  // A node server cannot start on less than 10 ms of CPU.
  EXPECT_GT(files["cpuMs"].get<long>(), 10);
  EXPECT_LT(files["cpuMs"].get<long>(), 9000);

  // The table marks the slowed row's time and says why under it.
  root_.write("data/kaja/connect-costs.json", "{\"everything\": 100, \"files\": 9000}");
  auto table = testing::runCommand(
      {std::string(kaja::test::binDir()) + "/kaja", "doctor"},
      {"HOME=" + root_.path() + "/home", "XDG_CONFIG_HOME=" + root_.path() + "/config",
       "XDG_DATA_HOME=" + root_.path() + "/data", "PATH=/usr/local/bin:/usr/bin:/bin",
       "KAJA_SHIPPED_MARKETPLACE=" + market_, "NO_COLOR=1"});
  EXPECT_THAT(table.out, ::testing::MatchesRegex("(.|\n)*everything +ok +[0-9/]+ +[0-9]+ "
                                                 "ms\\*(.|\n)*"));
  EXPECT_THAT(table.out, HasSubstr("\n* quick last time, so started at lower CPU priority"));

  // Named alone, nothing is slowed.
  report = doctor({"everything", "--verbose"}, exitCode);
  EXPECT_EQ(row(report, "everything")["lowPriority"], false);
}

TEST_F(DoctorCliTest, UserAbilityWithAMissingProgramFailsWhileAShippedOneIsLeftOut) {
  root_.write("market/abilities/absent/mcp.toml", "command = \"kaja-no-such-program\"\n");
  root_.write("config/kaja/marketplace/abilities/notes/mcp.toml",
              "command = \"/nonexistent/notes-mcp\"\n");
  root_.write("config/kaja/marketplace/abilities/onpath/mcp.toml",
              "command = \"kaja-notes-mcp\"\n");
  root_.write("config/kaja/marketplace/abilities/plainfile/mcp.toml",
              "command = \"" + root_.path() + "/home/notes/hello.txt\"\n");
  int exitCode = -1;
  json report = doctor({"absent", "notes", "onpath", "plainfile"}, exitCode);
  ASSERT_TRUE(report.is_object()) << stderr_;
  EXPECT_EQ(exitCode, 1);
  EXPECT_EQ(row(report, "absent")["state"], "left-out");

  json notes = row(report, "notes");
  EXPECT_EQ(notes["state"], "failed");
  EXPECT_EQ(notes["error"],
            "its program /nonexistent/notes-mcp does not exist; install it there or fix "
            "\"command\" in " +
                root_.path() + "/config/kaja/marketplace/abilities/notes/mcp.toml.");
  json onpath = row(report, "onpath");
  EXPECT_EQ(onpath["state"], "failed");
  EXPECT_THAT(onpath["error"].get<std::string>(),
              HasSubstr("its program \"kaja-notes-mcp\" is not on PATH; install it, or give its "
                        "full path as \"command\" in "));
  EXPECT_THAT(row(report, "plainfile")["error"].get<std::string>(),
              HasSubstr("is not an executable file; make it one (chmod +x)"));

  // The shipped one alone that cannot run here is no failure.
  report = doctor({"absent"}, exitCode);
  EXPECT_EQ(exitCode, 0) << report.dump(2);

  // The table's NOTE says it too.
  auto table = doctorTable({"notes"});
  EXPECT_EQ(table.exitCode, 1);
  EXPECT_THAT(table.out, ::testing::MatchesRegex("(.|\n)*notes +failed +- +- +- +its program "
                                                 "/nonexistent/notes-mcp does not exist(.|\n)*"));
}

TEST_F(DoctorCliTest, CrashedServersShowTheTellingStderrLine) {
  std::string missing = root_.write("servers/missing.js", "require('kaja-no-such-module');\n");
  std::string throws = root_.write("servers/throws.js",
                                   "console.error('notes 1.0 starting');\n"
                                   "throw new Error('bad config: NOTES_TOKEN is not set');\n");
  std::string noisy =
      root_.writeScript("servers/noisy.sh",
                        // It reads kaja's initialize first, so it dies with its message
                        // and not on a closed stdin that kaja's write would find.
                        "read -r request\necho 'notes server 2.1' >&2\n"
                        "echo 'loading plugins' >&2\n"
                        "echo 'error: cannot open /var/notes.db' >&2\necho 'bye' >&2\nexit 3");
  root_.write("market/abilities/missing/mcp.toml",
              "command = \"node\"\nargs = [\"" + missing + "\"]\n");
  root_.write("market/abilities/throws/mcp.toml",
              "command = \"node\"\nargs = [\"" + throws + "\"]\n");
  root_.write("market/abilities/noisy/mcp.toml", "command = \"" + noisy + "\"\n");
  int exitCode = -1;
  json report = doctor({"missing", "throws", "noisy"}, exitCode);
  ASSERT_TRUE(report.is_object()) << stderr_;
  EXPECT_EQ(exitCode, 1);
  std::string missingError = row(report, "missing")["error"];
  EXPECT_THAT(missingError,
              HasSubstr("(its stderr says: \"Error: Cannot find module 'kaja-no-such-module'\")."));
  EXPECT_THAT(missingError, ::testing::Not(HasSubstr("Node.js v")));
  EXPECT_THAT(row(report, "throws")["error"].get<std::string>(),
              HasSubstr("\"Error: bad config: NOTES_TOKEN is not set\""));
  EXPECT_THAT(row(report, "noisy")["error"].get<std::string>(),
              HasSubstr("exited with status 3 (its stderr says: \"error: cannot open "
                        "/var/notes.db\")."));
}

TEST_F(DoctorCliTest, TenMegabytesOfStderrAreBoundedAndTheErrorStillShows) {
  root_.write("market/abilities/flood/mcp.toml",
              "command = \"/bin/sh\"\nargs = [\"-c\", \"yes 'noise noise noise' | head -n 600000 "
              ">&2; echo 'Error: out of disk' >&2; yes x | head -c 2000 >&2; exit 1\"]\n");
  testing::RunOptions options;
  options.timeoutSeconds = 60;
  auto result = testing::runCommandWith(
      {std::string(kaja::test::binDir()) + "/kaja", "doctor", "--json", "--verbose", "flood"},
      env(), options);
  ASSERT_FALSE(result.timedOut);
  EXPECT_EQ(result.exitCode, 1) << result.err;
  json report = json::parse(result.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << result.err;
  json flood = row(report, "flood");
  EXPECT_THAT(flood["error"].get<std::string>(), HasSubstr("\"Error: out of disk\""));
  EXPECT_LE(flood["stderr"].get<std::string>().size(), 64u * 1024);
  if (kaja::testing::kMemoryIsMeasured) {
    EXPECT_LT(result.peakRssKb, 200 * 1024) << "kaja kept the flood";
  }
}

TEST_F(DoctorCliTest, NamesEveryPersonaProblemWithItsFileAndLine) {
  userPersona("work", "description = \"work\"\nabilities = [\n  \"everything\",\n  \"fils\",\n]\n");
  userPersona("typo", "abilites = [\"everything\"]\n");
  userPersona("writer",
              "abilities = [\n  { name = \"files\", roots = [\n    \"~/notes\",\n"
              "    { path = \"~/My Docs\", readOnly = true },\n  ] },\n]\n");
  root_.write("home/afile", "not a folder");
  userPersona("odd",
              "abilities = [{ name = \"files\", roots = [\"~/afile\"] }, \"nothing-like\"]\n");
  int exitCode = -1;
  json report = doctor({}, exitCode);
  ASSERT_TRUE(report.is_object()) << stderr_;
  EXPECT_EQ(exitCode, 1);
  EXPECT_EQ(report["ok"], false);
  const std::string userDir = root_.path() + "/config/kaja/marketplace/personas/";

  auto work = problemsOf(report, "work");
  ASSERT_EQ(work.size(), 1u) << report["personas"].dump(2);
  EXPECT_EQ(work[0]["kind"], "unknown-ability");
  EXPECT_EQ(work[0]["file"], userDir + "work.toml");
  EXPECT_EQ(work[0]["line"], 4);
  EXPECT_EQ(work[0]["fails"], true);
  EXPECT_EQ(work[0]["detail"], "lists \"fils\", which is no ability; did you mean \"files\"?");

  auto typo = problemsOf(report, "typo");
  ASSERT_EQ(typo.size(), 1u);
  EXPECT_EQ(typo[0]["kind"], "broken");
  EXPECT_EQ(typo[0]["line"], 1);
  EXPECT_THAT(typo[0]["detail"].get<std::string>(), HasSubstr("did you mean \"abilities\"?"));

  auto writer = problemsOf(report, "writer");
  ASSERT_EQ(writer.size(), 1u) << report["personas"].dump(2);
  EXPECT_EQ(writer[0]["kind"], "missing-folder");
  EXPECT_EQ(writer[0]["line"], 4);
  EXPECT_EQ(writer[0]["folder"], home() + "/My Docs");
  EXPECT_EQ(writer[0]["detail"],
            "gives files ~/My Docs, which does not exist; create it with mkdir -p ~/'My Docs'.");

  auto odd = problemsOf(report, "odd");
  ASSERT_EQ(odd.size(), 2u) << report["personas"].dump(2);
  EXPECT_EQ(odd[0]["kind"], "not-a-folder");
  EXPECT_EQ(odd[1]["kind"], "unknown-ability");
  EXPECT_EQ(odd[1]["detail"],
            "lists \"nothing-like\", which is no ability; fix the name or remove it (`kaja "
            "abilities` lists them).");

  // The shipped default's ~/gone is a hint: this machine need not have it.
  auto shipped = problemsOf(report, "default");
  ASSERT_EQ(shipped.size(), 1u);
  EXPECT_EQ(shipped[0]["shipped"], true);
  EXPECT_EQ(shipped[0]["fails"], false);
  EXPECT_THAT(shipped[0]["detail"].get<std::string>(), HasSubstr("does not exist on this machine"));

  // The table shows them after the abilities, one line each; without a terminal nothing is
  // asked and nothing created.
  auto table = doctorTable({});
  EXPECT_EQ(table.exitCode, 1);
  const std::string text = unwrapped(table.out);
  // However the line wraps, the command stays whole, to be copied.
  EXPECT_THAT(table.out, HasSubstr("mkdir -p ~/'My Docs'."));
  EXPECT_THAT(text, HasSubstr("\nPersonas:\n  problem: persona \"odd\" ("));
  EXPECT_THAT(text, HasSubstr("\n  problem: persona \"work\" (" + userDir +
                              "work.toml:4) lists \"fils\", which is no ability; did you mean "
                              "\"files\"?\n"));
  // Hints come after the problems.
  EXPECT_THAT(text, HasSubstr("'My Docs'.\n  hint: persona \"default\" (shipped, " + market_ +
                              "/personas/default.toml:1) gives files ~/gone"));
  EXPECT_THAT(text, HasSubstr("\n2 of 2 abilities connected; fix the persona problems above.\n"));
  EXPECT_THAT(table.out + table.err, ::testing::Not(HasSubstr("[y/N]")));
  EXPECT_FALSE(std::filesystem::exists(home() + "/My Docs"));

  // Named abilities: only the entries for them.
  report = doctor({"everything"}, exitCode);
  EXPECT_EQ(report["personas"].size(), 0u) << report["personas"].dump(2);
  EXPECT_EQ(exitCode, 0);
}

TEST_F(DoctorCliTest, ShippedPersonaProblemsAloneDoNotFail) {
  int exitCode = -1;
  auto table = doctorTable({});
  EXPECT_EQ(table.exitCode, 0) << table.out << table.err;
  EXPECT_THAT(unwrapped(table.out), HasSubstr("create it with mkdir -p ~/gone."));
  EXPECT_THAT(table.out, HasSubstr("every ability that is on works."));

  // With every folder there, the section says so.
  root_.write("home/gone/.keep", "");
  table = doctorTable({});
  EXPECT_EQ(table.exitCode, 0);
  EXPECT_THAT(table.out, HasSubstr("\nPersonas: 1 checked; each loads, names abilities that "
                                   "exist and gives folders that exist.\n"));

  // A chosen persona that is gone fails.
  root_.write("config/kaja/persona", "vanished\n");
  json report = doctor({}, exitCode);
  EXPECT_EQ(exitCode, 1);
  auto gone = problemsOf(report, "vanished");
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0]["kind"], "unknown-active");
}

TEST_F(DoctorCliTest, OnATerminalOffersToCreateMissingFolders) {
  std::filesystem::create_directories(root_.path() + "/elsewhere");
  std::filesystem::create_symlink(root_.path() + "/elsewhere", home() + "/linked");
  std::filesystem::create_symlink(root_.path() + "/outside/target", home() + "/dangling");
  userPersona("writer",
              "abilities = [{ name = \"files\", roots = [\"~/new/deep\", \"~/declined\", "
              "\"~/dangling/sub\", \"~/linked/made\", \"~/new/deep\"] }]\n");
  root_.write("home/gone/.keep", "");
  std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja", "doctor", "files"};
  auto run = testing::runOnTerminal(argv, env(),
                                    {{"create ~/new/deep? [y/N] ", "y"},
                                     {"create ~/declined? [y/N] ", "n"},
                                     {"create ~/linked/made? [y/N] ", "yes"}});
  EXPECT_THAT(run.output, HasSubstr("kaja: created ~/new/deep (mode 0700)."));
  EXPECT_THAT(run.output, HasSubstr("kaja: created ~/linked/made (mode 0700)."));
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("create ~/dangling/sub?")));
  // Asked once per folder, though listed twice.
  EXPECT_EQ(run.output.find("create ~/new/deep?"), run.output.rfind("create ~/new/deep?"));
  EXPECT_EQ(modeOf(home() + "/new"), 0700);
  EXPECT_EQ(modeOf(home() + "/new/deep"), 0700);
  EXPECT_FALSE(std::filesystem::exists(home() + "/declined"));
  // An existing symlink to a folder leads where the persona's path leads; a dangling one is
  // never created through.
  EXPECT_TRUE(std::filesystem::is_directory(root_.path() + "/elsewhere/made"));
  EXPECT_FALSE(std::filesystem::exists(root_.path() + "/outside"));
  // Still failing: the declined folder and the dangling link.
  EXPECT_EQ(run.exitCode, 1) << run.output;

  int exitCode = -1;
  json report = doctor({"files"}, exitCode);
  auto left = problemsOf(report, "writer");
  ASSERT_EQ(left.size(), 2u) << report["personas"].dump(2);
  EXPECT_EQ(left[0]["folder"], home() + "/declined");
  EXPECT_THAT(left[1]["detail"].get<std::string>(),
              HasSubstr("~/dangling is a symlink to " + root_.path() +
                        "/outside/target, which is "
                        "missing"));

  // Once all are there, the terminal run asks nothing and passes.
  std::filesystem::create_directories(home() + "/declined");
  std::filesystem::remove(home() + "/dangling");
  std::filesystem::create_directories(home() + "/dangling/sub");
  run = testing::runOnTerminal(argv, env(), {});
  EXPECT_EQ(run.exitCode, 0) << run.output;
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("[y/N]")));
}

}  // namespace
}  // namespace kaja::cli
