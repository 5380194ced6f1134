// What kaja's client does for a caller that speaks 2025 to a server that speaks 2026-07-28
// (tests/servers/conformance_server.mjs over stdio, on the TypeScript SDK 2.x): that version
// has no resources/subscribe, resources/unsubscribe or logging/setLevel. A subscription
// becomes the filter of the one subscriptions/listen stream, and a log level goes in each
// later request's _meta. The same calls to the same server spoken to at 2025-11-25 are the
// control: both must behave alike. At 2026-07-28 over HTTP the listen stream is a response of
// its own, which kaja closes to change the filter.
#include <gtest/gtest.h>

#include <optional>

#include "core/mcp/client.h"
#include "core/mcp/remote_transport.h"
#include "core/mcp/stdio_transport.h"
#include "tests/core/mcp/client_harness.h"
#include "tests/core/mcp/http_test_servers.h"
#include "tests/core/mcp/test_servers.h"
#include "tests/support/build_paths.h"

namespace kaja::core::mcp {
namespace {

using namespace std::chrono_literals;
using kaja::testing::minimalPlan;
using kaja::testing::nodePath;
using kaja::testing::runUntil;
using kaja::testing::ServerProcess;

const char* const kStatic = "test://static-text";
const char* const kBinary = "test://static-binary";

/// How kaja's client reaches the reference server.
enum class Way { k2025Stdio, k2026Stdio, k2026Http };

class ListenTranslationTest : public ::testing::TestWithParam<Way> {
 protected:
  [[nodiscard]] bool modern() const { return GetParam() != Way::k2025Stdio; }

  void SetUp() override {
    if (nodePath().empty()) GTEST_SKIP() << "node is not installed";
    const std::string script =
        std::string(kaja::test::sourceDir()) + "/tests/servers/conformance_server.mjs";
    std::shared_ptr<Transport> transport;
    if (GetParam() == Way::k2026Http) {
      server_ = ServerProcess::start(minimalPlan({nodePath(), script, "http"}));
      ASSERT_TRUE(server_) << "the reference server did not listen";
      HttpOptions http;
      http.serverName = "reference";
      http.addressPolicy.allowPrivate = true;  // the server is on 127.0.0.1
      http.timeout = 10s;
      http.closeTimeout = 1s;
      auto remote = makeRemoteTransport(io_, RemotePlan{server_->url("/mcp"), false, {}}, http);
      ASSERT_TRUE(remote) << remote.error().describe();
      transport = *remote;
    } else {
      auto spawned =
          kaja::testing::spawnStdioServer(io_, {nodePath(), script, "stdio"}, "reference");
      ASSERT_TRUE(spawned) << spawned.error().describe();
      transport = *spawned;
    }
    ClientOptions options;
    options.discover = modern();
    options.connectTimeout = 15s;
    options.requestTimeout = 10s;
    client_ = Client::create(io_, transport, options);
    client_->setNotificationHandler([this](const Notification& notification) {
      if (notification.method == "notifications/resources/updated") {
        updates_.push_back(notification.params);
      }
      if (notification.method == "notifications/message") logs_.push_back(notification.params);
    });
    client_->setToolsChangedHandler([](const std::vector<Tool>&) {});
    client_->setWarningHandler([this](const std::string& text) { warnings_.push_back(text); });
    auto info = kaja::testing::connectNow(io_, *client_);
    ASSERT_TRUE(info) << info.error().describe();
    ASSERT_EQ(client_->isStateless(), modern());
  }

  void TearDown() override { kaja::testing::closeNow(io_, client_); }

  Result<Json> request(const std::string& method, Json params) {
    std::optional<Result<Json>> outcome;
    client_->request(method, std::move(params), 0ms,
                     [&](Result<Json> result) { outcome = std::move(result); });
    EXPECT_TRUE(runUntil(io_, [&] { return outcome.has_value(); })) << method << " never ended";
    if (!outcome) return std::unexpected(Error{ErrorCode::kTimeout, "no answer", "", {}});
    return *outcome;
  }

  Result<ToolResult> call(const std::string& name, Json arguments) {
    std::optional<Result<ToolResult>> outcome;
    client_->callTool(name, std::move(arguments), CallOptions{},
                      [&](Result<ToolResult> result) { outcome = std::move(result); });
    EXPECT_TRUE(runUntil(io_, [&] { return outcome.has_value(); })) << name << " never ended";
    if (!outcome) return std::unexpected(Error{ErrorCode::kTimeout, "no answer", "", {}});
    return *outcome;
  }

  void touch(const std::string& uri) {
    auto touched = call("test_touch_resource", {{"uri", uri}});
    ASSERT_TRUE(touched) << touched.error().describe();
  }

  /// Waits until `count` updates were heard, and returns their URIs in order. Updates come in
  /// order on one stream (stdio, or the listen response over HTTP), so one that should not
  /// have been sent would be among them.
  std::vector<std::string> updatesOnce(std::size_t count) {
    EXPECT_TRUE(runUntil(io_, [&] { return updates_.size() >= count; }))
        << "only " << updates_.size() << " of " << count << " updates came";
    return updatedUris();
  }

  /// The URIs of the updates heard so far, in order.
  [[nodiscard]] std::vector<std::string> updatedUris() const {
    std::vector<std::string> uris;
    for (const auto& params : updates_) uris.push_back(params.value("uri", ""));
    return uris;
  }

