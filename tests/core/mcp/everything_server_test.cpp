// The client against the reference servers from npm (server-everything, server-filesystem).
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "core/mcp/blocking_client.h"
#include "core/mcp/client.h"
#include "core/mcp/stdio_transport.h"
#include "tests/core/mcp/test_servers.h"

namespace kaja::core::mcp {
namespace {

using namespace std::chrono_literals;
using kaja::testing::everythingPlan;
using kaja::testing::nodePath;
using kaja::testing::runUntil;

class EverythingServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (nodePath().empty()) GTEST_SKIP() << "node is not installed";
  }
  StdioOptions named(const std::string& name) {
    StdioOptions options;
    options.serverName = name;
    return options;
  }
};

TEST_F(EverythingServerTest, ListsToolsAndEchoes) {
  BlockingClient client;
  auto info = client.connect(everythingPlan(), named("everything"));
  ASSERT_TRUE(info) << info.error().describe() << "\n" << info.error().detail;
  EXPECT_TRUE(isSupportedProtocolVersion(info->protocolVersion));
  EXPECT_TRUE(info->hasTools());
  auto tools = client.listTools();
  ASSERT_TRUE(tools) << tools.error().describe();
  EXPECT_GT(tools->size(), 0u);
  EXPECT_TRUE(std::any_of(tools->begin(), tools->end(), [](const Tool& tool) {
    return tool.name == "echo" && tool.readOnlyHint() && tool.inputSchema.contains("properties");
  }));
  auto result = client.callTool("echo", {{"message", "hello kaja"}});
  ASSERT_TRUE(result) << result.error().describe();
  EXPECT_FALSE(result->isError());
  EXPECT_EQ(result->text(), "Echo: hello kaja");
  EXPECT_TRUE(client.ping());
}

TEST_F(EverythingServerTest, KeepsImageContent) {
  BlockingClient client;
  ASSERT_TRUE(client.connect(everythingPlan(), named("everything")));
  auto result = client.callTool("get-tiny-image", Json::object());
  ASSERT_TRUE(result) << result.error().describe();
  const auto images = result->blocksOfType("image");
  ASSERT_EQ(images.size(), 1u);
  EXPECT_EQ(images[0]["mimeType"], "image/png");
  EXPECT_GT(images[0]["data"].get<std::string>().size(), 100u);
  EXPECT_EQ(result->content().size(), 3u);  // text, image, text: nothing dropped
}

TEST_F(EverythingServerTest, DeliversProgress) {
  BlockingClient client;
  ASSERT_TRUE(client.connect(everythingPlan(), named("everything")));
  std::mutex mutex;
  std::vector<Progress> updates;
  auto result = client.callTool("trigger-long-running-operation", {{"duration", 1}, {"steps", 3}},
                                15s, [&](const Progress& progress) {
                                  std::lock_guard lock(mutex);
                                  updates.push_back(progress);
                                });
  ASSERT_TRUE(result) << result.error().describe();
  std::lock_guard lock(mutex);
  ASSERT_EQ(updates.size(), 3u);
  EXPECT_EQ(updates.back().progress, 3);
  EXPECT_EQ(updates.back().total, 3);
}

TEST_F(EverythingServerTest, ProgressCanKeepALongCallAlive) {
  boost::asio::io_context io;
  auto transport = StdioTransport::spawn(io, everythingPlan(), named("everything"));
  ASSERT_TRUE(transport);
  auto client = Client::create(io, *transport);
  bool connected = false;
  client->connect([&](Result<ServerInfo> info) { connected = info.has_value(); });
  ASSERT_TRUE(runUntil(io, [&] { return connected; }));
  // 1.5 s in total with an update every 0.3 s: a 1 s timeout only holds if progress resets it.
  std::optional<Result<ToolResult>> outcome;
  CallOptions options{1s, [](const Progress&) {}, true};
  client->callTool("trigger-long-running-operation", {{"duration", 1.5}, {"steps", 5}}, options,
                   [&](Result<ToolResult> result) { outcome = std::move(result); });
  ASSERT_TRUE(runUntil(
      io, [&] { return outcome.has_value(); }, 10s));
  EXPECT_TRUE(*outcome) << outcome->error().message;
  bool closed = false;
  client->close([&] { closed = true; });
  ASSERT_TRUE(runUntil(io, [&] { return closed; }));
}

TEST_F(EverythingServerTest, TimeoutCancelsAndTheConnectionLivesOn) {
  BlockingClient client;
  ASSERT_TRUE(client.connect(everythingPlan(), named("everything")));
  const auto start = std::chrono::steady_clock::now();
  auto result =
      client.callTool("trigger-long-running-operation", {{"duration", 20}, {"steps", 20}}, 500ms);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kTimeout);
  EXPECT_NE(result.error().message.find("within 500 ms"), std::string::npos)
      << result.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_TRUE(client.ping());
}

