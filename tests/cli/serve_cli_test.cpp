// `kaja serve` on stdio in front of the real server-filesystem and server-everything, driven
// by the official TypeScript SDK client (tests/servers/gateway_client.mjs): tools listed
// under prefixed names, reads, refusals, approvals asked through elicitation, progress,
// cancellation, resources, prompts and the server's own sampling and elicitation requests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/cli/serve_test_support.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

// What one run of the SDK client printed.
struct ClientRun {
  std::vector<json> lines;
  std::string err;
  int exitCode = -1;

  // The line of step `index`, or null.
  [[nodiscard]] json step(int index) const {
    for (const auto& line : lines) {
      if (line.value("step", -1) == index) return line;
    }
    return nullptr;
  }
  [[nodiscard]] std::vector<json> events(const std::string& kind) const {
    std::vector<json> found;
    for (const auto& line : lines) {
      if (line.value("event", "") == kind) found.push_back(line);
    }
    return found;
  }
};

// The text of a tools/call result's text blocks, joined.
std::string textOf(const json& result) {
  std::string text;
  for (const auto& block : result.value("content", json::array())) {
    if (block.value("type", "") == "text") text += block.value("text", "") + "\n";
  }
  return text;
}

class ServeCliTest : public ::testing::Test {
 protected:
  ClientRun client(const std::vector<std::string>& serveArgs, const json& steps,
                   const std::vector<std::string>& options = {}) {
    std::vector<std::string> argv = {
        "/usr/bin/env",
        "node",
        std::string(kaja::test::sourceDir()) + "/tests/servers/gateway_client.mjs",
        "--kaja",
        testing::ServeFixture::kajaBin(),
        "--serve-args",
        json(serveArgs).dump(),
        "--steps",
        steps.dump()};
    argv.insert(argv.end(), options.begin(), options.end());
    testing::RunOptions run;
    run.timeoutSeconds = 60;
    auto result = testing::runCommandWith(argv, env_.env(), run);
    ClientRun parsed;
    parsed.err = result.err;
    parsed.exitCode = result.exitCode;
    std::istringstream out(result.out);
    for (std::string line; std::getline(out, line);) {
      auto value = json::parse(line, nullptr, false);
      if (!value.is_discarded()) parsed.lines.push_back(std::move(value));
    }
    return parsed;
  }

  json writeStep(const std::string& relative, const std::string& content) const {
    return {{"op", "call"},
            {"name", "fs__write_file"},
            {"arguments", {{"path", env_.home + "/" + relative}, {"content", content}}}};
  }

  [[nodiscard]] std::string read(const std::string& relative) const {
    return testing::readFile(env_.home + "/" + relative);
  }

  testing::ServeFixture env_;
};

