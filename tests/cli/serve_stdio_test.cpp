// `kaja serve` fed bytes straight on stdin: malformed and oversized lines, requests out of
// order, a client that leaves mid-call or cancels while it is being asked, and a persona
// switched in another process while the gateway runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/cli/serve_test_support.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using testing::eventually;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

json request(const json& id, const std::string& method, const json& params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
}

std::vector<std::string> toolNames(const json& answer) {
  std::vector<std::string> names;
  for (const auto& tool : answer["result"]["tools"]) names.push_back(tool["name"]);
  return names;
}

class ServeStdioTest : public ::testing::Test {
 protected:
  testing::ServeFixture env_;
};

TEST_F(ServeStdioTest, MalformedAndEarlyRequestsGetErrorsAndTheSessionGoesOn) {
  auto kaja = env_.serve({"--persona", "demo"});
  kaja->send(request(1, "tools/list"));
  auto early = kaja->answer(1, 30);
  ASSERT_TRUE(early) << env_.serveErrors();
  ASSERT_TRUE(early->contains("error")) << early->dump();
  EXPECT_THAT((*early)["error"]["message"].get<std::string>(), HasSubstr("initialize"));

  ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
  kaja->send(std::string("this is not json \xff\xfe"));
  auto garbled = kaja->next(10);
  ASSERT_TRUE(garbled && garbled->is_object()) << env_.serveErrors();
  EXPECT_EQ((*garbled)["error"]["code"], -32700);
  EXPECT_TRUE((*garbled)["id"].is_null());

  kaja->send(std::string(R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})"));
  auto badId = kaja->next(10);
  ASSERT_TRUE(badId);
  EXPECT_EQ((*badId)["error"]["code"], -32600);

  kaja->send(request(2, "tools/call", {{"name", 7}}));
  auto badName = kaja->answer(2, 10);
  ASSERT_TRUE(badName);
  EXPECT_EQ((*badName)["error"]["code"], -32602);
  kaja->send(request(3, "no/such/method"));
  auto unknown = kaja->answer(3, 10);
  ASSERT_TRUE(unknown);
  EXPECT_EQ((*unknown)["error"]["code"], -32601);

  // What is neither a request, a notification nor a reply to kaja still gets an answer:
  // under its id when it has one, else under a null id, one per element of a batch.
  kaja->send(std::string(R"({"jsonrpc":"2.0","id":8})"));
  auto noMethod = kaja->answer(8, 10);
  ASSERT_TRUE(noMethod) << env_.serveErrors();
  EXPECT_EQ((*noMethod)["error"]["code"], -32600);
  // A request kaja refuses is answered under its id too, however it is malformed; a string
  // id stays a string.
  for (const auto& [line, id] : std::vector<std::pair<std::string, json>>{
           {R"({"id":11,"method":"ping"})", 11},
           {R"({"jsonrpc":"1.0","id":"twelve","method":"ping"})", "twelve"},
           {R"({"jsonrpc":"2.0","id":13,"method":"tools/list","params":"x"})", 13},
           {R"({"jsonrpc":"2.0","id":14,"method":7})", 14}}) {
    kaja->send(line);
    auto refused = kaja->next(10);
    ASSERT_TRUE(refused && refused->is_object()) << line << env_.serveErrors();
    EXPECT_EQ((*refused)["id"], id) << refused->dump();
    EXPECT_EQ((*refused)["error"]["code"], -32600) << refused->dump();
  }
  for (const std::string& batch :
       std::vector<std::string>{"[1]", "[[]]", std::string(300, '[') + std::string(300, ']')}) {
    kaja->send(batch);
    auto invalid = kaja->next(10);
    ASSERT_TRUE(invalid && invalid->is_object()) << batch.substr(0, 20) << env_.serveErrors();
    EXPECT_EQ((*invalid)["error"]["code"], -32600) << batch.substr(0, 20) << invalid->dump();
    EXPECT_TRUE((*invalid)["id"].is_null()) << invalid->dump();
  }
  // A second initialize cannot change what the session agreed (here: no elicitation).
  kaja->send(request(9, "initialize",
                     {{"protocolVersion", "2024-11-05"},
                      {"capabilities", {{"elicitation", json::object()}}},
                      {"clientInfo", {{"name", "again"}, {"version", "1"}}}}));
  auto again = kaja->answer(9, 10);
  ASSERT_TRUE(again) << env_.serveErrors();
  EXPECT_EQ((*again)["error"]["code"], -32600);
  EXPECT_THAT((*again)["error"]["message"].get<std::string>(), HasSubstr("already initialized"));
  // A tool name that would turn the message around on screen is shown with its controls
  // written as escapes.
  kaja->send(request(10, "tools/call", {{"name", "x\u202eq\u2066y"}}));
  auto turned = kaja->answer(10, 10);
  ASSERT_TRUE(turned) << env_.serveErrors();
  EXPECT_EQ(turned->dump(-1, ' ', false).find("\xe2\x80\xae"), std::string::npos);
  EXPECT_THAT((*turned)["result"]["content"][0]["text"].get<std::string>(),
              HasSubstr("x\\u202eq\\u2066y"));

  kaja->send(
      request(4, "tools/call",
              {{"name", "everything__echo"}, {"arguments", {{"message", "after all that"}}}}));
  auto echoed = kaja->answer(4, 15);
  ASSERT_TRUE(echoed) << env_.serveErrors();
  EXPECT_THAT((*echoed)["result"].dump(), HasSubstr("after all that"));
}

