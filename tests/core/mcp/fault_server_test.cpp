// The stdio transport and client against tests/tools/kaja_fault_server: every fault must
// end in one clear error within its timeout, and leave no process behind.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/asio/post.hpp>
#include <map>
#include <mutex>
#include <optional>

#include "core/mcp/blocking_client.h"
#include "core/mcp/client.h"
#include "core/mcp/stdio_transport.h"
#include "tests/core/mcp/test_servers.h"

namespace kaja::core::mcp {
namespace {

using namespace std::chrono_literals;
using kaja::testing::faultPlan;
using kaja::testing::runUntil;

StdioOptions named(const std::string& name = "fault") {
  StdioOptions options;
  options.serverName = name;
  options.closeGrace = 300ms;
  return options;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Runs one call against a fresh fault server and returns its outcome and duration.
struct Outcome {
  Result<ToolResult> result;
  std::chrono::steady_clock::duration took;
};
Outcome callOnce(const std::string& mode, const std::string& tool,
                 std::chrono::milliseconds timeout = 10s) {
  BlockingClient client;
  auto info = client.connect(faultPlan(mode), named());
  EXPECT_TRUE(info) << info.error().describe();
  const auto start = std::chrono::steady_clock::now();
  auto result = client.callTool(tool, Json::object(), timeout);
  return {std::move(result), std::chrono::steady_clock::now() - start};
}

TEST(FaultServerTest, FollowsPagination) {
  BlockingClient client;
  ASSERT_TRUE(client.connect(faultPlan(), named()));
  auto tools = client.listTools();
  ASSERT_TRUE(tools) << tools.error().describe();
  EXPECT_EQ(tools->size(), 23u);  // five pages, the last of three
  EXPECT_EQ(tools->back().name, "list-count");
}

TEST(FaultServerTest, EndlessPaginationIsAnError) {
  BlockingClient client;
  ASSERT_TRUE(client.connect(faultPlan("paginate-forever"), named()));
  auto tools = client.listTools();
  ASSERT_FALSE(tools);
  EXPECT_EQ(tools.error().code, ErrorCode::kProtocol);
  EXPECT_TRUE(contains(tools.error().message, "kept paging")) << tools.error().message;
}

TEST(FaultServerTest, KeepsEveryContentTypeAndStructuredContent) {
  auto [result, took] = callOnce("normal", "rich-content");
  ASSERT_TRUE(result) << result.error().describe();
  EXPECT_TRUE(result->isError());
  EXPECT_EQ(result->text(), "hello");
  for (const char* type : {"image", "audio", "resource_link", "resource"}) {
    EXPECT_EQ(result->blocksOfType(type).size(), 1u) << type;
  }
  ASSERT_TRUE(result->structuredContent());
  EXPECT_EQ((*result->structuredContent())["answer"], 42);
}

TEST(FaultServerTest, CrashMidCallReportsStatusAndStderr) {
  auto [result, took] = callOnce("normal", "crash");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kConnect);
  EXPECT_TRUE(contains(result.error().message, "exited with status 3")) << result.error().message;
  EXPECT_TRUE(contains(result.error().message, "crashing on purpose")) << result.error().message;
  EXPECT_TRUE(contains(result.error().message, "tools/call 'crash' failed"))
      << result.error().message;
  EXPECT_EQ(result.error().context, "fault");
  EXPECT_LT(took, 3s);
}

TEST(FaultServerTest, ExitFailsEveryPendingCallAtOnceAndLaterCallsToo) {
  boost::asio::io_context io;
  auto transport = StdioTransport::spawn(io, faultPlan(), named());
  ASSERT_TRUE(transport);
  auto client = Client::create(io, *transport);
  bool connected = false;
  client->connect([&](Result<ServerInfo> info) { connected = info.has_value(); });
  ASSERT_TRUE(runUntil(io, [&] { return connected; }));
  std::vector<Error> errors;
  for (const char* tool : {"hang", "hang", "hang", "crash"}) {
    client->callTool(tool, Json::object(), CallOptions{30s}, [&](Result<ToolResult> result) {
      ASSERT_FALSE(result);
      errors.push_back(result.error());
    });
  }
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(runUntil(
      io, [&] { return errors.size() == 4; }, 5s));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  for (const auto& error : errors) {
    EXPECT_TRUE(contains(error.message, "exited with status 3")) << error.message;
  }
  EXPECT_FALSE(client->isReady());
  std::optional<Result<ToolResult>> later;
  client->callTool("echo", Json::object(), {}, [&](Result<ToolResult> result) { later = result; });
  ASSERT_TRUE(runUntil(
      io, [&] { return later.has_value(); }, 1s));
  ASSERT_FALSE(*later);
  EXPECT_TRUE(contains(later->error().message, "exited with status 3")) << later->error().message;
}

TEST(FaultServerTest, EachCallTimesOutAtItsOwnDeadlineWhateverTheOrder) {
  boost::asio::io_context io;
  auto transport = StdioTransport::spawn(io, faultPlan(), named());
  ASSERT_TRUE(transport);
  auto client = Client::create(io, *transport);
  bool connected = false;
  client->connect([&](Result<ServerInfo> info) { connected = info.has_value(); });
  ASSERT_TRUE(runUntil(io, [&] { return connected; }));
  // The long deadline is set first, so the short one must pull the timer earlier; the
  // answered echo must not disturb either.
  const auto start = std::chrono::steady_clock::now();
  std::map<std::string, std::chrono::steady_clock::duration> took;
  auto record = [&](const std::string& name, std::optional<ErrorCode> expected) {
    return [&, name, expected](Result<ToolResult> result) {
      took[name] = std::chrono::steady_clock::now() - start;
      if (!expected) {
        EXPECT_TRUE(result) << result.error().describe();
      } else {
        ASSERT_FALSE(result);
        EXPECT_EQ(result.error().code, *expected);
      }
    };
  };
  client->callTool("hang", Json::object(), CallOptions{2500ms},
                   record("long", ErrorCode::kTimeout));
  client->callTool("hang", Json::object(), CallOptions{200ms},
                   record("short", ErrorCode::kTimeout));
  client->callTool("echo", Json::object(), {}, record("echo", std::nullopt));
  ASSERT_TRUE(runUntil(
      io, [&] { return took.size() == 3; }, 10s));
  EXPECT_LT(took["echo"], took["short"]);
  EXPECT_GE(took["short"], 200ms);
  EXPECT_LT(took["short"], 2400ms);  // before the long deadline: the timer was pulled earlier
  EXPECT_GE(took["long"], 2500ms);
  EXPECT_LT(took["long"], 6s);
  EXPECT_TRUE(client->isReady());
}

TEST(FaultServerTest, SignalDeathIsNamed) {
  auto [result, took] = callOnce("normal", "abort");
  ASSERT_FALSE(result);
  EXPECT_TRUE(contains(result.error().message, "killed by signal 6")) << result.error().message;
}

TEST(FaultServerTest, HangTimesOutAndSendsCancelled) {
  BlockingClient client;
  ASSERT_TRUE(client.connect(faultPlan(), named()));
  const auto start = std::chrono::steady_clock::now();
  auto hung = client.callTool("hang", Json::object(), 300ms);
  ASSERT_FALSE(hung);
  EXPECT_EQ(hung.error().code, ErrorCode::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  auto ids = client.callTool("cancelled-ids", Json::object());
  ASSERT_TRUE(ids) << ids.error().describe();
  const auto cancelled = (*ids->structuredContent())["ids"];
  ASSERT_EQ(cancelled.size(), 1u);
  EXPECT_TRUE(cancelled[0].is_number_integer());
}

TEST(FaultServerTest, OverlongLineKillsTheServer) {
  // The default bound is 64 MB (hostile_client_test reads 10 MB and refuses 70 MB); a smaller
  // one is kept to the letter.
  BlockingClient client;
  StdioOptions options = named();
  options.maxLineBytes = 4UL * 1024 * 1024;
  ASSERT_TRUE(client.connect(faultPlan("normal"), options));
  const auto start = std::chrono::steady_clock::now();
  auto result = client.callTool("long-line", Json::object(), 10s);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kProtocol);
  EXPECT_TRUE(contains(result.error().message, "longer than 4 MB")) << result.error().message;
  EXPECT_LT(took, 5s);
}

TEST(FaultServerTest, GarbageFloodIsBounded) {
  auto [result, took] = callOnce("normal", "garbage");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kProtocol);
  EXPECT_TRUE(contains(result.error().message, "not JSON-RPC")) << result.error().message;
  EXPECT_TRUE(contains(result.error().message, "server 'fault'")) << result.error().message;
  EXPECT_LT(took, 5s);
}

TEST(FaultServerTest, BannerAndStrayLinesAreSkippedWithAWarning) {
  BlockingClient client;
  std::mutex mutex;
  std::vector<std::string> warnings;
  client.setWarningHandler([&](const std::string& warning) {
    std::lock_guard lock(mutex);
    warnings.push_back(warning);
  });
  ASSERT_TRUE(client.connect(faultPlan("banner"), named()));
  auto result = client.callTool("stray-line", Json::object());
  ASSERT_TRUE(result) << result.error().describe();
  EXPECT_EQ(result->text(), "after the stray line");
  std::lock_guard lock(mutex);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_TRUE(contains(warnings[0], "Fault server 1.0 ready")) << warnings[0];
  EXPECT_TRUE(contains(warnings[1], "server 'fault'")) << warnings[1];
}

TEST(FaultServerTest, StderrFloodIsBoundedAndItsTailReported) {
  auto [result, took] = callOnce("normal", "stderr-flood");
  ASSERT_FALSE(result);
  EXPECT_TRUE(contains(result.error().message, "exited with status 4")) << result.error().message;
  EXPECT_TRUE(contains(result.error().message, "the last line of the flood"))
      << result.error().message << "\n"
      << result.error().detail.substr(0, 300);
  EXPECT_LT(result.error().detail.size(), 70u * 1024);
  EXPECT_TRUE(contains(result.error().detail, "the last line of the flood"));
}

TEST(FaultServerTest, ClosedStdoutEndsTheServer) {
  auto [result, took] = callOnce("normal", "close-stdout");
  ASSERT_FALSE(result);
  EXPECT_TRUE(contains(result.error().message, "closed its stdout")) << result.error().message;
  EXPECT_LT(took, 3s);
}

TEST(FaultServerTest, ServerExitingAtStartFailsConnect) {
  BlockingClient client;
  auto info = client.connect(faultPlan("exit-at-start"), named());
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().code, ErrorCode::kConnect);
  EXPECT_TRUE(contains(info.error().message, "exited with status 7")) << info.error().message;
  EXPECT_TRUE(contains(info.error().message, "refusing to start")) << info.error().message;
}

