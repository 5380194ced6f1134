// kaja against a hostile stdio server (tests/tools/kaja_fault_server), end to end through
// `kaja call`, `kaja tools` and `kaja doctor`: whatever the server sends (deep nesting,
// malformed bytes, wrong types, floods, endless pages, a stdin it stops reading, slow rounds),
// kaja ends with one clear sentence, within a bounded time and memory, leaving no process.
#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::policy {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

// Where kaja used to reach gigabytes, it must now stay below this.
constexpr long kMaxPeakRssKb = 300L * 1024;

class HostileStdioTest : public ::testing::Test {
 protected:
  HostileStdioTest() {
    // The server runs under a name of this test's own, so its leftovers can be told apart.
    fault_ = root_.path() + "/bin/hostile-fault-server";
    fs::create_directories(root_.path() + "/bin");
    fs::copy_file(std::string(kaja::test::binDir()) + "/kaja_fault_server", fault_);
    fs::permissions(fault_, fs::perms::owner_all);
    root_.write("home/.keep", "");
  }

  void useMode(const std::string& mode, int number = 0) {
    root_.write("market/abilities/hostile/mcp.toml", "command = \"" + fault_ + "\"\nargs = [\"" +
                                                         mode + "\", \"" + std::to_string(number) +
                                                         "\"]\n");
    root_.write("market/personas/default.toml", "abilities = [\"hostile\"]\n");
  }

  testing::CommandResult kaja(const std::vector<std::string>& args, double limit = 60) {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    testing::RunOptions options;
    options.timeoutSeconds = limit;
    auto result = testing::runCommandWith(
        argv,
        {"HOME=" + root_.path() + "/home", "XDG_CONFIG_HOME=" + root_.path() + "/config",
         "XDG_DATA_HOME=" + root_.path() + "/data", "PATH=/usr/local/bin:/usr/bin:/bin",
         "KAJA_SHIPPED_MARKETPLACE=" + root_.path() + "/market"},
        options);
    EXPECT_FALSE(result.timedOut) << "kaja " << args.front() << " ran past " << limit << " s";
    if (kaja::testing::kMemoryIsMeasured) {
      EXPECT_LT(result.peakRssKb, kMaxPeakRssKb) << "kaja " << args.front();
    }
    EXPECT_EQ(leftovers(), 0) << "a server outlived kaja " << args.front();
    return result;
  }

  testing::CommandResult call(const std::string& tool, double limit = 60) {
    return kaja({"call", "--yes", "hostile", tool, "{}"}, limit);
  }

  // Returns how many processes still run this test's copy of the server.
  [[nodiscard]] int leftovers() const {
    int count = 0;
    DIR* dir = ::opendir("/proc");
    if (dir == nullptr) return -1;
    while (const dirent* entry = ::readdir(dir)) {
      if (std::atoi(entry->d_name) <= 0) continue;
      std::ifstream cmdline(std::string("/proc/") + entry->d_name + "/cmdline");
      std::string text((std::istreambuf_iterator<char>(cmdline)), {});
      if (text.find(fault_) != std::string::npos) ++count;
    }
    ::closedir(dir);
    return count;
  }

  testing::TempDir root_;
  std::string fault_;
};

// The one line kaja printed about the failure: its stderr, which must be a single line.
std::string oneLine(const testing::CommandResult& result) {
  std::string err = result.err;
  while (!err.empty() && err.back() == '\n') err.pop_back();
  EXPECT_EQ(err.find('\n'), std::string::npos) << result.err;
  return err;
}

struct Failing {
  std::string tool;
  int exitCode;
  std::string says;
};

TEST_F(HostileStdioTest, DeepNestingInAReplyFailsOnlyThatCall) {
  useMode("hostile");
  for (const Failing& attack : {Failing{"deep-result", 1, "nested deeper than 256 levels"},
                                Failing{"deep-array", 1, "nested deeper than 256 levels"},
                                Failing{"deep-error", 1, "nested deeper than 256 levels"},
                                Failing{"many-values", 1, "more than 1000000 values"},
                                // Found by an outside review: this waited out the call's 15 s.
                                Failing{"number-overflow", 1, "number overflow"}}) {
    auto result = call(attack.tool);
    EXPECT_EQ(result.exitCode, attack.exitCode) << attack.tool << ": " << result.err;
    EXPECT_THAT(oneLine(result), HasSubstr(attack.says)) << attack.tool;
    EXPECT_LT(result.seconds, 10) << attack.tool;
  }
}