TEST_F(ServeCliTest, AnSdkClientListsReadsIsRefusedAndApprovesAWriteByElicitation) {
  json steps = json::array({
      {{"op", "list"}},
      {{"op", "call"},
       {"name", "fs__read_text_file"},
       {"arguments", {{"path", env_.home + "/ro/secret.txt"}}}},
      writeStep("ro/secret.txt", "overwritten"),
      writeStep("bk/notes.txt", "version 2"),
      {{"op", "call"}, {"name", "fs__no_such_tool"}, {"arguments", json::object()}},
  });
  ClientRun run = client({"--persona", "files"}, steps, {"--elicitation", "once"});
  ASSERT_EQ(run.exitCode, 0) << run.err;

  json list = run.step(0);
  ASSERT_TRUE(list.contains("names")) << list.dump() << run.err;
  EXPECT_THAT(list["names"], Contains("fs__read_text_file"));
  EXPECT_THAT(list["names"], Contains("fs__write_file"));
  EXPECT_THAT(list["names"], Contains("kaja__restore_backup"));
  EXPECT_THAT(list["names"], Not(Contains("write_file")));
  for (const auto& name : list["names"]) {
    EXPECT_LE(name.get<std::string>().size(), 64u);
    EXPECT_TRUE(name.get<std::string>().starts_with("fs__") ||
                name.get<std::string>().starts_with("kaja__"))
        << name;
  }

  json readResult = run.step(1)["result"];
  EXPECT_FALSE(readResult.value("isError", false)) << readResult.dump();
  EXPECT_THAT(textOf(readResult), HasSubstr("read only"));

  // The read-only folder refuses before anyone is asked: one question only, for the bk write.
  json refused = run.step(2)["result"];
  EXPECT_TRUE(refused.value("isError", false)) << refused.dump();
  EXPECT_THAT(textOf(refused), AllOf(HasSubstr("K15 read-only folder"), HasSubstr("~/ro")));
  EXPECT_EQ(read("ro/secret.txt"), "read only");

  auto asked = run.events("elicitation");
  ASSERT_EQ(asked.size(), 1u) << run.err;
  EXPECT_TRUE(asked[0]["fromKaja"].get<bool>());
  EXPECT_THAT(asked[0]["message"].get<std::string>(),
              AllOf(HasSubstr("fs"), HasSubstr("write_file"), HasSubstr("version 2"),
                    HasSubstr(env_.home + "/bk/notes.txt")));
  json written = run.step(3)["result"];
  EXPECT_FALSE(written.value("isError", false)) << written.dump();
  EXPECT_EQ(read("bk/notes.txt"), "version 2");
  const std::string copies = env_.root.path() + "/data/kaja/backups" + env_.home + "/bk/notes.txt";
  ASSERT_TRUE(fs::is_directory(copies)) << written.dump();
  std::vector<std::string> kept;
  for (const auto& entry : fs::directory_iterator(copies)) {
    kept.push_back(testing::readFile(entry.path()));
  }
  EXPECT_THAT(kept, ::testing::ElementsAre("version 1"));

  json unknown = run.step(4)["result"];
  EXPECT_TRUE(unknown.value("isError", false)) << unknown.dump();
  EXPECT_THAT(textOf(unknown), AllOf(HasSubstr("fs__no_such_tool"), HasSubstr("fs__write_file")));

  std::string audit = testing::readFile(env_.auditPath());
  EXPECT_THAT(audit, HasSubstr("\"decision\":\"refused\""));
  EXPECT_THAT(audit, HasSubstr("\"tool\":\"write_file\""));
  EXPECT_THAT(audit, Not(HasSubstr("version 2")));
}

TEST_F(ServeCliTest, ADeclineOrAClientThatCannotAskLeavesTheFileAlone) {
  json steps = json::array({writeStep("rw/keep.txt", "changed")});
  ClientRun declined = client({"--persona", "files"}, steps, {"--elicitation", "decline"});
  ASSERT_EQ(declined.exitCode, 0) << declined.err;
  EXPECT_EQ(declined.events("elicitation").size(), 1u);
  json result = declined.step(0)["result"];
  EXPECT_TRUE(result.value("isError", false)) << result.dump();
  EXPECT_THAT(textOf(result), HasSubstr("declined"));
  EXPECT_EQ(read("rw/keep.txt"), "rw");

  ClientRun unasked = client({"--persona", "files"}, steps, {"--elicitation", "none"});
  ASSERT_EQ(unasked.exitCode, 0) << unasked.err;
  EXPECT_TRUE(unasked.events("elicitation").empty());
  json told = unasked.step(0)["result"];
  EXPECT_TRUE(told.value("isError", false)) << told.dump();
  EXPECT_THAT(textOf(told), AllOf(HasSubstr("approval"), HasSubstr("kaja call fs write_file")));
  EXPECT_EQ(read("rw/keep.txt"), "rw");
  EXPECT_THAT(testing::readFile(env_.auditPath()), HasSubstr("\"decision\":\"declined\""));
}

