// kaja's client against tests/servers/stateless_server.mjs: a server on the 2.x TypeScript
// SDK that speaks protocol 2026-07-28 (stateless) and still accepts clients that open with
// initialize, over stdio and over Streamable HTTP on 127.0.0.1.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <string_view>

#include "core/mcp/blocking_client.h"
#include "core/mcp/client.h"
#include "core/mcp/remote_transport.h"
#include "tests/core/mcp/client_harness.h"
#include "tests/core/mcp/http_test_servers.h"
#include "tests/core/mcp/test_servers.h"

namespace kaja::core::mcp {
namespace {

using namespace std::chrono_literals;
using kaja::testing::minimalPlan;
using kaja::testing::nodePath;
using kaja::testing::runUntil;
using kaja::testing::ServerProcess;
using kaja::testing::statelessPlan;

// kaja's client offers 2025-11-25 through initialize and the server accepts it: the clean
// fallback. Expect kStatelessProtocolVersion here once the client tries server/discover.
constexpr std::string_view kNegotiatedVersion = kLatestProtocolVersion;

// The 1x1 PNG the server's `image` tool returns.
constexpr std::string_view kPixelPng =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg"
    "==";

ClientOptions clientOptions(bool discover = false) {
  ClientOptions options;
  options.discover = discover;
  options.connectTimeout = 10s;  // node's start-up on a loaded 2-core machine
  options.requestTimeout = 10s;
  return options;
}

// One Client over Streamable HTTP on a private io_context, each call driven to its end.
class RemoteClient {
 public:
  explicit RemoteClient(const std::string& url, bool discover = false) {
    HttpOptions http;
    http.serverName = "stateless";
    http.addressPolicy.allowPrivate = true;  // the server is on 127.0.0.1
    http.timeout = 5s;
    http.closeTimeout = 1s;
    auto transport = makeRemoteTransport(io_, RemotePlan{url, false, {}}, http);
    EXPECT_TRUE(transport) << transport.error().describe();
    if (transport) client_ = Client::create(io_, *transport, clientOptions(discover));
  }
  ~RemoteClient() { kaja::testing::closeNow(io_, client_); }
  RemoteClient(const RemoteClient&) = delete;
  RemoteClient& operator=(const RemoteClient&) = delete;

  Result<ServerInfo> connect() {
    return drive<ServerInfo>([&](auto done) { client_->connect(std::move(done)); });
  }
  Result<std::vector<Tool>> listTools() {
    return drive<std::vector<Tool>>([&](auto done) { client_->listTools(std::move(done)); });
  }
  Result<ToolResult> callTool(const std::string& name, const Json& arguments,
                              std::chrono::milliseconds timeout = 10s,
                              std::function<void(const Progress&)> onProgress = {}) {
    return drive<ToolResult>([&](auto done) {
      CallOptions options;
      options.timeout = timeout;
      options.onProgress = std::move(onProgress);
      client_->callTool(name, arguments, std::move(options), std::move(done));
    });
  }

 private:
  template <class T>
  Result<T> drive(const std::function<void(std::function<void(Result<T>)>)>& start) {
    if (!client_) return fail(ErrorCode::kInternal, "no client");
    std::optional<Result<T>> out;
    start([&](Result<T> result) { out = std::move(result); });
    runUntil(
        io_, [&] { return out.has_value(); }, 15s);
    return out ? std::move(*out) : fail(ErrorCode::kInternal, "the call never finished");
  }

  boost::asio::io_context io_;
  std::shared_ptr<Client> client_;
};

// The same checks for either connection: its five tools, and each tool's result kept whole.
template <class Connection>
void expectToolsWork(Connection& connection) {
  auto tools = connection.listTools();
  ASSERT_TRUE(tools) << tools.error().describe();
  std::vector<std::string> names;
  for (const auto& tool : *tools) names.push_back(tool.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"add", "echo", "grow", "image", "slow"}));

  auto echo = connection.callTool("echo", {{"message", "hello stateless"}});
  ASSERT_TRUE(echo) << echo.error().describe();
  EXPECT_FALSE(echo->isError());
  EXPECT_EQ(echo->text(), "hello stateless");