// libcurl, libcrypto and libarchive (and the thirty libraries behind them) are opened when
// first needed: a gateway of local servers that has listed and called tools maps none.
TEST_F(ServeStdioTest, AGatewayOfLocalServersLoadsNoNetworkCryptoOrArchiveLibrary) {
  auto kaja = env_.serve({"--persona", "demo"});
  ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
  kaja->send(request(2, "tools/list"));
  ASSERT_TRUE(kaja->answer(2, 30)) << env_.serveErrors();
  kaja->send(request(
      3, "tools/call",
      {{"name", "everything__echo"}, {"arguments", {{"message", "/etc/hostname is a path"}}}}));
  auto echoed = kaja->answer(3, 30);
  ASSERT_TRUE(echoed) << env_.serveErrors();
  EXPECT_THAT((*echoed)["result"].dump(), HasSubstr("/etc/hostname is a path"));
  const std::string maps = testing::readFile("/proc/" + std::to_string(kaja->pid()) + "/maps");
  ASSERT_THAT(maps, HasSubstr("libstdc++"));
  for (const char* library : {"libcurl", "libcrypto", "libssl", "libarchive", "libgnutls",
                              "libkrb5", "libldap", "libxml2"}) {
    EXPECT_THAT(maps, ::testing::Not(HasSubstr(library)));
  }
}

TEST_F(ServeStdioTest, ATenMegabyteLineIsRefusedWithoutHoldingIt) {
  auto kaja = env_.serve({"--persona", "demo"});
  ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
  const long before = kaja->statusKb("VmHWM");
  ASSERT_GT(before, 0);
  constexpr std::size_t kLine = 10UL * 1024 * 1024;
  std::string huge = R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":)"
                     R"("everything__echo","arguments":{"message":")";
  huge.append(kLine, 'A');
  huge += "\"}}}";
  ASSERT_TRUE(kaja->send(huge));
  auto refused = kaja->next(20);
  ASSERT_TRUE(refused && refused->is_object()) << env_.serveErrors();
  EXPECT_TRUE(refused->contains("error")) << refused->dump();
  EXPECT_THAT((*refused)["error"]["message"].get<std::string>(), HasSubstr("larger than"));

  kaja->send(request(6, "ping"));
  ASSERT_TRUE(kaja->answer(6, 10));
  const long after = kaja->statusKb("VmHWM");
  RecordProperty("VmHWMBeforeKb", std::to_string(before));
  RecordProperty("VmHWMAfterKb", std::to_string(after));
  // Far below the line (10 MB, i.e. 10240 kB) however it is counted. In a sanitizer tree the
  // growth is the sanitizer's shadow of the buffers kaja reused, not kaja's own.
  if (kaja::testing::kMemoryIsMeasured) {
    EXPECT_LT(after - before, 6 * 1024) << "before " << before << " kB, after " << after << " kB";
    EXPECT_LT(after, 60 * 1024);
  }
}

TEST_F(ServeStdioTest, ClosingStdinMidCallEndsKajaAndEveryServer) {
  auto kaja = env_.serve({"--persona", "work"});
  ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
  ASSERT_FALSE(env_.serverPids("everything").empty());
  ASSERT_FALSE(env_.serverPids("fs").empty());
  kaja->send(request(7, "tools/call",
                     {{"name", "everything__trigger-long-running-operation"},
                      {"arguments", {{"duration", 20}, {"steps", 20}}},
                      {"_meta", {{"progressToken", "p7"}}}}));
  // The call is running at the server once its first progress comes.
  auto progress = kaja->waitForMethod("notifications/progress", 15);
  ASSERT_TRUE(progress) << env_.serveErrors();
  EXPECT_EQ((*progress)["params"]["progressToken"], "p7");

  const auto closed = std::chrono::steady_clock::now();
  kaja->closeInput();
  auto code = kaja->waitExit(10);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - closed).count();
  ASSERT_TRUE(code.has_value()) << "kaja still runs 10 s after its stdin closed";
  EXPECT_EQ(*code, 0) << env_.serveErrors();
  EXPECT_LT(took, 5.0);
  EXPECT_TRUE(eventually([&] { return testing::processesTagged(env_.tag).empty(); }, 2))
      << "left behind: " << testing::processesTagged(env_.tag).size() << " processes";
  EXPECT_THAT(testing::readFile(env_.auditPath()), HasSubstr("\"decision\":\"failed\""));
}

