// kaja completion and kaja __complete, through the real binary and real bash, fish and zsh;
// kaja help and the man page made from the same text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class CompletionCliTest : public ::testing::Test {
 protected:
  CompletionCliTest() {
    root_.write("config/kaja/marketplace/abilities/echo/mcp.toml",
                "description = \"echo\"\ncommand = \"/bin/cat\"\n");
    root_.write("config/kaja/marketplace/abilities/echo-two/mcp.toml",
                "description = \"echo two\"\ncommand = \"/bin/cat\"\n");
    root_.write("config/kaja/marketplace/personas/night.toml", "abilities = [\"echo\"]\n");
    root_.write("empty-market/abilities/.keep", "");
    fs::create_directories(root_.path() + "/home");
  }
  std::vector<std::string> env() const {
    return {"HOME=" + root_.path() + "/home", "XDG_CONFIG_HOME=" + root_.path() + "/config",
            "XDG_DATA_HOME=" + root_.path() + "/data",
            "KAJA_SHIPPED_MARKETPLACE=" + root_.path() + "/empty-market",
            // The shells find this build's kaja first.
            "PATH=" + std::string(kaja::test::binDir()) + ":/usr/bin:/bin", "NO_COLOR=1"};
  }
  testing::CommandResult kaja(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::runCommand(argv, env());
  }
  std::vector<std::string> complete(const std::vector<std::string>& words) const {
    std::vector<std::string> args = {"__complete"};
    args.insert(args.end(), words.begin(), words.end());
    auto result = kaja(args);
    EXPECT_EQ(result.exitCode, 0) << result.err;
    return lines(result.out);
  }
  // Plants what `kaja serve` would have cached about `ability`'s tools.
  void cacheTools(const std::string& ability, const json& tools) const {
    json entry = {{"format", 1}, {"ability", ability}, {"tools", tools}};
    root_.write("data/kaja/cache/metadata/" + ability + "-0123456789abcdef0123456789abcdef.json",
                entry.dump());
  }
  testing::TempDir root_;
};

TEST_F(CompletionCliTest, CompletesCommandsOptionsAndNames) {
  EXPECT_THAT(complete({"ca"}), ElementsAre("call"));
  EXPECT_THAT(complete({"--verbose", "doc"}), ElementsAre("doctor", "docker"));
  EXPECT_THAT(complete({"-"}), ElementsAre("--help", "--verbose", "--version"));
  EXPECT_THAT(complete({"call", "ec"}), ElementsAre("echo", "echo-two"));
  EXPECT_THAT(complete({"doctor", "echo", ""}), ElementsAre("echo", "echo-two"));
  EXPECT_THAT(complete({"call", "--"}), ElementsAre("--help", "--json", "--persona", "--yes"));
  // The value of --persona is a persona; after it come the positionals again.
  EXPECT_THAT(complete({"tools", "--persona", "n"}), ElementsAre("night"));
  EXPECT_THAT(complete({"call", "--persona", "night", "echo-t"}), ElementsAre("echo-two"));
  EXPECT_THAT(complete({"key", ""}), ElementsAre("list", "rm", "set"));
  EXPECT_THAT(complete({"key", "set", "echo-"}), ElementsAre("echo-two"));
  EXPECT_THAT(complete({"persona", "use", ""}), ElementsAre("night"));
  EXPECT_THAT(complete({"completion", ""}), ElementsAre("bash", "fish", "zsh"));
  EXPECT_THAT(complete({"help", "sa"}), ElementsAre("sandbox"));
  // Where a file or a free value goes, nothing: the shells then offer files.
  EXPECT_THAT(complete({"doctor", "--timeout", ""}), IsEmpty());
  EXPECT_THAT(complete({"nonsense", ""}), IsEmpty());
  EXPECT_THAT(complete({"add", "x", "--", ""}), IsEmpty());
  // A folder that is no valid ability name (a broken manifest) is never offered.
  root_.write("config/kaja/marketplace/abilities/echo;rm -rf ~/mcp.toml", "x");
  root_.write("config/kaja/marketplace/abilities/echo$(touch x)/mcp.toml", "x");
  EXPECT_THAT(complete({"get", "ec"}), ElementsAre("echo", "echo-two"));
}

TEST_F(CompletionCliTest, ToolsComeFromTheCacheAndOnlyPlainNamesAreOffered) {
  EXPECT_THAT(complete({"call", "echo", ""}), IsEmpty());
  cacheTools("echo", json::array({{{"name", "say"}},
                                  {{"name", "shout_loud"}},
                                  {{"name", "x; rm -rf ~"}},
                                  {{"name", "\x1b]0;pwned\x07"}},
                                  {{"name", "spaced name"}},
                                  {{"name", 42}},
                                  {{"name", std::string(300, 'a')}}}));
  EXPECT_THAT(complete({"call", "echo", ""}), ElementsAre("say", "shout_loud"));
  EXPECT_THAT(complete({"call", "echo", "sh"}), ElementsAre("shout_loud"));
  EXPECT_THAT(complete({"call", "echo-two", ""}), IsEmpty());
  // A link where the entry should be is not followed.
  fs::remove(root_.path() + "/data/kaja/cache/metadata/echo-0123456789abcdef0123456789abcdef.json");
  root_.write("elsewhere.json",
              json({{"ability", "echo"}, {"tools", {{{"name", "leak"}}}}}).dump());
  fs::create_symlink(
      root_.path() + "/elsewhere.json",
      root_.path() + "/data/kaja/cache/metadata/echo-0123456789abcdef0123456789abcdef.json");
  EXPECT_THAT(complete({"call", "echo", ""}), IsEmpty());
}

