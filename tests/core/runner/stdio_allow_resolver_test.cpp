// Runner resolution under the stdio allow-list, and what an ability's env may pass to a real
// child (U5).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "core/manifest/ability_loader.h"
#include "core/manifest/toml_value.h"
#include "core/process/child_process.h"
#include "core/runner/runner_resolver.h"
#include "tests/support/temp_dir.h"

namespace kaja::core {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class StdioAllowResolverTest : public ::testing::Test {
 protected:
  std::string stub(const std::string& name) { return bin_.writeScript("bin/" + name, "exit 0"); }
  RunnerContext context(std::initializer_list<std::string_view> allow = {}, bool withList = true) {
    RunnerContext ctx{ExecutableFinder(bin_.path() + "/bin", {}), HostEnv{}, {}, {}};
    ctx.host.set("PATH", bin_.path() + "/bin");
    ctx.host.set("HOME", "/home/tester");
    ctx.dockerAnswers = [](const std::string&) { return true; };
    if (withList) {
      StdioAllowList list;
      list.whereToAdd = "allow under [stdio] in /etc/kaja/config.toml";
      for (auto entry : allow) {
        auto rule = parseStdioAllowRule(entry);
        EXPECT_TRUE(rule.has_value()) << entry;
        if (rule) list.rules.push_back(*rule);
      }
      ctx.stdioAllow = std::move(list);
    }
    return ctx;
  }
  static Ability ability(const std::string& toml, const std::string& name = "demo") {
    auto root = parseTomlText(toml, "test.toml");
    EXPECT_TRUE(root.has_value()) << root.error().describe();
    auto parsed = abilityFromToml(*root, name, "test.toml");
    EXPECT_TRUE(parsed.has_value()) << parsed.error().describe();
    return *parsed;
  }
  [[nodiscard]] std::string path(const std::string& relative) const {
    return bin_.path() + "/" + relative;
  }
  kaja::testing::TempDir bin_;
};

TEST_F(StdioAllowResolverTest, WithoutAListEveryStdioAbilityStarts) {
  stub("srv");
  auto res = resolveAbility(ability("command = \"srv\"\nargs = [\"--anything\"]\n"),
                            context({}, false), std::nullopt);
  EXPECT_EQ(res.state, AbilityState::kOn) << res.reason;
}

TEST_F(StdioAllowResolverTest, TheRuleMatchesTheRunnerKajaChooses) {
  const std::string npx = stub("npx");
  stub("node");
  const Ability files =
      ability("package = { npm = \"@scope/server@1.2.3\" }\nargs = [\"/home/a\"]\n", "files");
  auto allowed = resolveAbility(files, context({"npx -y @scope/server@1.2.3 *"}), std::nullopt);
  ASSERT_EQ(allowed.state, AbilityState::kOn) << allowed.reason;
  EXPECT_THAT(allowed.launch->argv, ElementsAre(npx, "-y", "@scope/server@1.2.3", "/home/a"));

  // An absolute rule names one file: kaja's npx here is another.
  auto elsewhere =
      resolveAbility(files, context({"/usr/bin/npx -y @scope/server@1.2.3 *"}), std::nullopt);
  EXPECT_EQ(elsewhere.state, AbilityState::kRefused);
  EXPECT_FALSE(elsewhere.launch.has_value());
  EXPECT_EQ(elsewhere.runner, RunnerKind::kNpx);
  EXPECT_STREQ(toString(elsewhere.state), "refused");
  EXPECT_EQ(elsewhere.reason,
            "the stdio allow-list does not allow ability files's command line `" + npx +
                " -y @scope/server@1.2.3 /home/a`; to allow it, add that line to allow under "
                "[stdio] in /etc/kaja/config.toml (end it with ` *` to allow further arguments)");

  // Once bun is installed kaja runs bunx, which the npx rule does not allow.
  const std::string bunx = stub("bunx");
  auto viaBun = resolveAbility(files, context({"npx -y @scope/server@1.2.3 *"}), std::nullopt);
  EXPECT_EQ(viaBun.state, AbilityState::kRefused);
  EXPECT_THAT(viaBun.reason, HasSubstr("`" + bunx + " @scope/server@1.2.3 /home/a`"));
  auto bunAllowed = resolveAbility(
      files, context({"npx -y @scope/server@1.2.3 *", "bunx @scope/server@1.2.3 *"}), std::nullopt);
  EXPECT_EQ(bunAllowed.state, AbilityState::kOn) << bunAllowed.reason;
}

TEST_F(StdioAllowResolverTest, AManifestCannotReachAnAllowedLineByAnotherProgram) {
  stub("npx");
  const auto allow = context({"npx -y @scope/server@1.2.3 *"});
  // The same name elsewhere: an ability's own npx.
  kaja::testing::TempDir other;
  const std::string ownNpx = other.writeScript("npx", "exit 0");
  auto own = resolveAbility(
      ability("command = \"" + ownNpx + "\"\nargs = [\"-y\", \"@scope/server@1.2.3\"]\n"), allow,
      std::nullopt);
  EXPECT_EQ(own.state, AbilityState::kRefused);
  EXPECT_THAT(own.reason, HasSubstr("`" + ownNpx + " -y @scope/server@1.2.3`"));
  // A look-alike name on PATH (Cyrillic 'х' for 'x').
  const std::string lookAlike = stub("np\xD1\x85");
  auto alike = resolveAbility(
      ability("command = \"np\xD1\x85\"\nargs = [\"-y\", \"@scope/server@1.2.3\"]\n"), allow,
      std::nullopt);
  EXPECT_EQ(alike.state, AbilityState::kRefused);
  // The allowed program by name through `command`, with the allowed words: the same line.
  auto same = resolveAbility(
      ability("command = \"npx\"\nargs = [\"-y\", \"@scope/server@1.2.3\", \"x\"]\n"), allow,
      std::nullopt);
  EXPECT_EQ(same.state, AbilityState::kOn) << same.reason;
  // An argument that merely starts like the allowed one, or holds the rest after a space.
  auto longer =
      resolveAbility(ability("command = \"npx\"\nargs = [\"-y\", \"@scope/server@1.2.3-evil\"]\n"),
                     allow, std::nullopt);
  EXPECT_EQ(longer.state, AbilityState::kRefused);
  auto joined = resolveAbility(ability("command = \"npx\"\nargs = [\"-y @scope/server@1.2.3\"]\n"),
                               allow, std::nullopt);
  EXPECT_EQ(joined.state, AbilityState::kRefused);
}

TEST_F(StdioAllowResolverTest, ExactRulesAllowNoExtraArgumentAndStarsAreLiteralInArgv) {
  const std::string srv = stub("srv");
  auto run = [&](const std::string& args, std::initializer_list<std::string_view> allow) {
    return resolveAbility(ability("command = \"srv\"\nargs = " + args + "\n"), context(allow),
                          std::nullopt)
        .state;
  };
  EXPECT_EQ(run("[\"--flag\"]", {"srv --flag"}), AbilityState::kOn);
  EXPECT_EQ(run("[\"--flag\", \"--evil\"]", {"srv --flag"}), AbilityState::kRefused);
  EXPECT_EQ(run("[]", {"srv --flag"}), AbilityState::kRefused);
  EXPECT_EQ(run("[\"--flag\"]", {"srv   --flag  "}), AbilityState::kOn);
  EXPECT_EQ(run("[\"--flag\"]", {srv + " --flag"}), AbilityState::kOn);
  // An argument that is a star is an argument: only a quoted star, or a final `*`, allows it.
  EXPECT_EQ(run("[\"*\"]", {"srv"}), AbilityState::kRefused);
  EXPECT_EQ(run("[\"*\"]", {"srv \"*\""}), AbilityState::kOn);
  EXPECT_EQ(run("[\"x\"]", {"srv \"*\""}), AbilityState::kRefused);
  EXPECT_EQ(run("[\"*\", \"x\"]", {"srv *"}), AbilityState::kOn);
  // `..` in the absolute path kaja runs is not the normal path a rule must give.
  std::filesystem::create_directories(path("sub"));
  RunnerContext dotted = context({srv});
  dotted.finder = ExecutableFinder(path("sub") + "/../bin", {});
  auto viaDots = resolveAbility(ability("command = \"srv\"\n"), dotted, std::nullopt);
  EXPECT_EQ(viaDots.state, AbilityState::kRefused);
  EXPECT_THAT(viaDots.reason, HasSubstr("`" + path("sub") + "/../bin/srv`"));
}

TEST_F(StdioAllowResolverTest, DockerFlagsArePartOfTheLine) {
  const std::string docker = stub("docker");
  const Ability image =
      ability("package = { docker = \"mcp/thing:1\" }\nenv = { MODE = \"1\" }\n", "thing");
  auto allowed =
      resolveAbility(image, context({"docker run -i --rm -e MODE mcp/thing:1"}), std::nullopt);
  ASSERT_EQ(allowed.state, AbilityState::kOn) << allowed.reason;
  auto refused = resolveAbility(image, context({"docker run -i --rm mcp/thing:1"}), std::nullopt);
  EXPECT_EQ(refused.state, AbilityState::kRefused);
  EXPECT_THAT(refused.reason, HasSubstr("`" + docker + " run -i --rm -e MODE mcp/thing:1`"));
}

TEST_F(StdioAllowResolverTest, RemoteAndSandboxedAbilitiesRunNothingHere) {
  stub("node");
  auto remote = resolveAbility(ability("transport = \"http\"\nurl = \"https://mcp.example/mcp\"\n"),
                               context({}), std::nullopt);
  EXPECT_EQ(remote.state, AbilityState::kOn);
  RunnerContext withSandbox = context({});
  withSandbox.sandbox = SandboxTarget{"http://127.0.0.1:9", "alice", "t", false, "c.toml", {}};
  auto sandboxed = resolveAbility(ability("command = \"node\"\ntools = [\"echo\"]\n", "echo"),
                                  withSandbox, std::nullopt);
  EXPECT_EQ(sandboxed.state, AbilityState::kOn);
  EXPECT_EQ(sandboxed.runner, RunnerKind::kSandbox);
  // One that stays here is held to the list.
  auto local = resolveAbility(ability("command = \"node\"\nlocalOnly = true\n", "local"),
                              withSandbox, std::nullopt);
  EXPECT_EQ(local.state, AbilityState::kRefused);
}

// Starts `res`'s plan for real and returns the environment the child printed, line by line.
std::vector<std::string> childEnvironment(const Resolution& res) {
  EXPECT_TRUE(res.launch.has_value()) << res.reason;
  if (!res.launch) return {};
  auto child = ChildProcess::start(*res.launch);
  EXPECT_TRUE(child.has_value()) << child.error().message;
  if (!child) return {};
  UniqueFd out = (*child)->takeStdout();
  std::string text;
  char buffer[4096];
  for (ssize_t n = 0; (n = ::read(out.get(), buffer, sizeof buffer)) > 0;) {
    text.append(buffer, static_cast<size_t>(n));
  }
  const auto status = (*child)->terminate(1s);
  EXPECT_FALSE(status.signaled);
  EXPECT_EQ(status.code, 0);
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

TEST_F(StdioAllowResolverTest, AnAbilitysEnvNeverReachesTheLoaderOfARealChild) {
  // Each entry tries one way to set a loader variable; MODE is the one that must pass.
  const Ability risky = ability(R"(command = "/usr/bin/env"
[env]
LD_PRELOAD = "/nonexistent/kaja-evil.so"
ld_preload = "/nonexistent/lower.so"
Ld_Preload = "/nonexistent/mixed.so"
"LD_PRELOAD " = "/nonexistent/space.so"
"LD_PRELOAD=/nonexistent/eq.so" = ""
"NODE_OPTIONS=--require=/nonexistent/x.js --title" = "t"
"PATH=/nonexistent/bin:" = ""
"" = "empty"
NODE_OPTIONS = "--require /nonexistent/x.js"
NODE_PATH = "/nonexistent"
LD_LIBRARY_PATH = "/nonexistent"
LD_AUDIT = "/nonexistent/audit.so"
DYLD_INSERT_LIBRARIES = "/nonexistent/d.dylib"
BASH_ENV = "/nonexistent/rc"
PYTHONPATH = "/nonexistent"
npm_config_registry = "http://127.0.0.1:9/"
NPM_CONFIG_PREFIX = "/nonexistent"
Npm_Config_Cache = "/nonexistent"
PATH = "/nonexistent"
HOME = "/nonexistent"
MODE = "1"
)");
  auto res = resolveAbility(risky, context({}, false), std::nullopt);
  ASSERT_EQ(res.state, AbilityState::kOn) << res.reason;
  EXPECT_THAT(childEnvironment(res),
              ElementsAre("PATH=" + bin_.path() + "/bin", "HOME=/home/tester", "MODE=1"));
  EXPECT_EQ(res.warnings.size(), 20U);
  for (const auto& warning : res.warnings) EXPECT_THAT(warning, HasSubstr("is dropped"));
  EXPECT_THAT(res.launch->display(), Not(HasSubstr("LD_PRELOAD")));
  EXPECT_THAT(res.launch->display(), Not(HasSubstr("NODE_OPTIONS")));
}

TEST_F(StdioAllowResolverTest, AKeyNeverGoesInALoaderVariable) {
  auto keyed = [&](const std::string& name) {
    return ability(
        "command = \"/usr/bin/env\"\nauth = { type = \"apiKey\", in = \"env\", name = \"" + name +
        "\" }\n");
  };
  // The control: a plain name carries the key, so the checks below can fail.
  auto plain = resolveAbility(keyed("API_KEY"), context({}, false), std::string("k-123"));
  EXPECT_THAT(childEnvironment(plain),
              ElementsAre("PATH=" + bin_.path() + "/bin", "HOME=/home/tester", "API_KEY=k-123"));
  for (const std::string name :
       {"LD_PRELOAD", "NODE_OPTIONS", "npm_config_userconfig", "LD_PRELOAD=/nonexistent/evil.so"}) {
    auto res = resolveAbility(keyed(name), context({}, false), std::string("/nonexistent/k.so"));
    EXPECT_THAT(childEnvironment(res),
                ElementsAre("PATH=" + bin_.path() + "/bin", "HOME=/home/tester"))
        << name;
    EXPECT_THAT(res.warnings, Not(IsEmpty())) << name;
    EXPECT_THAT(res.launch->shownEnv, IsEmpty()) << name;
  }
}

TEST_F(StdioAllowResolverTest, DockerGetsNoLoaderVariableByName) {
  stub("docker");
  auto res = resolveAbility(
      ability("package = { docker = \"mcp/thing:1\" }\nauth = { type = \"apiKey\", in = \"env\", "
              "name = \"LD_PRELOAD\" }\n[env]\nMODE = \"1\"\n\"NODE_OPTIONS=--x\" = \"\"\n"
              "LD_PRELOAD = \"/x.so\"\n"),
      context({}, false), std::string("key"));
  ASSERT_EQ(res.state, AbilityState::kOn) << res.reason;
  EXPECT_THAT(res.launch->argv, ElementsAre(bin_.path() + "/bin/docker", "run", "-i", "--rm", "-e",
                                            "MODE", "mcp/thing:1"));
}

}  // namespace
}  // namespace kaja::core
