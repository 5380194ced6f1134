#include "core/manifest/ability_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "tests/support/temp_dir.h"

namespace kaja::core {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class AbilityLoaderTest : public ::testing::Test {
 protected:
  // Writes abilities/<name>/mcp.toml and loads it.
  Result<Ability> load(const std::string& name, const std::string& toml) {
    dir_.write("abilities/" + name + "/mcp.toml", toml);
    return loadAbility(dir_.path() + "/abilities/" + name);
  }
  std::string file(const std::string& name) const {
    return dir_.path() + "/abilities/" + name + "/mcp.toml";
  }
  kaja::testing::TempDir dir_;
};

TEST_F(AbilityLoaderTest, ReadsEveryField) {
  auto ability = load("full", R"(
description = "Everything at once"
transport = "stdio"
package = { npm = "@scope/pkg@1.2.3", pypi = "pkg@4.5", docker = "mcp/pkg:1" }
args = ["--flag", "value"]
env = { MODE = "fast" }
auth = { type = "apiKey", in = "env", name = "PKG_KEY", keyless = true }
tools = ["read", "write"]
approval = "always"
readOnly = ["read", { tool = "shot", unless = ["filePath", "dir"] }]
roots = true
pathArgs = ["path", "paths"]
localOnly = true
localOnlyArgs = ["filePath"]
trustedSandbox = true

[toolDescriptions]
read = "Reads a thing."
"write" = "Writes a thing."
)");
  ASSERT_TRUE(ability.has_value()) << ability.error().describe();
  EXPECT_EQ(ability->name, "full");
  EXPECT_EQ(ability->description, "Everything at once");
  EXPECT_EQ(ability->transport, Transport::kStdio);
  ASSERT_TRUE(ability->package.has_value());
  EXPECT_EQ(ability->package->npm, "@scope/pkg@1.2.3");
  EXPECT_EQ(ability->package->pypi, "pkg@4.5");
  EXPECT_EQ(ability->package->docker, "mcp/pkg:1");
  EXPECT_EQ(ability->args, (std::vector<std::string>{"--flag", "value"}));
  EXPECT_EQ(ability->env.at("MODE"), "fast");
  ASSERT_TRUE(ability->auth.has_value());
  EXPECT_EQ(ability->auth->in, KeyPlacement::kEnv);
  EXPECT_EQ(ability->auth->name, "PKG_KEY");
  EXPECT_TRUE(ability->auth->keyless);
  EXPECT_FALSE(ability->needsKey());
  EXPECT_EQ(ability->tools, (std::vector<std::string>{"read", "write"}));
  EXPECT_EQ(ability->approval, ApprovalMode::kAlways);
  ASSERT_EQ(ability->readOnly.size(), 2u);
  EXPECT_EQ(ability->readOnly[0].tool, "read");
  EXPECT_TRUE(ability->readOnly[0].unless.empty());
  EXPECT_EQ(ability->readOnly[1].tool, "shot");
  EXPECT_EQ(ability->readOnly[1].unless, (std::vector<std::string>{"filePath", "dir"}));
  EXPECT_TRUE(ability->roots);
  EXPECT_EQ(ability->pathArgs, (std::vector<std::string>{"path", "paths"}));
  EXPECT_TRUE(ability->localOnly);
  EXPECT_EQ(ability->localOnlyArgs, (std::vector<std::string>{"filePath"}));
  EXPECT_TRUE(ability->trustedSandbox);
  EXPECT_EQ(ability->toolDescriptions.at("write"), "Writes a thing.");
  EXPECT_TRUE(ability->isLocalOnly());
}

TEST_F(AbilityLoaderTest, DefaultsAreSafe) {
  auto ability = load("tiny", "command = \"/bin/cat\"\n");
  ASSERT_TRUE(ability.has_value()) << ability.error().describe();
  EXPECT_EQ(ability->transport, Transport::kStdio);
  EXPECT_EQ(ability->approval, ApprovalMode::kWrites);
  EXPECT_FALSE(ability->tools.has_value());
  EXPECT_FALSE(ability->roots);
  EXPECT_FALSE(ability->needsKey());
}

TEST_F(AbilityLoaderTest, LifecycleDefaultsToLazyWithTenMinutesIdle) {
  auto ability = load("tiny", "command = \"/bin/cat\"\n");
  ASSERT_TRUE(ability.has_value()) << ability.error().describe();
  EXPECT_EQ(ability->lifecycle, Lifecycle::kLazy);
  EXPECT_EQ(ability->idleTimeoutSeconds, 600);
  auto eager = load("eager", "command = \"/bin/cat\"\nlifecycle = \"eager\"\nidleTimeout = 30\n");
  ASSERT_TRUE(eager.has_value()) << eager.error().describe();
  EXPECT_EQ(eager->lifecycle, Lifecycle::kEager);
  EXPECT_EQ(eager->idleTimeoutSeconds, 30);
  auto keep = load("keep", "command = \"/bin/cat\"\nlifecycle = \"keep-alive\"\n");
  ASSERT_TRUE(keep.has_value()) << keep.error().describe();
  EXPECT_EQ(keep->lifecycle, Lifecycle::kKeepAlive);
  EXPECT_STREQ(toString(keep->lifecycle), "keep-alive");
}

TEST_F(AbilityLoaderTest, BadLifecycleAndIdleTimeoutSayWhatIsAllowed) {
  auto typo = load("a", "command = \"/bin/cat\"\nlifecycle = \"keepalive\"\n");
  ASSERT_FALSE(typo.has_value());
  EXPECT_THAT(typo.error().message, HasSubstr("did you mean \"keep-alive\""));
  EXPECT_EQ(typo.error().context, file("a") + ":2");
  for (const char* bad : {"0", "-5", "86401", "\"600\"", "1.5", "9223372036854775807"}) {
    auto wrong = load("b", std::string("command = \"/bin/cat\"\nidleTimeout = ") + bad + "\n");
    ASSERT_FALSE(wrong.has_value()) << bad;
    EXPECT_THAT(wrong.error().message, HasSubstr("\"idleTimeout\"")) << bad;
    EXPECT_THAT(wrong.error().message, HasSubstr("1 to 86400")) << bad;
  }
  auto pointless =
      load("c", "command = \"/bin/cat\"\nlifecycle = \"keep-alive\"\nidleTimeout = 60\n");
  ASSERT_FALSE(pointless.has_value());
  EXPECT_THAT(pointless.error().message, HasSubstr("no effect on a keep-alive server"));
}

TEST_F(AbilityLoaderTest, ProtocolNamesOneOfTheVersionsKajaSpeaksToServers) {
  auto unset = load("a", "command = \"/bin/cat\"\n");
  ASSERT_TRUE(unset.has_value()) << unset.error().describe();
  EXPECT_EQ(unset->protocol, "");
  for (const char* version : {"2025-11-25", "2026-07-28"}) {
    auto set = load("b", std::string("command = \"/bin/cat\"\nprotocol = \"") + version + "\"\n");
    ASSERT_TRUE(set.has_value()) << set.error().describe();
    EXPECT_EQ(set->protocol, version);
  }
  for (const char* bad :
       {"\"2025-06-18\"", "\"2026-7-28\"", "\"latest\"", "2026", "[]", "\"2026-07-28 \""}) {
    auto wrong = load("c", std::string("command = \"/bin/cat\"\nprotocol = ") + bad + "\n");
    ASSERT_FALSE(wrong.has_value()) << bad;
    EXPECT_THAT(wrong.error().message, HasSubstr("\"protocol\"")) << bad;
    EXPECT_THAT(wrong.error().message, HasSubstr("2026-07-28")) << bad;
    EXPECT_EQ(wrong.error().context, file("c") + ":2") << bad;
  }
}

TEST_F(AbilityLoaderTest, RemoteWithHeaderKey) {
  auto ability = load("ctx", R"(
transport = "http"
url = "https://mcp.example.com/mcp"
auth = { type = "apiKey", in = "header", name = "Authorization", prefix = "Bearer " }
)");
  ASSERT_TRUE(ability.has_value()) << ability.error().describe();
  EXPECT_TRUE(ability->isRemote());
  EXPECT_TRUE(ability->needsKey());
  EXPECT_EQ(ability->auth->prefix, "Bearer ");
}

TEST_F(AbilityLoaderTest, UnknownKeyNamesFileLineKeyAndNearest) {
  auto ability = load("typo", "command = \"/bin/cat\"\n\naproval = \"never\"\n");
  ASSERT_FALSE(ability.has_value());
  EXPECT_EQ(ability.error().code, ErrorCode::kInvalidConfig);
  EXPECT_EQ(ability.error().context, file("typo") + ":3");
  EXPECT_THAT(ability.error().message, HasSubstr("\"aproval\" is not a known key"));
  EXPECT_THAT(ability.error().message, HasSubstr("did you mean \"approval\"?"));
  EXPECT_THAT(ability.error().message, HasSubstr("\"pathArgs\""));  // lists what is allowed
}

TEST_F(AbilityLoaderTest, UnknownKeyFarFromAnyGivesNoSuggestion) {
  auto ability = load("odd", "command = \"/bin/cat\"\nzzzzzzzzzz = 1\n");
  ASSERT_FALSE(ability.has_value());
  EXPECT_THAT(ability.error().message, Not(HasSubstr("did you mean")));
  EXPECT_THAT(ability.error().message, HasSubstr("Allowed here:"));
}

TEST_F(AbilityLoaderTest, UnknownNestedKeyIsDotted) {
  auto ability = load("nested", R"(transport = "http"
url = "https://x.example/mcp"
auth = { type = "apiKey", in = "header", name = "X", prefx = "Bearer " }
)");
  ASSERT_FALSE(ability.has_value());
  EXPECT_EQ(ability.error().context, file("nested") + ":3");
  EXPECT_THAT(ability.error().message, HasSubstr("\"auth.prefx\""));
  EXPECT_THAT(ability.error().message, HasSubstr("did you mean \"auth.prefix\"?"));
}

TEST_F(AbilityLoaderTest, WrongTypesAreNamed) {
  struct Case {
    std::string toml;
    std::string key;
    std::string expect;
  };
  std::vector<Case> cases = {
      {"command = \"/bin/cat\"\ntools = \"read\"\n", "tools", "must be an array of strings"},
      {"command = \"/bin/cat\"\ntools = [\"a\", 3]\n", "tools", "holds an integer"},
      {"command = \"/bin/cat\"\nroots = \"yes\"\n", "roots", "must be true or false"},
      {"command = 5\n", "command", "must be a string, not an integer"},
      {"command = \"/bin/cat\"\nenv = { A = 1 }\n", "env.A", "must be a string"},
      {"command = \"/bin/cat\"\napproval = \"sometimes\"\n", "approval",
       "must be one of \"never\", \"writes\", \"always\""},
      {"command = \"/bin/cat\"\ntransport = \"websocket\"\n", "transport", "must be one of"},
      {"command = \"/bin/cat\"\nreadOnly = [1]\n", "readOnly", "holds an integer"},
      {"command = \"/bin/cat\"\nreadOnly = [{ tool = \"t\", unles = [\"x\"] }]\n", "readOnly.unles",
       "did you mean \"readOnly.unless\""},
      {"package = \"pkg\"\n", "package", "must be a table"},
      {"package = { cargo = \"x\" }\n", "package.cargo", "is not a known key. Allowed here: "},
      {"package = { npm = \"-rf\" }\n", "package.npm", "leading \"-\""},
  };
  for (const auto& c : cases) {
    auto ability = load("types", c.toml);
    ASSERT_FALSE(ability.has_value()) << c.toml;
    EXPECT_THAT(ability.error().message, StartsWith("\"" + c.key + "\"")) << c.toml;
    EXPECT_THAT(ability.error().message, HasSubstr(c.expect)) << c.toml;
    EXPECT_THAT(ability.error().context, StartsWith(file("types") + ":")) << c.toml;
  }
}

TEST_F(AbilityLoaderTest, ApprovalTypoSuggestsValue) {
  auto ability = load("appr", "command = \"/bin/cat\"\napproval = \"allways\"\n");
  ASSERT_FALSE(ability.has_value());
  EXPECT_THAT(ability.error().message, HasSubstr("did you mean \"always\"?"));
  EXPECT_EQ(ability.error().context, file("appr") + ":2");
}

TEST_F(AbilityLoaderTest, StdioNeedsPackageOrCommand) {
  auto ability = load("empty", "transport = \"stdio\"\ndescription = \"nothing\"\n");
  ASSERT_FALSE(ability.has_value());
  EXPECT_THAT(ability.error().message, HasSubstr("needs \"package\""));
  EXPECT_EQ(ability.error().context, file("empty") + ":1");
}

TEST_F(AbilityLoaderTest, PackageAndCommandTogetherFail) {
  auto ability = load("both", "package = { npm = \"x@1\" }\n\ncommand = \"/bin/cat\"\n");
  ASSERT_FALSE(ability.has_value());
  EXPECT_THAT(ability.error().message, HasSubstr("cannot be used together"));
  EXPECT_EQ(ability.error().context, file("both") + ":3");
}

TEST_F(AbilityLoaderTest, EmptyPackageTableFails) {
  auto ability = load("pkg", "package = {}\n");
  ASSERT_FALSE(ability.has_value());
  EXPECT_THAT(ability.error().message, HasSubstr("needs at least one of npm, pypi or docker"));
}

TEST_F(AbilityLoaderTest, RemoteNeedsAbsoluteUrl) {
  for (const std::string url : {"", "mcp.example.com/mcp", "/mcp", "ftp://host/x", "https://",
                                "https:///path", "http://a b/"}) {
    std::string toml = "transport = \"http\"\n";
    if (!url.empty()) toml += "url = \"" + url + "\"\n";
    auto ability = load("remote", toml);
    ASSERT_FALSE(ability.has_value()) << url;
    EXPECT_THAT(ability.error().message, HasSubstr("absolute http:// or https:// URL")) << url;
  }
  auto sse = load("legacy", "transport = \"sse\"\n");
  ASSERT_FALSE(sse.has_value());
  EXPECT_THAT(sse.error().message, HasSubstr("for a sse ability"));
}

TEST_F(AbilityLoaderTest, RemoteRejectsStdioSettings) {
  auto ability = load("mixed", R"(transport = "http"
url = "https://x.example/mcp"
command = "/bin/cat"
)");
  ASSERT_FALSE(ability.has_value());
  EXPECT_THAT(ability.error().message, HasSubstr("\"command\" only applies to stdio"));
  EXPECT_EQ(ability.error().context, file("mixed") + ":3");
}

TEST_F(AbilityLoaderTest, KeyPlacementMustSuitTransport) {
  auto stdio = load("s",
                    "command = \"/bin/cat\"\nauth = { type = \"apiKey\", in = \"header\", "
                    "name = \"Authorization\" }\n");
  ASSERT_FALSE(stdio.has_value());
  EXPECT_THAT(stdio.error().message, HasSubstr("needs an http or sse ability"));
  auto missingName =
      load("n", "command = \"/bin/cat\"\nauth = { type = \"apiKey\", in = \"env\" }\n");
  ASSERT_FALSE(missingName.has_value());
  EXPECT_THAT(missingName.error().message, HasSubstr("needs a name"));
}

TEST_F(AbilityLoaderTest, DotDotInCommandFails) {
  for (const std::string command : {"../bin/server", "/opt/x/../../bin/sh", ".."}) {
    auto ability = load("dots", "command = \"" + command + "\"\n");
    ASSERT_FALSE(ability.has_value()) << command;
    EXPECT_THAT(ability.error().message, HasSubstr("must not contain \"..\"")) << command;
  }
  auto fine = load("dots", "command = \"/opt/my..server/run\"\n");
  EXPECT_TRUE(fine.has_value()) << fine.error().describe();
}

TEST_F(AbilityLoaderTest, NameOutsideCharsetFails) {
  for (const std::string name : {"bad.name", "bad name", "naïve", "semi;colon"}) {
    auto ability = load(name, "command = \"/bin/cat\"\n");
    ASSERT_FALSE(ability.has_value()) << name;
    EXPECT_THAT(ability.error().message, HasSubstr("not a valid ability name")) << name;
  }
  EXPECT_TRUE(isValidName("good_Name-9"));
  EXPECT_FALSE(isValidName(std::string(65, 'a')));
  EXPECT_FALSE(isValidName("-rf"));  // would read as an option wherever it is named
}

TEST_F(AbilityLoaderTest, SyntaxErrorNamesLine) {
  auto ability = load("syntax", "command = \"/bin/cat\"\ntools = [\"a\"\n");
  ASSERT_FALSE(ability.has_value());
  EXPECT_THAT(ability.error().context, StartsWith(file("syntax") + ":"));
  EXPECT_THAT(ability.error().message, HasSubstr("not valid TOML"));
}

// Found by an outside review: an mcp.toml that was a folder or a FIFO was reported as
// missing, which sent the user looking for a file that is there.
TEST_F(AbilityLoaderTest, AManifestThatIsAFolderOrAFifoIsNamedForWhatItIs) {
  std::filesystem::create_directories(dir_.path() + "/abilities/dir/mcp.toml");
  auto folder = loadAbility(dir_.path() + "/abilities/dir");
  ASSERT_FALSE(folder.has_value());
  EXPECT_THAT(folder.error().message, HasSubstr("mcp.toml is a folder"));
  std::filesystem::create_directories(dir_.path() + "/abilities/fifo");
  ASSERT_EQ(::mkfifo((dir_.path() + "/abilities/fifo/mcp.toml").c_str(), 0600), 0);
  auto fifo = loadAbility(dir_.path() + "/abilities/fifo");
  ASSERT_FALSE(fifo.has_value());
  EXPECT_THAT(fifo.error().message, HasSubstr("not a regular file"));
}

TEST_F(AbilityLoaderTest, DuplicateKeyIsAnError) {
  auto ability = load("dup", "command = \"/bin/cat\"\ncommand = \"/bin/true\"\n");
  ASSERT_FALSE(ability.has_value());
  EXPECT_THAT(ability.error().context, file("dup") + ":2");
}

TEST_F(AbilityLoaderTest, FolderWithoutManifest) {
  dir_.write("abilities/none/README", "x");
  auto ability = loadAbility(dir_.path() + "/abilities/none");
  ASSERT_FALSE(ability.has_value());
  EXPECT_THAT(ability.error().message, HasSubstr("has no mcp.toml"));
}

}  // namespace
}  // namespace kaja::core