TEST_F(EverythingServerTest, ExplicitCancellationFailsTheCallAtOnce) {
  boost::asio::io_context io;
  auto transport = StdioTransport::spawn(io, everythingPlan(), named("everything"));
  ASSERT_TRUE(transport);
  auto client = Client::create(io, *transport);
  bool connected = false;
  client->connect([&](Result<ServerInfo> info) {
    ASSERT_TRUE(info) << info.error().describe();
    connected = true;
  });
  ASSERT_TRUE(runUntil(io, [&] { return connected; }));

  std::optional<Result<ToolResult>> outcome;
  int progressSeen = 0;
  std::int64_t id = 0;
  id = client->callTool("trigger-long-running-operation", {{"duration", 30}, {"steps", 60}},
                        CallOptions{30s,
                                    [&](const Progress&) {
                                      if (++progressSeen == 1) client->cancel(id, "test says stop");
                                    }},
                        [&](Result<ToolResult> result) { outcome = std::move(result); });
  ASSERT_TRUE(runUntil(
      io, [&] { return outcome.has_value(); }, 10s));
  ASSERT_FALSE(*outcome);
  EXPECT_EQ(outcome->error().code, ErrorCode::kRefused);
  EXPECT_NE(outcome->error().message.find("test says stop"), std::string::npos);
  EXPECT_FALSE(client->cancel(id));  // no longer pending

  bool pinged = false;
  client->ping([&](Result<void> result) { pinged = result.has_value(); });
  ASSERT_TRUE(runUntil(io, [&] { return pinged; }));
  bool closed = false;
  client->close([&] { closed = true; });
  ASSERT_TRUE(runUntil(io, [&] { return closed; }));
}

TEST_F(EverythingServerTest, ProgressRestartsTheTimeoutOnlyWhenAskedTo) {
  boost::asio::io_context io;
  auto transport = StdioTransport::spawn(io, everythingPlan(), named("everything"));
  ASSERT_TRUE(transport);
  auto client = Client::create(io, *transport);
  bool connected = false;
  client->connect([&](Result<ServerInfo> info) { connected = info.has_value(); });
  ASSERT_TRUE(runUntil(io, [&] { return connected; }));

  // 2 s of work reporting every 250 ms, against a 700 ms timeout.
  const Json arguments = {{"duration", 2}, {"steps", 8}};
  std::optional<Result<ToolResult>> reset;
  std::optional<Result<ToolResult>> plain;
  int progressSeen = 0;
  client->callTool("trigger-long-running-operation", arguments,
                   CallOptions{700ms, [&](const Progress&) { ++progressSeen; }, true},
                   [&](Result<ToolResult> result) { reset = std::move(result); });
  client->callTool("trigger-long-running-operation", arguments,
                   CallOptions{700ms, [](const Progress&) {}, false},
                   [&](Result<ToolResult> result) { plain = std::move(result); });
  ASSERT_TRUE(runUntil(
      io, [&] { return reset.has_value() && plain.has_value(); }, 10s));
  EXPECT_TRUE(*reset) << reset->error().describe();
  EXPECT_GE(progressSeen, 4);
  ASSERT_FALSE(*plain);
  EXPECT_EQ(plain->error().code, ErrorCode::kTimeout);

  bool closed = false;
  client->close([&] { closed = true; });
  ASSERT_TRUE(runUntil(io, [&] { return closed; }));
}

TEST_F(EverythingServerTest, AnswersRootsList) {
  BlockingClient client;
  client.setRootsProvider([] { return std::vector<Root>{{fileUri("/tmp/kaja roots"), "work"}}; });
  ASSERT_TRUE(client.connect(everythingPlan(), named("everything")));
  auto result = client.callTool("get-roots-list", Json::object());
  ASSERT_TRUE(result) << result.error().describe();
  EXPECT_NE(result->text().find("file:///tmp/kaja%20roots"), std::string::npos) << result->text();
}

TEST(FilesystemServerTest, ServerTakesItsFoldersFromOurRoots) {
  if (nodePath().empty()) GTEST_SKIP() << "node is not installed";
  kaja::testing::ScopedTempDir started;
  kaja::testing::ScopedTempDir granted;
  BlockingClient client;
  client.setRootsProvider([&] { return std::vector<Root>{{fileUri(granted.path()), "granted"}}; });
  StdioOptions options;
  options.serverName = "filesystem";
  ASSERT_TRUE(client.connect(kaja::testing::filesystemPlan(started.path()), options));
  // The server asks for roots right after initialized; give its request a moment.
  std::string text;
  EXPECT_TRUE(kaja::testing::eventually([&] {
    auto result = client.callTool("list_allowed_directories", Json::object());
    text = result ? result->text() : result.error().message;
    return text.find(granted.path()) != std::string::npos;
  })) << text;
  EXPECT_EQ(text.find(started.path()), std::string::npos) << text;
}

TEST(FilesystemServerTest, RootsChangeWithoutARestart) {
  if (nodePath().empty()) GTEST_SKIP() << "node is not installed";
  kaja::testing::ScopedTempDir first;
  kaja::testing::ScopedTempDir second;
  std::mutex mutex;
  std::string current = first.path();
  BlockingClient client;
  client.setRootsProvider([&] {
    std::lock_guard lock(mutex);
    return std::vector<Root>{{fileUri(current), "work"}};
  });
  StdioOptions options;
  options.serverName = "filesystem";
  ASSERT_TRUE(client.connect(kaja::testing::filesystemPlan(first.path()), options));
  auto allowed = [&] {
    auto result = client.callTool("list_allowed_directories", Json::object());
    return result ? result->text() : result.error().message;
  };
  ASSERT_TRUE(
      kaja::testing::eventually([&] { return allowed().find(first.path()) != std::string::npos; }));
  {
    std::lock_guard lock(mutex);
    current = second.path();
  }
  client.notifyRootsChanged();
  std::string text;
  EXPECT_TRUE(kaja::testing::eventually([&] {
    text = allowed();
    return text.find(second.path()) != std::string::npos;
  })) << text;
  EXPECT_EQ(text.find(first.path()), std::string::npos) << text;
}

}  // namespace
}  // namespace kaja::core::mcp