TEST_F(HostileStdioTest, WrongTypesFailTheCallWithASentence) {
  useMode("hostile");
  for (const Failing& attack : {Failing{"text-number", 1, "content[0].text is a number"},
                                Failing{"block-number", 1, "content[0] is a number"},
                                Failing{"mime-number", 1, "content[0].mimeType is a number"},
                                Failing{"content-object", 1, "content is an object"},
                                Failing{"is-error-string", 1, "isError is a string"},
                                Failing{"result-string", 1, "it is a string, not an object"},
                                Failing{"result-array", 1, "it is an array, not an object"},
                                Failing{"result-null", 1, "it is a null, not an object"},
                                Failing{"result-type-number", 1, "resultType is a number"},
                                Failing{"int64-error", 1, "error 99999999999:"}}) {
    auto result = call(attack.tool);
    EXPECT_EQ(result.exitCode, attack.exitCode) << attack.tool << ": " << result.err;
    EXPECT_THAT(oneLine(result), HasSubstr(attack.says)) << attack.tool;
    EXPECT_LT(result.seconds, 10) << attack.tool;
  }
}

TEST_F(HostileStdioTest, MalformedBytesAreReadNotWaitedOut) {
  useMode("hostile");
  const std::string fffd = "\xEF\xBF\xBD";
  for (const auto& [tool, text] :
       std::vector<std::pair<std::string, std::string>>{{"lone-surrogate", "broken " + fffd},
                                                        {"lone-low-surrogate", fffd + " then"},
                                                        {"invalid-utf8", "bad " + fffd + fffd},
                                                        {"overlong-utf8", "slash " + fffd},
                                                        {"raw-control", "escape"}}) {
    auto result = call(tool);
    EXPECT_EQ(result.exitCode, 0) << tool << ": " << result.err;
    EXPECT_THAT(result.out, HasSubstr(text)) << tool;
    EXPECT_LT(result.seconds, 10) << tool;  // it used to wait out the 15 s timeout
  }
}

TEST_F(HostileStdioTest, ABatchKeepsItsGoodReply) {
  useMode("hostile");
  for (const std::string tool : {"batch-bad-element", "batch-bad-first"}) {
    auto result = call(tool);
    EXPECT_EQ(result.exitCode, 0) << tool << ": " << result.err;
    EXPECT_THAT(result.out, HasSubstr("kept")) << tool;
  }
}

TEST_F(HostileStdioTest, LargeResultsAreReadAndOnlyHugeOnesFail) {
  useMode("hostile");
  auto big = call("huge-result");
  EXPECT_EQ(big.exitCode, 0) << big.err.substr(0, 300);
  EXPECT_THAT(big.err, ::testing::Not(HasSubstr("longer than")));
  auto huge = call("too-big-result");
  EXPECT_EQ(huge.exitCode, 1) << huge.err;
  EXPECT_THAT(oneLine(huge), HasSubstr("longer than 64 MB"));
}

TEST_F(HostileStdioTest, FloodsAreBounded) {
  useMode("hostile");
  for (const std::string tool : {"notify-flood", "request-flood"}) {
    auto result = call(tool);
    EXPECT_EQ(result.exitCode, 0) << tool << ": " << result.err;
    EXPECT_THAT(result.out, HasSubstr("flooded")) << tool;
  }
  auto stopped = call("stop-reading");
  EXPECT_EQ(stopped.exitCode, 4) << stopped.err;
  EXPECT_THAT(oneLine(stopped), HasSubstr("stopped reading its stdin"));
  EXPECT_LT(stopped.seconds, 30);
}

TEST_F(HostileStdioTest, InputRoundsShareOneDeadline) {
  useMode("stateless", 4000);
  auto result = call("slow-input");
  EXPECT_EQ(result.exitCode, 4) << result.err;
  EXPECT_THAT(oneLine(result), HasSubstr("slow-input"));
  // Four-second rounds used to get 15 s each; the call has 15 s in all.
  EXPECT_LT(result.seconds, 22);
  auto typed = call("result-type-number");
  EXPECT_EQ(typed.exitCode, 1) << typed.err;
  EXPECT_THAT(oneLine(typed), HasSubstr("resultType that is a number"));
  EXPECT_LT(typed.seconds, 10);
}

struct ConnectAttack {
  std::string mode;
  std::string says;
};