TEST_F(ServeStdioTest, ACallCancelledWhileItsApprovalIsAskedNeverRuns) {
  auto kaja = env_.serve({"--persona", "files"});
  ASSERT_FALSE(kaja->initialize({{"elicitation", json::object()}}).is_null()) << env_.serveErrors();
  const std::string target = env_.home + "/rw/cancelled.txt";
  kaja->send(request(8, "tools/call",
                     {{"name", "fs__write_file"},
                      {"arguments", {{"path", target}, {"content", "must not be written"}}}}));
  auto asked = kaja->waitForMethod("elicitation/create", 15);
  ASSERT_TRUE(asked) << env_.serveErrors();
  EXPECT_THAT((*asked)["params"]["message"].get<std::string>(), HasSubstr("cancelled.txt"));

  kaja->send(json{{"jsonrpc", "2.0"},
                  {"method", "notifications/cancelled"},
                  {"params", {{"requestId", 8}, {"reason", "the user pressed escape"}}}});
  // A late yes (the dialog stayed open) must not run what the client already gave up.
  kaja->send(json{{"jsonrpc", "2.0"},
                  {"id", (*asked)["id"]},
                  {"result", {{"action", "accept"}, {"content", {{"answer", "once"}}}}}});
  kaja->send(request(9, "ping"));
  ASSERT_TRUE(kaja->answer(9, 10));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  kaja->send(request(10, "ping"));
  ASSERT_TRUE(kaja->answer(10, 10));
  EXPECT_FALSE(fs::exists(target));
  for (const auto& line : kaja->seen) {
    EXPECT_NE(line.value("id", json()), json(8)) << "a cancelled request was answered";
  }
  EXPECT_THAT(testing::readFile(env_.auditPath()),
              ::testing::Not(HasSubstr("\"decision\":\"allowed\"")));
}

TEST_F(ServeStdioTest, AnApprovalNobodyAnswersIsARefusalAndTheClientIsToldToDropIt) {
  auto kaja = env_.serve({"--persona", "files", "--approval-timeout", "1"});
  ASSERT_FALSE(kaja->initialize({{"elicitation", json::object()}}).is_null()) << env_.serveErrors();
  const std::string target = env_.home + "/rw/unanswered.txt";
  kaja->send(request(8, "tools/call",
                     {{"name", "fs__write_file"},
                      {"arguments", {{"path", target}, {"content", "nobody said yes"}}}}));
  auto asked = kaja->waitForMethod("elicitation/create", 15);
  ASSERT_TRUE(asked) << env_.serveErrors();

  // Nobody answers: after a second the question is withdrawn, by its id, and the call refused.
  auto withdrawn = kaja->waitForMethod("notifications/cancelled", 15);
  ASSERT_TRUE(withdrawn) << env_.serveErrors();
  EXPECT_EQ((*withdrawn)["params"]["requestId"], (*asked)["id"]);
  auto refused = kaja->answer(8, 15);
  ASSERT_TRUE(refused) << env_.serveErrors();
  EXPECT_TRUE((*refused)["result"].value("isError", false)) << refused->dump();
  EXPECT_THAT((*refused)["result"].dump(), HasSubstr("no answer within 1 s"));

  // A yes that comes after is no one's answer: nothing runs, and the session goes on.
  kaja->send(json{{"jsonrpc", "2.0"},
                  {"id", (*asked)["id"]},
                  {"result", {{"action", "accept"}, {"content", {{"answer", "once"}}}}}});
  kaja->send(request(9, "ping"));
  ASSERT_TRUE(kaja->answer(9, 10));
  EXPECT_FALSE(fs::exists(target));
  EXPECT_THAT(testing::readFile(env_.auditPath()),
              ::testing::Not(HasSubstr("\"decision\":\"allowed\"")));
}