  auto add = connection.callTool("add", {{"a", 2}, {"b", 40}});
  ASSERT_TRUE(add) << add.error().describe();
  EXPECT_EQ(add->text(), "42");
  ASSERT_TRUE(add->structuredContent().has_value());
  EXPECT_EQ(*add->structuredContent(), Json({{"sum", 42}}));

  auto image = connection.callTool("image", Json::object());
  ASSERT_TRUE(image) << image.error().describe();
  const auto blocks = image->blocksOfType("image");
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].value("mimeType", ""), "image/png");
  EXPECT_EQ(blocks[0].value("data", ""), kPixelPng);

  // A wrong argument type is the tool's error, not the connection's.
  auto wrong = connection.callTool("add", {{"a", "two"}, {"b", 40}});
  ASSERT_TRUE(wrong) << wrong.error().describe();
  EXPECT_TRUE(wrong->isError());

  std::atomic<int> updates = 0;
  std::atomic<double> last = 0;
  auto slow = connection.callTool("slow", {{"steps", 3}, {"delayMs", 20}}, 10s,
                                  [&](const Progress& progress) {
                                    ++updates;
                                    last = progress.progress;
                                  });
  ASSERT_TRUE(slow) << slow.error().describe();
  EXPECT_EQ(slow->text(), "done");
  EXPECT_EQ(updates.load(), 3);
  EXPECT_EQ(last.load(), 3.0);
}

class StatelessServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (nodePath().empty()) GTEST_SKIP() << "node is not installed";
  }
};

TEST_F(StatelessServerTest, OverStdio) {
  BlockingClient client(clientOptions());
  StdioOptions stdio;
  stdio.serverName = "stateless";
  auto info = client.connect(statelessPlan("stdio"), stdio);
  ASSERT_TRUE(info) << info.error().describe() << "\n" << info.error().detail;
  EXPECT_EQ(info->protocolVersion, kNegotiatedVersion);
  EXPECT_EQ(info->name, "kaja-stateless-test");
  EXPECT_TRUE(info->hasTools());
  expectToolsWork(client);
  client.close();
  EXPECT_TRUE(kaja::testing::zombieChildren().empty());
}

TEST_F(StatelessServerTest, OverStreamableHttp) {
  auto server = ServerProcess::start(statelessPlan("http"));
  ASSERT_TRUE(server) << "the server never printed its port";
  RemoteClient client(server->url("/"));
  auto info = client.connect();
  ASSERT_TRUE(info) << info.error().describe() << "\n" << info.error().detail;
  EXPECT_EQ(info->protocolVersion, kNegotiatedVersion);
  EXPECT_EQ(info->name, "kaja-stateless-test");
  EXPECT_TRUE(info->hasTools());
  expectToolsWork(client);
}

// With ClientOptions::discover the client asks server/discover first and speaks
// 2026-07-28 statelessly: every request carries _meta, no initialize is sent.
TEST_F(StatelessServerTest, DiscoversStatelessOverStdio) {
  BlockingClient client(clientOptions(true));
  StdioOptions stdio;
  stdio.serverName = "stateless";
  auto info = client.connect(statelessPlan("stdio"), stdio);
  ASSERT_TRUE(info) << info.error().describe() << "\n" << info.error().detail;
  EXPECT_EQ(info->protocolVersion, kStatelessProtocolVersion);
  EXPECT_TRUE(info->hasTools());
  expectToolsWork(client);
  client.close();
  EXPECT_TRUE(kaja::testing::zombieChildren().empty());
}

TEST_F(StatelessServerTest, DiscoversStatelessOverStreamableHttp) {
  auto server = ServerProcess::start(statelessPlan("http"));
  ASSERT_TRUE(server) << "the server never printed its port";
  RemoteClient client(server->url("/"), true);
  auto info = client.connect();
  ASSERT_TRUE(info) << info.error().describe() << "\n" << info.error().detail;
  EXPECT_EQ(info->protocolVersion, kStatelessProtocolVersion);
  EXPECT_TRUE(info->hasTools());
  expectToolsWork(client);
}

}  // namespace
}  // namespace kaja::core::mcp