TEST(FaultServerTest, MissingProgramFailsConnectWithSpawnError) {
  BlockingClient client;
  auto info = client.connect(kaja::testing::minimalPlan({"/nonexistent/mcp-server"}), named());
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().code, ErrorCode::kSpawn);
  EXPECT_EQ(info.error().message, "execve(/nonexistent/mcp-server): No such file or directory");
}

TEST(FaultServerTest, SilentInitializeTimesOut) {
  ClientOptions options;
  options.connectTimeout = 400ms;
  BlockingClient client(options);
  const auto start = std::chrono::steady_clock::now();
  auto info = client.connect(faultPlan("hang-init"), named());
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().code, ErrorCode::kTimeout);
  EXPECT_TRUE(contains(info.error().message, "within 400 ms")) << info.error().message;
  EXPECT_TRUE(contains(info.error().detail, "fault server: not answering initialize"))
      << info.error().detail;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(FaultServerTest, UnsupportedProtocolVersionIsRefused) {
  BlockingClient client;
  auto info = client.connect(faultPlan("wrong-version"), named());
  ASSERT_FALSE(info);
  EXPECT_EQ(info.error().code, ErrorCode::kProtocol);
  EXPECT_TRUE(contains(info.error().message, "1999-01-01")) << info.error().message;
}