TEST_F(ServeStdioTest, SwitchingThePersonaElsewhereReloadsToolsAndKeepsSharedServers) {
  env_.root.write("market/personas/one.toml",
                  "abilities = [{ name = \"fs\", roots = [\"~/rw\"] }, \"everything\"]\n");
  env_.root.write("market/personas/two.toml",
                  "abilities = [{ name = \"everything\", tools = [\"echo\"] }]\n");
  env_.root.write("config/kaja/persona", "one\n");
  auto kaja = env_.serve({});
  ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
  kaja->send(request(1, "tools/list"));
  auto first = kaja->answer(1, 15);
  ASSERT_TRUE(first);
  EXPECT_THAT(toolNames(*first), ::testing::Contains("fs__read_text_file"));
  EXPECT_THAT(toolNames(*first), ::testing::Contains("everything__get-sum"));
  const auto everything = env_.serverPids("everything");
  ASSERT_FALSE(everything.empty());
  ASSERT_FALSE(env_.serverPids("fs").empty());

  testing::RunOptions run;
  run.timeoutSeconds = 20;
  auto use = testing::runCommandWith({testing::ServeFixture::kajaBin(), "persona", "use", "two"},
                                     env_.env(), run);
  ASSERT_EQ(use.exitCode, 0) << use.err;
  const auto switched = std::chrono::steady_clock::now();
  auto changed = kaja->waitForMethod("notifications/tools/list_changed", 10);
  ASSERT_TRUE(changed) << env_.serveErrors();
  RecordProperty(
      "ReloadSeconds",
      std::to_string(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - switched).count()));

  kaja->send(request(2, "tools/list"));
  auto second = kaja->answer(2, 15);
  ASSERT_TRUE(second);
  EXPECT_EQ(toolNames(*second), std::vector<std::string>{"everything__echo"});
  EXPECT_EQ(env_.serverPids("everything"), everything) << "the shared server was restarted";
  EXPECT_TRUE(eventually([&] { return env_.serverPids("fs").empty(); }, 5))
      << "the ability persona two does not give still runs";
  kaja->send(request(3, "tools/call",
                     {{"name", "everything__echo"}, {"arguments", {{"message", "reloaded"}}}}));
  auto echoed = kaja->answer(3, 15);
  ASSERT_TRUE(echoed);
  EXPECT_THAT((*echoed)["result"].dump(), HasSubstr("reloaded"));
  EXPECT_THAT(env_.serveErrors(), HasSubstr("\"two\""));
}

TEST_F(ServeStdioTest, AnEditedPersonaSwitchesFoldersLiveWithoutARestart) {
  env_.root.write("market/personas/edit.toml",
                  "abilities = [{ name = \"fs\", roots = [\"~/rw\"] }]\n");
  auto kaja = env_.serve({"--persona", "edit"});
  ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
  json allowed = request(1, "tools/call", {{"name", "fs__list_allowed_directories"}});
  kaja->send(allowed);
  auto before = kaja->answer(1, 15);
  ASSERT_TRUE(before) << env_.serveErrors();
  EXPECT_THAT((*before)["result"].dump(), HasSubstr(env_.home + "/rw"));
  const auto server = env_.serverPids("fs");
  ASSERT_FALSE(server.empty());

  // Only a read-only folder now: the writing tools go, the server stays.
  env_.root.write("market/personas/edit.toml",
                  "abilities = [{ name = \"fs\", roots = [{ path = \"~/ro\", readOnly = true }] "
                  "}]\n");
  ASSERT_TRUE(kaja->waitForMethod("notifications/tools/list_changed", 10)) << env_.serveErrors();
  // The server asks for its roots again after kaja tells it they changed, a moment later.
  int id = 100;
  std::string now;
  const bool switched = eventually(
      [&] {
        allowed["id"] = ++id;
        kaja->send(allowed);
        auto answered = kaja->answer(id, 10);
        now = answered ? (*answered)["result"].dump() : "";
        return now.find(env_.home + "/ro") != std::string::npos;
      },
      5);
  EXPECT_TRUE(switched) << now;
  EXPECT_THAT(now, ::testing::Not(HasSubstr(env_.home + "/rw")));
  kaja->send(request(3, "tools/list"));
  auto listed = kaja->answer(3, 15);
  ASSERT_TRUE(listed);
  EXPECT_THAT(toolNames(*listed), ::testing::Contains("fs__read_text_file"));
  EXPECT_THAT(toolNames(*listed), ::testing::Not(::testing::Contains("fs__write_file")));
  EXPECT_EQ(env_.serverPids("fs"), server);
}

