#include "core/runner/runner_resolver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/manifest/ability_loader.h"
#include "core/manifest/toml_value.h"
#include "tests/support/temp_dir.h"

namespace kaja::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Every test builds its own PATH of stub executables: this machine has no PyPI and no
// Docker engine, so uvx, pipx and docker are shell scripts here, as are bun and npx.
class RunnerResolverTest : public ::testing::Test {
 protected:
  std::string stub(const std::string& name, const std::string& body = "exit 0") {
    return bin_.writeScript("bin/" + name, body);
  }
  RunnerContext context(std::vector<std::string> toolDirs = {}) {
    RunnerContext ctx{
        ExecutableFinder(bin_.path() + "/bin", std::move(toolDirs)), HostEnv{}, {}, {}};
    ctx.host.set("PATH", bin_.path() + "/bin");
    ctx.host.set("HOME", "/home/tester");
    return ctx;
  }
  Ability ability(const std::string& toml, const std::string& name = "demo") {
    auto root = parseTomlText(toml, "test.toml");
    EXPECT_TRUE(root.has_value());
    auto parsed = abilityFromToml(*root, name, "test.toml");
    EXPECT_TRUE(parsed.has_value()) << parsed.error().describe();
    return *parsed;
  }
  static std::string envValue(const LaunchPlan& plan, const std::string& name) {
    for (const auto& var : plan.env) {
      if (var.name == name) return var.value;
    }
    return "<unset>";
  }
  kaja::testing::TempDir bin_;
};

TEST_F(RunnerResolverTest, NpmPrefersBunxOnPath) {
  std::string bunx = stub("bunx");
  stub("npx");
  stub("node");
  auto res = resolveAbility(ability("package = { npm = \"pkg@1.0.0\" }\nargs = [\"--x\"]\n"),
                            context(), std::nullopt);
  ASSERT_EQ(res.state, AbilityState::kOn) << res.reason;
  EXPECT_EQ(res.runner, RunnerKind::kBunx);
  EXPECT_THAT(res.launch->argv, ElementsAre(bunx, "pkg@1.0.0", "--x"));
}

TEST_F(RunnerResolverTest, BunWithoutNodeRunsOnBunItself) {
  std::string bun = stub("bun");
  auto res =
      resolveAbility(ability("package = { npm = \"pkg@1.0.0\" }\n"), context(), std::nullopt);
  ASSERT_EQ(res.runner, RunnerKind::kBunx);
  EXPECT_THAT(res.launch->argv, ElementsAre(bun, "x", "--bun", "pkg@1.0.0"));
}

TEST_F(RunnerResolverTest, BunFromKajaToolsFolderWhenNotOnPath) {
  kaja::testing::TempDir tools;
  std::string bunx = tools.writeScript("bin/bunx", "exit 0");
  stub("node");
  stub("npx");
  auto res = resolveAbility(ability("package = { npm = \"pkg@1.0.0\" }\n"),
                            context({tools.path() + "/bin"}), std::nullopt);
  ASSERT_EQ(res.runner, RunnerKind::kBunx);
  EXPECT_EQ(res.launch->argv.front(), bunx);
}

TEST_F(RunnerResolverTest, NpmFallsBackToNpx) {
  std::string npx = stub("npx");
  stub("node");
  auto res = resolveAbility(ability("package = { npm = \"@scope/pkg@2.0.0\" }\n"), context(),
                            std::nullopt);
  ASSERT_EQ(res.runner, RunnerKind::kNpx);
  EXPECT_THAT(res.launch->argv, ElementsAre(npx, "-y", "@scope/pkg@2.0.0"));
}

TEST_F(RunnerResolverTest, NpmWithNothingIsLeftOutNamingWhatToInstall) {
  auto res = resolveAbility(ability("package = { npm = \"pkg@1\" }\n"), context(), std::nullopt);
  EXPECT_EQ(res.state, AbilityState::kLeftOut);
  EXPECT_THAT(res.reason, HasSubstr("install bun or Node.js"));
  EXPECT_FALSE(res.launch.has_value());
}

TEST_F(RunnerResolverTest, PypiPrefersUvxThenPipx) {
  std::string pipx = stub("pipx");
  auto viaPipx = resolveAbility(ability("package = { pypi = \"mcp-server-time@2025.9.25\" }\n"),
                                context(), std::nullopt);
  ASSERT_EQ(viaPipx.runner, RunnerKind::kPipx);
  EXPECT_THAT(viaPipx.launch->argv,
              ElementsAre(pipx, "run", "--spec", "mcp-server-time==2025.9.25", "mcp-server-time"));
  std::string uvx = stub("uvx");
  auto viaUvx = resolveAbility(ability("package = { pypi = \"mcp-server-time@2025.9.25\" }\n"),
                               context(), std::nullopt);
  ASSERT_EQ(viaUvx.runner, RunnerKind::kUvx);
  EXPECT_THAT(viaUvx.launch->argv, ElementsAre(uvx, "mcp-server-time@2025.9.25"));
}