TEST(FaultServerTest, NotificationsBeforeTheInitializeReplyAreHandled) {
  boost::asio::io_context io;
  auto transport = StdioTransport::spawn(io, faultPlan("notify-before-init"), named());
  ASSERT_TRUE(transport);
  auto client = Client::create(io, *transport);
  std::vector<std::string> logs;
  client->setLogHandler(
      [&](const LogMessage& log) { logs.push_back(log.data.get<std::string>()); });
  std::optional<Result<ServerInfo>> info;
  client->connect([&](Result<ServerInfo> result) { info = std::move(result); });
  ASSERT_TRUE(runUntil(io, [&] { return info.has_value(); }));
  ASSERT_TRUE(*info) << (*info).error().describe();
  EXPECT_EQ((*info)->name, "kaja-fault-server");
  EXPECT_EQ(logs, std::vector<std::string>{"hello before init"});
}

TEST(FaultServerTest, ServerRequestsAreAnswered) {
  BlockingClient client;
  client.setRootsProvider([] { return std::vector<Root>{{"file:///srv/data", "data"}}; });
  ASSERT_TRUE(client.connect(faultPlan(), named()));
  auto roots = client.callTool("ask-roots", Json::object());
  ASSERT_TRUE(roots) << roots.error().describe();
  EXPECT_EQ((*roots->structuredContent())["roots"][0]["uri"], "file:///srv/data");
  auto unknown = client.callTool("ask-unknown", Json::object());
  ASSERT_TRUE(unknown);
  EXPECT_EQ((*unknown->structuredContent())["code"], rpc_error::kMethodNotFound);
  // No sampling or elicitation handler was set, so both are declined the same way.
  for (const char* tool : {"ask-sampling", "ask-elicitation"}) {
    auto declined = client.callTool(tool, Json::object());
    ASSERT_TRUE(declined);
    EXPECT_EQ((*declined->structuredContent())["code"], rpc_error::kMethodNotFound) << tool;
  }
  auto ping = client.callTool("ask-ping", Json::object());
  ASSERT_TRUE(ping);
  EXPECT_EQ(*ping->structuredContent(), Json::object());
}