TEST_F(ServeStdioTest, ServerLogMessagesReachTheClientUnderTheAbilitysName) {
  auto kaja = env_.serve({"--persona", "demo"});
  ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
  kaja->send(request(1, "logging/setLevel", {{"level", "debug"}}));
  ASSERT_TRUE(kaja->answer(1, 10));
  kaja->send(request(2, "tools/call", {{"name", "everything__toggle-simulated-logging"}}));
  ASSERT_TRUE(kaja->answer(2, 15)) << env_.serveErrors();
  auto log = kaja->waitForMethod("notifications/message", 10);
  ASSERT_TRUE(log) << env_.serveErrors();
  EXPECT_TRUE((*log)["params"].value("logger", "").starts_with("everything")) << log->dump();
  EXPECT_THAT((*log)["params"].value("data", json()).dump(), HasSubstr("message"));
}

// A misbehaving server (tests/tools/kaja_fault_server) in front of which the session goes on.
class ServeFaultTest : public ServeStdioTest {
 protected:
  ServeFaultTest() {
    env_.root.write("market/abilities/fault/mcp.toml",
                    "command = \"" + std::string(kaja::test::binDir()) +
                        "/kaja_fault_server\"\nargs = [\"hostile\"]\napproval = \"never\"\n"
                        "[env]\nKAJA_GATEWAY_TEST = \"" +
                        env_.tag + "-fault;\"\n");
    env_.root.write("market/personas/faulty.toml", "abilities = [\"fault\", \"everything\"]\n");
  }
  std::optional<json> call(testing::ServeProcess& kaja, int id, const std::string& tool) {
    kaja.send(request(id, "tools/call", {{"name", "fault__" + tool}}));
    return kaja.answer(id, 20);
  }
};

TEST_F(ServeFaultTest, ChangedToolsHugeResultsAndACrashLeaveTheSessionWorking) {
  auto kaja = env_.serve({"--persona", "faulty"});
  ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
  auto changed = call(*kaja, 1, "change-tools");
  ASSERT_TRUE(changed) << env_.serveErrors();
  ASSERT_TRUE(kaja->waitForMethod("notifications/tools/list_changed", 10));
  kaja->send(request(2, "tools/list"));
  auto listed = kaja->answer(2, 10);
  ASSERT_TRUE(listed);
  EXPECT_THAT(toolNames(*listed), ::testing::Contains("fault__new-tool"));

  auto huge = call(*kaja, 3, "huge-result");
  ASSERT_TRUE(huge) << env_.serveErrors();
  EXPECT_TRUE(huge->contains("result")) << huge->dump().substr(0, 500);
  EXPECT_LT(huge->dump().size(), 2UL * 1024 * 1024);

  auto crashed = call(*kaja, 4, "crash");
  ASSERT_TRUE(crashed) << env_.serveErrors();
  EXPECT_TRUE((*crashed)["result"].value("isError", false)) << crashed->dump();
  EXPECT_THAT((*crashed)["result"].dump(), HasSubstr("fault"));
  // The server is lazy (the default): its tools stay offered, and the next call starts
  // it again.
  auto again = call(*kaja, 7, "list-count");
  ASSERT_TRUE(again) << env_.serveErrors();
  EXPECT_FALSE((*again)["result"].value("isError", false)) << again->dump();
  kaja->send(request(5, "tools/call",
                     {{"name", "everything__echo"}, {"arguments", {{"message", "other server"}}}}));
  auto other = kaja->answer(5, 10);
  ASSERT_TRUE(other);
  EXPECT_THAT((*other)["result"].dump(), HasSubstr("other server"));
  kaja->send(request(6, "ping"));
  EXPECT_TRUE(kaja->answer(6, 10));
}

TEST_F(ServeFaultTest, AGrandchildAServerLeftBehindEndsWithKaja) {
  auto kaja = env_.serve({"--persona", "faulty"});
  ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
  auto spawned = call(*kaja, 1, "spawn-grandchild");
  ASSERT_TRUE(spawned) << env_.serveErrors();
  const std::string text = (*spawned)["result"]["content"][0].value("text", "");
  const pid_t grandchild = static_cast<pid_t>(std::atoi(text.c_str()));
  ASSERT_GT(grandchild, 0) << spawned->dump();
  ASSERT_EQ(::kill(grandchild, 0), 0);
  kaja->closeInput();
  ASSERT_TRUE(kaja->waitExit(10)) << env_.serveErrors();
  EXPECT_TRUE(eventually([&] { return testing::processesTagged(env_.tag).empty(); }, 3))
      << testing::processesTagged(env_.tag).size() << " processes left";
}

}  // namespace
}  // namespace kaja::cli