TEST_F(RunnerResolverTest, NpmComesBeforePypiAndDocker) {
  stub("uvx");
  stub("docker");
  std::string bunx = stub("bunx");
  stub("node");
  auto res =
      resolveAbility(ability("package = { npm = \"a@1\", pypi = \"b@2\", docker = \"c:3\" }\n"),
                     context(), std::nullopt);
  EXPECT_EQ(res.runner, RunnerKind::kBunx);
}

TEST_F(RunnerResolverTest, DockerOnlyWhenEngineAnswersAndNothingEarlier) {
  // The stub docker answers `docker version` with success, like a running engine.
  std::string docker = stub("docker", "[ \"$1\" = version ] && exit 0; exit 1");
  Ability time = ability(R"(package = { pypi = "mcp-server-time@1", docker = "mcp/time:1" }
env = { TZ_NAME = "UTC", LD_PRELOAD = "/evil.so" }
args = ["--local-timezone", "UTC"]
)",
                         "time");
  auto res = resolveAbility(time, context(), std::nullopt);
  ASSERT_EQ(res.state, AbilityState::kOn) << res.reason;
  ASSERT_EQ(res.runner, RunnerKind::kDocker);
  EXPECT_THAT(res.launch->argv, ElementsAre(docker, "run", "-i", "--rm", "-e", "TZ_NAME",
                                            "mcp/time:1", "--local-timezone", "UTC"));
  EXPECT_EQ(envValue(*res.launch, "TZ_NAME"), "UTC");
  EXPECT_EQ(envValue(*res.launch, "LD_PRELOAD"), "<unset>");

  std::string uvx = stub("uvx");
  auto preferUvx = resolveAbility(time, context(), std::nullopt);
  EXPECT_EQ(preferUvx.runner, RunnerKind::kUvx);
}

TEST_F(RunnerResolverTest, DockerClientWithoutEngineIsLeftOut) {
  stub("docker", "echo 'Cannot connect to the Docker daemon' >&2; exit 1");
  auto res = resolveAbility(ability("package = { pypi = \"t@1\", docker = \"mcp/time:1\" }\n"),
                            context(), std::nullopt);
  EXPECT_EQ(res.state, AbilityState::kLeftOut);
  EXPECT_THAT(res.reason, HasSubstr("no Docker engine answers"));
  EXPECT_THAT(res.reason, HasSubstr("uv (for uvx) or pipx"));
}

TEST_F(RunnerResolverTest, DockerKeyPassesByNameNeverValue) {
  stub("docker", "exit 0");
  Ability keyed = ability(R"(package = { docker = "acme/geo:1" }
auth = { type = "apiKey", in = "env", name = "GEO_KEY" }
)",
                          "geo");
  auto res = resolveAbility(keyed, context(), std::string("s3cr3t-value"));
  ASSERT_EQ(res.runner, RunnerKind::kDocker);
  for (const auto& arg : res.launch->argv) EXPECT_THAT(arg, Not(HasSubstr("s3cr3t")));
  EXPECT_THAT(res.runs(), Not(HasSubstr("s3cr3t")));
  EXPECT_THAT(res.runs(), HasSubstr("GEO_KEY=…"));
  EXPECT_EQ(envValue(*res.launch, "GEO_KEY"), "s3cr3t-value");
}

TEST_F(RunnerResolverTest, CommandFoundOnPathOrLeftOut) {
  std::string server = stub("my-server");
  auto found = resolveAbility(ability("command = \"my-server\"\nargs = [\"a b\"]\n"), context(),
                              std::nullopt);
  ASSERT_EQ(found.state, AbilityState::kOn);
  EXPECT_EQ(found.runner, RunnerKind::kCommand);
  EXPECT_THAT(found.launch->argv, ElementsAre(server, "a b"));
  EXPECT_THAT(found.runs(), HasSubstr("'a b'"));

  auto missing =
      resolveAbility(ability("command = \"not-installed-here\"\n"), context(), std::nullopt);
  EXPECT_EQ(missing.state, AbilityState::kLeftOut);
  EXPECT_THAT(missing.reason, HasSubstr("\"not-installed-here\" is not installed"));
}