TEST(FaultServerTest, OffersOnlyTheCapabilitiesTheHostCanServe) {
  BlockingClient bare;
  ASSERT_TRUE(bare.connect(faultPlan(), named()));
  auto none = bare.callTool("client-capabilities", Json::object());
  ASSERT_TRUE(none);
  EXPECT_EQ(*none->structuredContent(), Json::object());

  BlockingClient withRoots;
  withRoots.setRootsProvider([] { return std::vector<Root>{}; });
  ASSERT_TRUE(withRoots.connect(faultPlan(), named()));
  auto roots = withRoots.callTool("client-capabilities", Json::object());
  ASSERT_TRUE(roots);
  EXPECT_EQ(*roots->structuredContent(), (Json{{"roots", {{"listChanged", true}}}}));
}

TEST(FaultServerTest, SamplingGoesToTheHostHandler) {
  boost::asio::io_context io;
  auto transport = StdioTransport::spawn(io, faultPlan(), named());
  ASSERT_TRUE(transport);
  auto client = Client::create(io, *transport);
  client->setSamplingHandler(
      [](const Json& params, const InputOrigin&, std::function<void(Result<Json>)> respond) {
        respond(Json{{"model", "test"}, {"maxTokens", params["maxTokens"]}});
      });
  // Answered later, from another handler, as a host waiting for its user would.
  client->setElicitationHandler(
      [&io](const Json& params, const InputOrigin&, std::function<void(Result<Json>)> respond) {
        boost::asio::post(io, [respond, message = params["message"]] {
          respond(Json{{"action", "accept"}, {"content", {{"name", "Kaja"}}}, {"asked", message}});
        });
      });
  bool connected = false;
  client->connect([&](Result<ServerInfo> info) { connected = info.has_value(); });
  ASSERT_TRUE(runUntil(io, [&] { return connected; }));
  std::optional<Result<ToolResult>> outcome;
  client->callTool("ask-sampling", Json::object(), {},
                   [&](Result<ToolResult> result) { outcome = std::move(result); });
  ASSERT_TRUE(runUntil(io, [&] { return outcome.has_value(); }));
  ASSERT_TRUE(*outcome);
  EXPECT_EQ((*(*outcome)->structuredContent())["maxTokens"], 10);

  outcome.reset();
  client->callTool("ask-elicitation", Json::object(), {},
                   [&](Result<ToolResult> result) { outcome = std::move(result); });
  ASSERT_TRUE(runUntil(io, [&] { return outcome.has_value(); }));
  ASSERT_TRUE(*outcome);
  EXPECT_EQ(*(*outcome)->structuredContent(),
            (Json{{"action", "accept"}, {"content", {{"name", "Kaja"}}}, {"asked", "Your name?"}}));
}