// Runs a hostile server that breaks connecting through doctor, tools and call.
TEST_F(HostileStdioTest, ConnectAttacksFailOnlyThatAbility) {
  for (const ConnectAttack& attack :
       {ConnectAttack{"deep-init", "nested deeper than 256 levels"},
        ConnectAttack{"deep-schema", "nested deeper than 256 levels"},
        ConnectAttack{"bad-tool", "description is a number"},
        ConnectAttack{"pages-forever", "more than the 16 MB kaja reads"},
        ConnectAttack{"huge-page", "more than the 4 MB kaja reads"}}) {
    useMode(attack.mode);
    auto doctor = kaja({"doctor", "--json", "hostile"});
    EXPECT_EQ(doctor.exitCode, 1) << attack.mode << ": " << doctor.err;
    json report = json::parse(doctor.out, nullptr, false);
    ASSERT_TRUE(report.is_object()) << attack.mode << ": " << doctor.out;
    EXPECT_EQ(report["abilities"][0]["state"], "failed") << attack.mode;
    EXPECT_THAT(report["abilities"][0]["error"].dump(), HasSubstr(attack.says)) << attack.mode;

    auto tools = kaja({"tools", "--json"});
    EXPECT_EQ(tools.exitCode, 0) << attack.mode << ": " << tools.err;
    json listed = json::parse(tools.out, nullptr, false);
    ASSERT_TRUE(listed.is_object()) << attack.mode;
    EXPECT_THAT(listed["failed"].dump(), HasSubstr(attack.says)) << attack.mode;

    auto called = call("echo");
    EXPECT_EQ(called.exitCode, 4) << attack.mode << ": " << called.err;
    EXPECT_THAT(oneLine(called), HasSubstr(attack.says)) << attack.mode;
    EXPECT_LT(doctor.seconds + tools.seconds + called.seconds, 40) << attack.mode;
  }
}

// Found by an outside review: a server listing one name twice had both copies offered, with
// different annotations, while kaja enforced the second. Both are left out, saying so.
TEST_F(HostileStdioTest, AToolListedTwiceIsOfferedNeither) {
  useMode("duplicate-tool");
  auto tools = kaja({"tools", "--json"});
  EXPECT_EQ(tools.exitCode, 0) << tools.err;
  EXPECT_THAT(tools.out, HasSubstr("echo"));
  EXPECT_THAT(tools.out, Not(HasSubstr("twice\"")));
  auto doctor = kaja({"doctor", "--json", "hostile"});
  EXPECT_EQ(doctor.exitCode, 0) << doctor.err;
  EXPECT_THAT(doctor.out, HasSubstr("\"tools\": 1")) << "only echo is counted";
  // doctor says why the other is missing, under the ability.
  const json report = json::parse(doctor.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << doctor.out;
  EXPECT_THAT(report["warnings"].dump(), HasSubstr("hostile: ")) << doctor.out;
  EXPECT_THAT(report["warnings"].dump(), HasSubstr("twice")) << doctor.out;
  auto shown = kaja({"doctor", "hostile"});
  EXPECT_THAT(shown.err + shown.out, HasSubstr("twice"));
  auto called = call("twice");
  EXPECT_NE(called.exitCode, 0) << called.out;
  EXPECT_THAT(called.out, Not(HasSubstr("fault tool")));
}

TEST_F(HostileStdioTest, AFloodBeforeInitializeIsSurvived) {
  useMode("notify-flood-init");
  auto doctor = kaja({"doctor", "--json", "hostile"});
  EXPECT_EQ(doctor.exitCode, 0) << doctor.err;
  auto result = kaja({"call", "--yes", "hostile", "echo", R"({"text":"still here"})"});
  EXPECT_EQ(result.exitCode, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("still here"));
}

TEST_F(HostileStdioTest, ASecondStartGetsNoFreshConnectDeadline) {
  // server/discover hangs up after 6 s; the restart with initialize alone answers after 6 s
  // more. The connect has 10 s in all, so it fails near 10 s instead of succeeding at 12.
  useMode("discover-hangup", 6000);
  auto doctor = kaja({"doctor", "--json", "hostile"});
  EXPECT_EQ(doctor.exitCode, 1) << doctor.err;
  json report = json::parse(doctor.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << doctor.out;
  EXPECT_EQ(report["abilities"][0]["state"], "failed");
  EXPECT_THAT(report["abilities"][0]["error"].dump(), HasSubstr("10 s"));
  EXPECT_LT(doctor.seconds, 12.5);
}

}  // namespace
}  // namespace kaja::policy