TEST_F(ServeCliTest, AllowForTheSessionAsksOnceForTheTool) {
  json steps = json::array(
      {writeStep("rw/one.txt", "1"), writeStep("rw/two.txt", "2"), writeStep("ro/three.txt", "3")});
  ClientRun run = client({"--persona", "files"}, steps, {"--elicitation", "session"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  auto asked = run.events("elicitation");
  ASSERT_EQ(asked.size(), 1u) << run.err;
  EXPECT_THAT(asked[0]["schema"].dump(), HasSubstr("session"));
  EXPECT_EQ(read("rw/one.txt"), "1");
  EXPECT_EQ(read("rw/two.txt"), "2");
  // What was allowed is the tool, not the folders: a read-only one still refuses.
  EXPECT_TRUE(run.step(2)["result"].value("isError", false));
  EXPECT_FALSE(fs::exists(env_.home + "/ro/three.txt"));
}

TEST_F(ServeCliTest, ProgressCancellationAndTheServersOwnRequestsPassThrough) {
  json steps = json::array({
      {{"op", "call"},
       {"name", "everything__trigger-long-running-operation"},
       {"arguments", {{"duration", 1}, {"steps", 4}}},
       {"progress", true}},
      {{"op", "call"},
       {"name", "everything__trigger-long-running-operation"},
       {"arguments", {{"duration", 20}, {"steps", 2}}},
       {"abortAfterMs", 400}},
      {{"op", "call"}, {"name", "everything__echo"}, {"arguments", {{"message", "still here"}}}},
      {{"op", "call"},
       {"name", "everything__trigger-sampling-request"},
       {"arguments", {{"prompt", "say something"}}}},
      {{"op", "call"}, {"name", "everything__trigger-elicitation-request"}},
  });
  ClientRun run = client({"--persona", "demo"}, steps,
                         {"--elicitation", "once", "--sampling", "sampled by the test client"});
  ASSERT_EQ(run.exitCode, 0) << run.err;

  json progressed = run.step(0);
  ASSERT_TRUE(progressed.contains("result")) << progressed.dump();
  EXPECT_FALSE(progressed["result"].value("isError", false)) << progressed.dump();
  ASSERT_GE(progressed["progress"].size(), 2u) << progressed.dump();
  double last = 0;
  for (const auto& update : progressed["progress"]) {
    EXPECT_GT(update["progress"].get<double>(), last);
    last = update["progress"].get<double>();
    EXPECT_EQ(update["total"], 4);
  }

  // The aborted call ends at once for the client, and kaja frees it at the server: its audit
  // row is written long before the 20 s the operation would take.
  json aborted = run.step(1);
  EXPECT_TRUE(aborted.contains("error")) << aborted.dump();
  EXPECT_LT(aborted["ms"].get<int>(), 5000);
  json echoed = run.step(2);
  EXPECT_THAT(textOf(echoed["result"]), HasSubstr("still here")) << echoed.dump();
  std::string audit = testing::readFile(env_.auditPath());
  EXPECT_THAT(audit, HasSubstr("\"decision\":\"failed\""));
  std::size_t rows = 0;
  for (std::size_t at = audit.find("trigger-long-running-operation"); at != std::string::npos;
       at = audit.find("trigger-long-running-operation", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, 2u) << audit;

  // The server asks for sampling and elicitation; the client that made the call answers.
  ASSERT_EQ(run.events("sampling").size(), 1u) << run.err;
  EXPECT_THAT(run.events("sampling")[0]["messages"].dump(), HasSubstr("say something"));
  EXPECT_THAT(textOf(run.step(3)["result"]), HasSubstr("sampled by the test client"));
  auto asked = run.events("elicitation");
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_FALSE(asked[0]["fromKaja"].get<bool>());
  EXPECT_THAT(textOf(run.step(4)["result"]), HasSubstr("Tester"));
}

TEST_F(ServeCliTest, ResourcesAndPromptsPassThroughUnderPrefixedNames) {
  const std::string uri = "demo://resource/static/document/architecture.md";
  json steps = json::array({
      // A prompt asked for by its prefixed name before any listing.
      {{"op", "prompt"}, {"name", "everything__simple-prompt"}},
      {{"op", "prompts"}},
      {{"op", "prompt"}, {"name", "everything__args-prompt"}, {"arguments", {{"city", "Lisbon"}}}},
      {{"op", "resources"}},
      {{"op", "read"}, {"uri", uri}},
  });
  ClientRun run = client({"--persona", "demo"}, steps);
  ASSERT_EQ(run.exitCode, 0) << run.err;

  json early = run.step(0);
  ASSERT_TRUE(early.contains("messages")) << early.dump();
  EXPECT_THAT(early["messages"].dump(), HasSubstr("This is a simple prompt"));

  std::vector<std::string> prompts;
  const json listedPrompts = run.step(1);
  for (const auto& prompt : listedPrompts.value("prompts", json::array())) {
    prompts.push_back(prompt["name"]);
  }
  EXPECT_THAT(prompts, Contains("everything__simple-prompt"));
  EXPECT_THAT(prompts, Contains("everything__args-prompt"));
  EXPECT_THAT(prompts, Not(Contains("simple-prompt")));
  EXPECT_THAT(run.step(2)["messages"].dump(), HasSubstr("Lisbon"));

  std::vector<std::string> uris;
  const json listedResources = run.step(3);
  for (const auto& resource : listedResources.value("resources", json::array())) {
    uris.push_back(resource["uri"]);
  }
  EXPECT_THAT(uris, Contains(uri));
  json contents = run.step(4)["contents"];
  ASSERT_TRUE(contents.is_array() && !contents.empty()) << run.step(4).dump();
  EXPECT_EQ(contents[0]["uri"], uri);
  EXPECT_FALSE(contents[0].value("text", "").empty());
}

TEST_F(ServeCliTest, AnApprovalTimeoutOutsideASecondToADayIsAUsageError) {
  for (const std::string wait : {"0", "-5", "1.5", "abc", "", "86401", "99999999999999999999"}) {
    testing::RunOptions run;
    run.timeoutSeconds = 30;
    auto result = testing::runCommandWith(
        {testing::ServeFixture::kajaBin(), "serve", "--approval-timeout", wait}, env_.env(), run);
    EXPECT_EQ(result.exitCode, 2) << wait << ": " << result.err;
    EXPECT_THAT(result.err, HasSubstr("--approval-timeout")) << wait;
    EXPECT_TRUE(result.out.empty()) << result.out;
  }
}

// Found by an outside review: --token-file /dev/zero grew kaja to 1 GB in 6 s, and a FIFO
// hung the start with no word. The token file must be a regular file of at most 64 KB.
TEST_F(ServeCliTest, ATokenFileThatIsNoSmallRegularFileIsAUsageError) {
  const std::string fifo = env_.root.path() + "/token.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string big = env_.root.path() + "/token.big";
  env_.root.write("token.big", std::string(70 * 1024, 'x'));
  for (const std::string& file : {std::string("/dev/zero"), fifo, big}) {
    testing::RunOptions run;
    run.timeoutSeconds = 30;
    auto result = testing::runCommandWith(
        {testing::ServeFixture::kajaBin(), "serve", "--http", "127.0.0.1:0", "--token-file", file},
        env_.env(), run);
    EXPECT_EQ(result.exitCode, 2) << file << ": " << result.err;
    EXPECT_THAT(result.err, HasSubstr("cannot read the token file " + file)) << result.err;
  }
}

TEST_F(ServeCliTest, BareNamesThatCollideStopTheGatewayAtStartNamingBothAbilities) {
  testing::RunOptions run;
  run.timeoutSeconds = 30;
  auto result = testing::runCommandWith(
      {testing::ServeFixture::kajaBin(), "serve", "--persona", "twins", "--names", "bare"},
      env_.env(), run);
  EXPECT_FALSE(result.timedOut);
  EXPECT_NE(result.exitCode, 0);
  EXPECT_THAT(result.err, AllOf(HasSubstr("fs "), HasSubstr("fs2"), HasSubstr("--names")));
  EXPECT_TRUE(result.out.empty()) << result.out;
  EXPECT_TRUE(testing::processesTagged(env_.tag).empty());

  // The same persona is served under prefixed names.
  ClientRun prefixed = client({"--persona", "twins"}, json::array({{{"op", "list"}}}));
  ASSERT_EQ(prefixed.exitCode, 0) << prefixed.err;
  EXPECT_THAT(prefixed.step(0)["names"], Contains("fs__read_text_file"));
  EXPECT_THAT(prefixed.step(0)["names"], Contains("fs2__read_text_file"));
}

}  // namespace
}  // namespace kaja::cli