TEST(FaultServerTest, ToolListChangesAreFollowed) {
  boost::asio::io_context io;
  auto transport = StdioTransport::spawn(io, faultPlan(), named());
  ASSERT_TRUE(transport);
  auto client = Client::create(io, *transport);
  std::optional<std::vector<Tool>> changed;
  client->setToolsChangedHandler([&](const std::vector<Tool>& tools) { changed = tools; });
  bool listed = false;
  client->connect([&](Result<ServerInfo> info) {
    ASSERT_TRUE(info);
    client->listTools([&](Result<std::vector<Tool>> tools) { listed = tools.has_value(); });
  });
  ASSERT_TRUE(runUntil(io, [&] { return listed; }));
  EXPECT_EQ(client->tools().size(), 23u);
  client->callTool("change-tools", Json::object(), {}, [](Result<ToolResult>) {});
  ASSERT_TRUE(runUntil(io, [&] { return changed.has_value(); }));
  EXPECT_EQ(changed->size(), 24u);
  EXPECT_EQ(client->tools().back().name, "new-tool");
}

// A server announcing changes without pause gets re-listed twice a second, not back to back.
TEST(FaultServerTest, ANonStopStreamOfToolChangesIsListedAtMostTwiceASecond) {
  boost::asio::io_context io;
  auto transport = StdioTransport::spawn(io, faultPlan(), named());
  ASSERT_TRUE(transport);
  auto client = Client::create(io, *transport);
  int changes = 0;
  client->setToolsChangedHandler([&](const std::vector<Tool>&) { ++changes; });
  bool listed = false;
  client->connect([&](Result<ServerInfo> info) {
    ASSERT_TRUE(info);
    client->listTools([&](Result<std::vector<Tool>> tools) { listed = tools.has_value(); });
  });
  ASSERT_TRUE(runUntil(io, [&] { return listed; }));
  // 300 notifications, one every 5 ms: about 1.5 s of them.
  bool streaming = false;
  client->callTool("change-stream", {{"count", 300}, {"intervalMs", 5}}, {},
                   [&](Result<ToolResult> result) { streaming = result.has_value(); });
  ASSERT_TRUE(runUntil(io, [&] { return streaming; }));
  auto until = std::chrono::steady_clock::now() + 2500ms;
  runUntil(
      io, [&] { return std::chrono::steady_clock::now() >= until; }, 3s);
  std::optional<std::string> count;
  client->callTool("list-count", Json::object(), {},
                   [&](Result<ToolResult> result) { count = result ? result->text() : "error"; });
  ASSERT_TRUE(runUntil(io, [&] { return count.has_value(); }));
  // Each listing is five pages; the first was ours. Over ~2.5 s at most one per 500 ms,
  // where back to back it would have been one per notification.
  const int listings = std::stoi(*count) / 5 - 1;
  EXPECT_GE(changes, 1);
  EXPECT_GE(listings, 1);
  EXPECT_LE(listings, 7) << "re-listed " << listings << " times for 300 notifications";
}