TEST_F(RunnerResolverTest, MissingKeyTurnsAbilityOffUnlessKeyless) {
  stub("bunx");
  stub("node");
  Ability keyed = ability(R"(package = { npm = "geo@1" }
auth = { type = "apiKey", in = "env", name = "GEO_KEY" }
)",
                          "geo");
  auto off = resolveAbility(keyed, context(), std::nullopt);
  EXPECT_EQ(off.state, AbilityState::kOff);
  EXPECT_THAT(off.reason, HasSubstr("kaja key set geo"));

  auto on = resolveAbility(keyed, context(), std::string("k-123"));
  ASSERT_EQ(on.state, AbilityState::kOn);
  EXPECT_EQ(envValue(*on.launch, "GEO_KEY"), "k-123");
  EXPECT_THAT(on.runs(), Not(HasSubstr("k-123")));

  Ability keyless = ability(R"(transport = "http"
url = "https://mcp.example.com/mcp"
auth = { type = "apiKey", in = "header", name = "Authorization", prefix = "Bearer ", keyless = true }
)",
                            "ctx");
  auto remote = resolveAbility(keyless, context(), std::nullopt);
  EXPECT_EQ(remote.state, AbilityState::kOn);
  EXPECT_EQ(remote.runner, RunnerKind::kRemote);
  EXPECT_EQ(remote.runs(), "https://mcp.example.com/mcp");
  EXPECT_TRUE(remote.remote->headers.empty());

  auto withKey = resolveAbility(keyless, context(), std::string("abc"));
  ASSERT_EQ(withKey.remote->headers.size(), 1u);
  EXPECT_EQ(withKey.remote->headers[0].first, "Authorization");
  EXPECT_EQ(withKey.remote->headers[0].second, "Bearer abc");
  EXPECT_THAT(withKey.runs(), Not(HasSubstr("abc")));
}

TEST_F(RunnerResolverTest, ChildGetsMinimalEnvAndLoaderVariablesAreDropped) {
  stub("srv");
  Ability risky = ability(R"(command = "srv"
env = { NODE_OPTIONS = "--require /x.js", npm_config_registry = "http://evil", MODE = "1", PATH = "/tmp", DYLD_INSERT_LIBRARIES = "x", BASH_ENV = "/x", PYTHONPATH = "/x", LD_LIBRARY_PATH = "/x", NODE_PATH = "/x", HOME = "/x" }
)");
  auto res = resolveAbility(risky, context(), std::nullopt);
  ASSERT_EQ(res.state, AbilityState::kOn);
  std::vector<std::string> names;
  for (const auto& var : res.launch->env) names.push_back(var.name);
  EXPECT_THAT(names, ElementsAre("PATH", "HOME", "MODE"));
  EXPECT_EQ(envValue(*res.launch, "PATH"), bin_.path() + "/bin");
  EXPECT_EQ(envValue(*res.launch, "HOME"), "/home/tester");
  EXPECT_EQ(res.warnings.size(), 9u);
  EXPECT_THAT(res.warnings.front(), HasSubstr("is dropped"));
}

TEST(HostEnvTest, TakesOnlyAllowedVariablesFromProcess) {
  ::setenv("KAJA_TEST_SECRET_LEAK", "nope", 1);
  ::setenv("LANG", "C.UTF-8", 1);
  HostEnv host = HostEnv::fromProcess();
  EXPECT_EQ(host.get("KAJA_TEST_SECRET_LEAK"), "");
  EXPECT_EQ(host.get("LANG"), "C.UTF-8");
  ::unsetenv("KAJA_TEST_SECRET_LEAK");
}

TEST(LoaderVariableTest, MatchesTheU5List) {
  for (const char* name : {"PATH", "HOME", "NODE_OPTIONS", "NODE_PATH", "LD_PRELOAD",
                           "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "BASH_ENV", "PYTHONPATH",
                           "NPM_CONFIG_PREFIX", "npm_config_registry"}) {
    EXPECT_TRUE(isLoaderVariable(name)) << name;
  }
  for (const char* name : {"MODE", "API_KEY", "PATHS", "HOMEPAGE", "NODE_ENV"}) {
    EXPECT_FALSE(isLoaderVariable(name)) << name;
  }
}

TEST(ExecutableFinderTest, IgnoresRelativePathEntriesAndNonExecutables) {
  kaja::testing::TempDir dir;
  dir.write("bin/plain", "not executable");
  std::string tool = dir.writeScript("bin/tool", "exit 0");
  ExecutableFinder finder(":.:relative:" + dir.path() + "/bin");
  EXPECT_EQ(finder.find("tool"), tool);
  EXPECT_EQ(finder.find("plain"), std::nullopt);
  EXPECT_EQ(finder.find("bin/tool"), std::nullopt);  // relative with a slash
  EXPECT_EQ(finder.find(tool), tool);
}