TEST_F(CompletionCliTest, BashUsesTheScriptKajaPrints) {
  // What bash does on Tab: the completion function fills COMPREPLY from the line so far.
  const std::string script = R"(source <(kaja completion bash)
complete -p kaja
for line in "kaja ca" "kaja call ec" "kaja tools --persona " "kaja key set echo-"; do
  COMP_LINE=$line COMP_POINT=${#line}
  _kaja
  printf '%s|' "$line" "${COMPREPLY[@]}"
  echo
done)";
  auto result = testing::runCommand({"/bin/bash", "--norc", "-c", script}, env());
  ASSERT_EQ(result.exitCode, 0) << result.err;
  auto out = lines(result.out);
  ASSERT_EQ(out.size(), 5u) << result.out;
  EXPECT_THAT(out[0], HasSubstr("-F _kaja kaja"));
  EXPECT_EQ(out[1], "kaja ca|call|");
  EXPECT_EQ(out[2], "kaja call ec|echo|echo-two|");
  EXPECT_EQ(out[3], "kaja tools --persona |night|");
  EXPECT_EQ(out[4], "kaja key set echo-|echo-two|");
}

TEST_F(CompletionCliTest, FishUsesTheScriptKajaPrints) {
  if (!fs::exists("/usr/bin/fish")) GTEST_SKIP() << "fish is not installed (.ci/setup)";
  auto env = this->env();
  env.push_back("XDG_RUNTIME_DIR=" + root_.path());
  const std::string script = R"(kaja completion fish | source
complete -C "kaja ca"
complete -C "kaja persona use "
complete -C "kaja call echo-")";
  auto result = testing::runCommand({"/usr/bin/fish", "--no-config", "-c", script}, env);
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_THAT(lines(result.out), ElementsAre("call", "night", "echo-two"));
  // Where kaja offers nothing, fish offers files.
  root_.write("home/notes.txt", "x");
  auto files = testing::runCommand(
      {"/usr/bin/fish", "--no-config", "-c",
       "cd " + root_.path() +
           "/home; kaja completion fish | source; complete -C 'kaja doctor --timeout no'"},
      env);
  EXPECT_THAT(lines(files.out), Contains("notes.txt"));
}

TEST_F(CompletionCliTest, ZshScriptIsValidAndRegistersItself) {
  if (!fs::exists("/usr/bin/zsh")) GTEST_SKIP() << "zsh is not installed (.ci/setup)";
  auto script = kaja({"completion", "zsh"});
  ASSERT_EQ(script.exitCode, 0);
  EXPECT_THAT(script.out, ::testing::StartsWith("#compdef kaja\n"));
  root_.write("kaja.zsh", script.out);
  auto syntax = testing::runCommand({"/usr/bin/zsh", "-n", root_.path() + "/kaja.zsh"}, env());
  EXPECT_EQ(syntax.exitCode, 0) << syntax.err;
  // Sourced after compinit, it registers _kaja for kaja.
  auto loaded = testing::runCommand({"/usr/bin/zsh", "-f", "-c",
                                     "autoload -Uz compinit && compinit -u -D && source " +
                                         root_.path() + "/kaja.zsh && print -r -- ${_comps[kaja]}"},
                                    env());
  EXPECT_EQ(loaded.exitCode, 0) << loaded.err;
  EXPECT_EQ(loaded.out, "_kaja\n");
}

TEST_F(CompletionCliTest, AnUnknownShellIsAUsageError) {
  auto result = kaja({"completion", "powershell"});
  EXPECT_EQ(result.exitCode, 2);
  EXPECT_THAT(result.err, HasSubstr("usage: kaja completion bash|zsh|fish"));
}

TEST_F(CompletionCliTest, HelpAndTheManPageSayWhatEachCommandsHelpSays) {
  auto usage = kaja({"--help"});
  auto help = kaja({"help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_EQ(help.out, usage.out);
  EXPECT_EQ(kaja({"help", "call"}).out, kaja({"call", "--help"}).out);
  EXPECT_EQ(kaja({"help", "docker", "mounts"}).out, kaja({"docker", "--help"}).out);
  auto unknown = kaja({"help", "cal"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_THAT(unknown.err, HasSubstr("did you mean \"call\"?"));
  auto man = kaja({"help", "--man"});
  ASSERT_EQ(man.exitCode, 0);
  EXPECT_THAT(man.out, ::testing::StartsWith(".TH KAJA 1"));
  root_.write("kaja.1", man.out);
  auto rendered = testing::runCommand({"/usr/bin/man", "-l", root_.path() + "/kaja.1"},
                                      {"PATH=/usr/bin:/bin", "MANWIDTH=250"});
  ASSERT_EQ(rendered.exitCode, 0) << rendered.err;
  // Every line of every command's help is in the rendered page, as --help prints it.
  for (const auto& command : lines(kaja({"help"}).out)) {
    if (!command.starts_with("  ") || command.starts_with("   ")) continue;
    const std::string name = command.substr(2, command.find(' ', 2) - 2);
    if (name.empty() || name[0] < 'a' || name[0] > 'z') continue;
    auto text = kaja({name, "--help"});
    ASSERT_EQ(text.exitCode, 0) << name;
    for (const auto& line : lines(text.out)) {
      const auto first = line.find_first_not_of(' ');
      if (first == std::string::npos || line.starts_with("Usage: ")) continue;
      // Shown in the C locale, as here, "…" is written "...".
      std::string plain = line.substr(first);
      for (size_t at; (at = plain.find("\u2026")) != std::string::npos;) {
        plain.replace(at, std::string("\u2026").size(), "...");
      }
      EXPECT_THAT(rendered.out, HasSubstr(plain)) << name;
    }
  }
}

}  // namespace
}  // namespace kaja