TEST(FaultServerTest, ProgressTokensReachTheirCall) {
  BlockingClient client;
  ASSERT_TRUE(client.connect(faultPlan(), named()));
  std::vector<std::string> messages;
  auto result = client.callTool("progress", Json::object(), 5s, [&](const Progress& progress) {
    messages.push_back(progress.message);
  });
  ASSERT_TRUE(result);
  EXPECT_EQ(result->text(), "done");
  EXPECT_EQ(messages, (std::vector<std::string>{"step 1", "step 2", "step 3"}));
}

// Progress restarts a call's timeout, but a server that reports progress for ever does not
// hold the call for ever: it ends at the client's progressLimit (the spec's maximum timeout).
// Found by an outside review: a sandbox worker kept a server whose client had left for 30
// minutes, three times its documented 10.
TEST(FaultServerTest, ProgressForEverEndsAtTheProgressLimit) {
  boost::asio::io_context io;
  auto transport = StdioTransport::spawn(io, faultPlan(), named());
  ASSERT_TRUE(transport);
  ClientOptions options;
  options.requestTimeout = 300ms;
  options.progressLimit = 1500ms;
  auto client = Client::create(io, *transport, options);
  bool ready = false;
  client->connect([&](Result<ServerInfo> info) { ready = info.has_value(); });
  ASSERT_TRUE(runUntil(io, [&] { return ready; }));
  CallOptions call;
  call.resetTimeoutOnProgress = true;
  int reports = 0;
  call.onProgress = [&](const Progress&) { ++reports; };
  std::optional<Result<ToolResult>> result;
  client->callTool("progress-forever", Json::object(), call,
                   [&](Result<ToolResult> answer) { result = std::move(answer); });
  ASSERT_TRUE(runUntil(
      io, [&] { return result.has_value(); }, 20s));
  ASSERT_FALSE(*result);
  EXPECT_EQ(result->error().code, ErrorCode::kTimeout) << result->error().message;
  // It outlived its 300 ms timeout on progress (a report every 100 ms) before the limit.
  EXPECT_GE(reports, 5);
}

TEST(FaultServerTest, CloseEndsHelpersTheServerLeftBehind) {
  BlockingClient client;
  ASSERT_TRUE(client.connect(faultPlan(), named()));
  auto result = client.callTool("spawn-grandchild", Json::object());
  ASSERT_TRUE(result);
  const pid_t helper = std::stoi(result->text());
  ASSERT_TRUE(kaja::testing::isRunning(helper));
  client.close();
  EXPECT_TRUE(kaja::testing::eventually([&] { return !kaja::testing::isRunning(helper); }));
}

TEST(FaultServerTest, CloseEscalatesToSigkill) {
  BlockingClient client;
  ASSERT_TRUE(client.connect(faultPlan("ignore-term"), named()));
  const auto start = std::chrono::steady_clock::now();
  client.close();
  // stdin EOF grace, then SIGTERM grace (ignored), then SIGKILL: about 2 × 300 ms.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 500ms);
  EXPECT_TRUE(kaja::testing::zombieChildren().empty());
}

TEST(FaultServerTest, OneIoContextServesManyConnections) {
  boost::asio::io_context io;
  std::vector<std::shared_ptr<Client>> clients;
  int answers = 0;
  for (int i = 0; i < 4; ++i) {
    auto transport = StdioTransport::spawn(io, faultPlan(), named("fault-" + std::to_string(i)));
    ASSERT_TRUE(transport);
    auto client = Client::create(io, *transport);
    client->connect([&, client, i](Result<ServerInfo> info) {
      ASSERT_TRUE(info);
      client->callTool("echo", {{"text", "n" + std::to_string(i)}}, {},
                       [&, i](Result<ToolResult> result) {
                         ASSERT_TRUE(result);
                         EXPECT_EQ(result->text(), "n" + std::to_string(i));
                         ++answers;
                       });
    });
    clients.push_back(client);
  }
  ASSERT_TRUE(runUntil(io, [&] { return answers == 4; }));
  int closed = 0;
  for (auto& client : clients) client->close([&] { ++closed; });
  ASSERT_TRUE(runUntil(io, [&] { return closed == 4; }));
}

}  // namespace
}  // namespace kaja::core::mcp