TEST_F(RunnerResolverTest, SandboxRunsEligibleStdioAbilitiesOverHttp) {
  stub("node");
  RunnerContext ctx = context();
  ctx.sandbox = SandboxTarget{"https://sandbox.example/base", "alice", "kj1_secret", false,
                              "/cfg/config.toml"};
  const std::string listed = "command = \"node\"\ntools = [\"echo\"]\n";
  auto res = resolveAbility(ability(listed, "echoer"), ctx, std::nullopt);
  ASSERT_EQ(res.state, AbilityState::kOn) << res.reason;
  EXPECT_EQ(res.runner, RunnerKind::kSandbox);
  EXPECT_STREQ(toString(*res.runner), "sandbox");
  ASSERT_TRUE(res.remote.has_value());
  EXPECT_FALSE(res.launch.has_value());
  EXPECT_EQ(res.remote->url, "https://sandbox.example/base/users/alice/abilities/echoer/mcp");
  EXPECT_FALSE(res.remote->sse);
  ASSERT_EQ(res.remote->headers.size(), 1U);
  EXPECT_EQ(res.remote->headers[0].first, "Authorization");
  EXPECT_EQ(res.remote->headers[0].second, "Bearer kj1_secret");
  EXPECT_THAT(res.runs(), Not(HasSubstr("kj1_secret")));
  EXPECT_THAT(res.remote->credentialsHint, HasSubstr("/cfg/config.toml"));
  EXPECT_EQ(res.connectLimit, kSandboxConnectLimit);
  EXPECT_FALSE(res.remote->freshHeaders);
  // With the worker's key at hand, each request gets a token of its own.
  int made = 0;
  ctx.sandbox->freshToken = [&made] { return "kj1_fresh" + std::to_string(++made); };
  auto fresh = resolveAbility(ability(listed, "echoer"), ctx, std::nullopt);
  ASSERT_TRUE(fresh.remote && fresh.remote->freshHeaders);
  EXPECT_EQ(fresh.remote->freshHeaders()[0].second, "Bearer kj1_fresh1");
  EXPECT_EQ(fresh.remote->freshHeaders()[0].second, "Bearer kj1_fresh2");
  ctx.sandbox->freshToken = nullptr;
  EXPECT_TRUE(res.notInSandbox.empty());
  EXPECT_TRUE(runsInSandbox(ability(listed, "echoer"), ctx, std::nullopt));

  // What the sandbox may not run stays here, with the reason.
  struct Case {
    std::string toml;
    std::string reason;
    std::optional<std::string> key;
  };
  const std::vector<Case> local = {
      {"command = \"node\"\n", "tools", std::nullopt},
      {listed + "localOnly = true\n", "localOnly", std::nullopt},
      {listed + "roots = true\n", "roots", std::nullopt},
      {listed + "auth = { type = \"apiKey\", in = \"env\", name = \"K\" }\n", "needs a key", "k"},
      {listed + "auth = { type = \"apiKey\", in = \"env\", name = \"K\", keyless = true }\n",
       "has your key", "k"},
  };
  for (const auto& item : local) {
    auto stays = resolveAbility(ability(item.toml, "echoer"), ctx, item.key);
    EXPECT_EQ(stays.runner, RunnerKind::kCommand) << item.toml;
    EXPECT_THAT(stays.notInSandbox, HasSubstr(item.reason)) << item.toml;
    EXPECT_FALSE(stays.connectLimit.has_value());
    EXPECT_FALSE(runsInSandbox(ability(item.toml, "echoer"), ctx, item.key)) << item.toml;
  }
  // A keyless one without the user's key goes to the sandbox, which never sees a key.
  EXPECT_TRUE(runsInSandbox(
      ability(listed + "auth = { type = \"apiKey\", in = \"env\", name = \"K\", keyless = true }\n",
              "echoer"),
      ctx, std::nullopt));

  // A shared worker keeps trustedSandbox abilities here (K23); the user's own runs them.
  const std::string trusted = listed + "trustedSandbox = true\n";
  EXPECT_EQ(resolveAbility(ability(trusted, "echoer"), ctx, std::nullopt).runner,
            RunnerKind::kSandbox);
  ctx.sandbox->shared = true;
  auto shared = resolveAbility(ability(trusted, "echoer"), ctx, std::nullopt);
  EXPECT_EQ(shared.runner, RunnerKind::kCommand);
  EXPECT_THAT(shared.notInSandbox, HasSubstr("trustedSandbox"));

  // Without a sandbox nothing changes and nothing is said.
  auto plain = resolveAbility(ability(listed, "echoer"), context(), std::nullopt);
  EXPECT_EQ(plain.runner, RunnerKind::kCommand);
  EXPECT_TRUE(plain.notInSandbox.empty());
  EXPECT_FALSE(runsInSandbox(ability(listed, "echoer"), context(), std::nullopt));
}

}  // namespace
}  // namespace kaja::core