  std::unique_ptr<ServerProcess> server_;
  boost::asio::io_context io_;
  std::shared_ptr<Client> client_;
  std::vector<Json> updates_;
  std::vector<Json> logs_;
  std::vector<std::string> warnings_;
};

TEST_P(ListenTranslationTest, SubscribedResourcesAloneAreAnnounced) {
  auto listed = request("tools/list", Json::object());
  ASSERT_TRUE(listed) << listed.error().describe();
  // Nothing subscribed: a change is not announced.
  touch(kStatic);
  auto subscribed = request("resources/subscribe", {{"uri", kStatic}});
  ASSERT_TRUE(subscribed) << subscribed.error().describe();
  EXPECT_EQ(*subscribed, Json::object());
  touch(kBinary);
  touch(kStatic);
  EXPECT_EQ(updatesOnce(1), std::vector<std::string>{kStatic});
  // kaja's own listen stream id is not passed on.
  EXPECT_FALSE(updates_.front().contains("_meta")) << updates_.front().dump();

  // A second subscription keeps the first.
  ASSERT_TRUE(request("resources/subscribe", {{"uri", kBinary}}));
  touch(kStatic);
  touch(kBinary);
  EXPECT_EQ(updatesOnce(3), (std::vector<std::string>{kStatic, kStatic, kBinary}));

  // Unsubscribed, it is heard of no more; the other still is.
  auto unsubscribed = request("resources/unsubscribe", {{"uri", kStatic}});
  ASSERT_TRUE(unsubscribed) << unsubscribed.error().describe();
  touch(kStatic);
  touch(kBinary);
  EXPECT_EQ(updatesOnce(4), (std::vector<std::string>{kStatic, kStatic, kBinary, kBinary}));

  // Subscribing twice and unsubscribing what was never subscribed are harmless, as in 2025.
  EXPECT_TRUE(request("resources/subscribe", {{"uri", kBinary}}));
  EXPECT_TRUE(request("resources/unsubscribe", {{"uri", "test://never"}}));
  ASSERT_TRUE(request("resources/unsubscribe", {{"uri", kBinary}}));
  touch(kBinary);
  // Nothing is subscribed, so no stream is open to bring an update.
  runUntil(
      io_, [] { return false; }, 300ms);
  EXPECT_EQ(updates_.size(), 4U);
  // The tools still work after the listen stream was replaced three times.
  auto echoed = call("test_simple_text", Json::object());
  ASSERT_TRUE(echoed) << echoed.error().describe();
  for (const auto& warning : warnings_) ADD_FAILURE() << "warning: " << warning;
}

TEST_P(ListenTranslationTest, LogMessagesFollowTheLevelSet) {
  if (modern()) {
    // 2026-07-28: a request that names no level gets no log messages.
    auto quiet = call("test_tool_with_logging", Json::object());
    ASSERT_TRUE(quiet) << quiet.error().describe();
    EXPECT_TRUE(logs_.empty()) << logs_.size();
  }
  auto set = request("logging/setLevel", {{"level", "info"}});
  ASSERT_TRUE(set) << set.error().describe();
  EXPECT_EQ(*set, Json::object());
  logs_.clear();
  auto logged = call("test_tool_with_logging", Json::object());
  ASSERT_TRUE(logged) << logged.error().describe();
  ASSERT_EQ(logs_.size(), 3U);
  EXPECT_EQ(logs_[0].value("level", ""), "info");
  EXPECT_EQ(logs_[2].value("data", Json()).dump(), "\"Tool execution completed\"");

  // Above info, the tool's info messages are not sent. (The reference server's 2025 era takes
  // any level and filters nothing, so this is kaja's part only.)
  if (!modern()) return;
  ASSERT_TRUE(request("logging/setLevel", {{"level", "error"}}));
  logs_.clear();
  ASSERT_TRUE(call("test_tool_with_logging", Json::object()));
  EXPECT_TRUE(logs_.empty()) << logs_.size();
}

TEST_P(ListenTranslationTest, MalformedRequestsAreRefusedAsAServerWould) {
  if (!modern()) GTEST_SKIP() << "at 2025-11-25 the server itself judges these requests";
  const std::vector<Json> malformed = {Json::object(), Json{{"uri", 7}}, Json::array(),
                                       Json{{"uri", ""}}, Json{{"uri", std::string(9000, 'a')}}};
  for (const Json& params : malformed) {
    auto refused = request("resources/subscribe", params);
    ASSERT_FALSE(refused) << params.dump().substr(0, 80);
    EXPECT_NE(refused.error().rpcCode, 0) << refused.error().describe();
  }
  for (const Json& params : {Json::object(), Json{{"level", "loud"}}, Json{{"level", 3}}}) {
    auto refused = request("logging/setLevel", params);
    ASSERT_FALSE(refused) << params.dump();
    EXPECT_EQ(refused.error().rpcCode, -32602) << refused.error().describe();
  }
  // Nothing above broke the connection.
  auto echoed = call("test_simple_text", Json::object());
  ASSERT_TRUE(echoed) << echoed.error().describe();
}

INSTANTIATE_TEST_SUITE_P(BothEras, ListenTranslationTest,
                         ::testing::Values(Way::k2025Stdio, Way::k2026Stdio, Way::k2026Http),
                         [](const auto& info) {
                           switch (info.param) {
                             case Way::k2025Stdio:
                               return "At2025";
                             case Way::k2026Stdio:
                               return "At2026";
                             case Way::k2026Http:
                               return "At2026OverHttp";
                           }
                           return "";
                         });

}  // namespace
}  // namespace kaja::core::mcp
