// kaja's client against a 2026-07-28 server whose subscriptions/listen streams misbehave
// (tests/servers/listen_fault_server.mjs over stdio): a filter refused or never acknowledged
// fails only the subscribe that asked for it and leaves the server with the filter it took
// before; subscribes made together reopen the stream once; and a stream kaja closed is not
// heard from again, even when the server ignores the cancel.
#include <gtest/gtest.h>

#include <optional>

#include "core/mcp/client.h"
#include "core/mcp/stdio_transport.h"
#include "tests/core/mcp/client_harness.h"
#include "tests/core/mcp/test_servers.h"
#include "tests/support/build_paths.h"

namespace kaja::core::mcp {
namespace {

using namespace std::chrono_literals;
using kaja::testing::minimalPlan;
using kaja::testing::nodePath;
using kaja::testing::runUntil;

class ListenFaultsTest : public ::testing::Test {
 protected:
  void start(const std::string& mode = "") {
    if (nodePath().empty()) GTEST_SKIP() << "node is not installed";
    std::vector<std::string> argv = {nodePath(), std::string(kaja::test::sourceDir()) +
                                                     "/tests/servers/listen_fault_server.mjs"};
    if (!mode.empty()) argv.push_back(mode);
    auto spawned = kaja::testing::spawnStdioServer(io_, argv, "listen-fault");
    ASSERT_TRUE(spawned) << spawned.error().describe();
    ClientOptions options;
    options.discover = true;
    options.connectTimeout = 15s;
    options.requestTimeout = 1s;
    client_ = Client::create(io_, *spawned, options);
    client_->setNotificationHandler([this](const Notification& notification) {
      if (notification.method == "notifications/resources/updated") {
        updates_.push_back(notification.params);
      }
    });
    auto info = kaja::testing::connectNow(io_, *client_);
    ASSERT_TRUE(info) << info.error().describe();
    ASSERT_TRUE(client_->isStateless());
  }

  void TearDown() override { kaja::testing::closeNow(io_, client_); }

  /// Sends resources/subscribe (or unsubscribe) for each URI at once, and returns the outcomes
  /// in the same order once all have ended.
  std::vector<Result<Json>> change(const std::string& method,
                                   const std::vector<std::string>& uris) {
    std::vector<std::optional<Result<Json>>> outcomes(uris.size());
    for (std::size_t i = 0; i < uris.size(); ++i) {
      client_->request(method, Json{{"uri", uris[i]}}, 0ms,
                       [&outcomes, i](Result<Json> result) { outcomes[i] = std::move(result); });
    }
    EXPECT_TRUE(runUntil(io_,
                         [&] {
                           return std::ranges::all_of(
                               outcomes, [](const auto& outcome) { return outcome.has_value(); });
                         }))
        << method << " never ended";
    std::vector<Result<Json>> ended;
    for (auto& outcome : outcomes) {
      ended.push_back(outcome
                          ? std::move(*outcome)
                          : Result<Json>(std::unexpected(Error{ErrorCode::kTimeout, "", "", {}})));
    }
    return ended;
  }

  Result<Json> subscribe(const std::string& uri) {
    return change("resources/subscribe", {uri}).front();
  }

  /// Calls one of the server's tools and returns the text it answered.
  std::string call(const std::string& name, Json arguments = Json::object()) {
    std::optional<Result<ToolResult>> outcome;
    client_->callTool(name, std::move(arguments), CallOptions{},
                      [&](Result<ToolResult> result) { outcome = std::move(result); });
    EXPECT_TRUE(runUntil(io_, [&] { return outcome.has_value(); })) << name << " never ended";
    if (!outcome || !*outcome || (*outcome)->content().empty()) return "";
    return (*outcome)->content().front().value("text", "");
  }

  /// The resourceSubscriptions of every listen request the server got, in order.
  Json filters() { return Json::parse(call("filters"), nullptr, false); }

  /// Has the server announce a change of `uri` and returns the URIs of the updates heard so
  /// far. The updates come before the tool's answer on the one stdio stream, so any update
  /// of a stream that should be ignored is among them.
  std::vector<std::string> touch(const std::string& uri) {
    call("touch", {{"uri", uri}});
    std::vector<std::string> uris;
    for (const auto& params : updates_) uris.push_back(params.value("uri", ""));
    return uris;
  }

  boost::asio::io_context io_;
  std::shared_ptr<Client> client_;
  std::vector<Json> updates_;
};

TEST_F(ListenFaultsTest, ARefusedFilterFailsItsSubscribeAndTheOneTakenBeforeIsAskedForAgain) {
  start();
  if (IsSkipped()) return;
  ASSERT_TRUE(subscribe("test://a"));
  auto refused = subscribe("test://refused");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("refuses"), std::string::npos)
      << refused.error().describe();
  // The server ended the stream with its refusal; kaja opens the one it took before.
  EXPECT_EQ(filters(), Json::parse(R"([["test://a"],["test://a","test://refused"],["test://a"]])"));
  EXPECT_EQ(touch("test://a"), std::vector<std::string>{"test://a"});
  // The refused URI is not followed: asking again asks the server again.
  EXPECT_FALSE(subscribe("test://refused"));
  ASSERT_TRUE(subscribe("test://b"));
  EXPECT_EQ(filters().back(), Json::parse(R"(["test://a","test://b"])"));
}

TEST_F(ListenFaultsTest, AFilterNeverAcknowledgedTimesOutAndIsTakenBack) {
  start();
  if (IsSkipped()) return;
  ASSERT_TRUE(subscribe("test://a"));
  auto silent = subscribe("test://silent");
  ASSERT_FALSE(silent);
  EXPECT_EQ(silent.error().code, ErrorCode::kTimeout) << silent.error().describe();
  // The stream that asks for the silent URI is closed, and one without it opened.
  EXPECT_EQ(filters(), Json::parse(R"([["test://a"],["test://a","test://silent"],["test://a"]])"));
  EXPECT_EQ(touch("test://a"), std::vector<std::string>{"test://a"});
  // A second subscribe of the URI is not taken for done: it fails the same way.
  EXPECT_FALSE(subscribe("test://silent"));
}

// Found by a review: each reopen of the stream started the acknowledgement timer again, so
// subscribes arriving faster than the request timeout kept one the server never acknowledged
// waiting until they stopped. Each subscribe now has its own deadline.
TEST_F(ListenFaultsTest, ASubscribeTimesOutOnItsOwnDeadlineWhileOthersKeepComing) {
  start();
  if (IsSkipped()) return;
  std::optional<Result<Json>> silent;
  client_->request("resources/subscribe", Json{{"uri", "test://silent"}}, 0ms,
                   [&](Result<Json> result) { silent = std::move(result); });
  // One more subscribe every 250 ms for 6 s, each reopening the stream; the request timeout
  // is 1 s.
  int sent = 0;
  int sentWhenSilentEnded = -1;
  for (; sent < 24; ++sent) {
    client_->request("resources/subscribe", Json{{"uri", "test://k" + std::to_string(sent)}}, 0ms,
                     [](const Result<Json>&) {});
    runUntil(
        io_, [] { return false; }, 250ms);
    if (silent.has_value() && sentWhenSilentEnded < 0) sentWhenSilentEnded = sent;
  }
  ASSERT_TRUE(silent.has_value()) << "the silent subscribe never ended";
  EXPECT_FALSE(*silent);
  EXPECT_EQ(silent->error().code, ErrorCode::kTimeout);
  EXPECT_GE(sentWhenSilentEnded, 0);
  EXPECT_LT(sentWhenSilentEnded, 20) << "it waited for the other subscribes to stop";
  // Once it is given up, the others are acknowledged without it.
  EXPECT_TRUE(subscribe("test://last"));
  EXPECT_EQ(filters().back().dump().find("silent"), std::string::npos);
}

// Found by a review: a subscribe undone by an unsubscribe before the stream reopened was
// left waiting; at its deadline the acknowledgement timer then fired again and again at
// once, a busy loop on kaja's thread. Both now settle with the acknowledgement.
TEST_F(ListenFaultsTest, ASubscribeUndoneBeforeTheReopenSettlesAndNothingSpins) {
  start();
  if (IsSkipped()) return;
  ASSERT_TRUE(subscribe("test://a"));
  std::optional<Result<Json>> subscribed;
  std::optional<Result<Json>> unsubscribed;
  client_->request("resources/subscribe", Json{{"uri", "test://x"}}, 0ms,
                   [&](Result<Json> result) { subscribed = std::move(result); });
  client_->request("resources/unsubscribe", Json{{"uri", "test://x"}}, 0ms,
                   [&](Result<Json> result) { unsubscribed = std::move(result); });
  ASSERT_TRUE(runUntil(io_, [&] { return subscribed.has_value() && unsubscribed.has_value(); }));
  EXPECT_TRUE(*subscribed) << subscribed->error().describe();
  EXPECT_TRUE(*unsubscribed) << unsubscribed->error().describe();
  // Past the request timeout (1 s), the thread is idle: run the context for 1.5 s and count
  // the handlers it ran.
  std::size_t handlers = 0;
  const auto until = std::chrono::steady_clock::now() + 1500ms;
  while (std::chrono::steady_clock::now() < until) {
    handlers += io_.run_for(50ms);
  }
  EXPECT_LT(handlers, 1000U) << "the io thread kept running handlers with nothing to do";
  EXPECT_EQ(filters().back(), Json::parse(R"(["test://a"])"));
}

// Found by a review: a failed stream put back the whole filter the server last took, so an
// unsubscribe sent with a refused subscribe was undone, and the server went on sending the
// updates of a resource nobody followed.
TEST_F(ListenFaultsTest, ARefusedAdditionUndoesNoRemovalSentWithIt) {
  start();
  if (IsSkipped()) return;
  ASSERT_TRUE(subscribe("test://a"));
  std::optional<Result<Json>> removed;
  std::optional<Result<Json>> refused;
  client_->request("resources/unsubscribe", Json{{"uri", "test://a"}}, 0ms,
                   [&](Result<Json> result) { removed = std::move(result); });
  client_->request("resources/subscribe", Json{{"uri", "test://refused"}}, 0ms,
                   [&](Result<Json> result) { refused = std::move(result); });
  ASSERT_TRUE(runUntil(io_, [&] { return removed.has_value() && refused.has_value(); }));
  EXPECT_TRUE(*removed) << removed->error().describe();
  EXPECT_FALSE(*refused);
  // With nothing left to follow no stream is opened again.
  EXPECT_EQ(filters(), Json::parse(R"([["test://a"],["test://refused"]])"));
  EXPECT_TRUE(touch("test://a").empty());
}

TEST_F(ListenFaultsTest, SubscribesSentTogetherOpenTheStreamOnce) {
  start();
  if (IsSkipped()) return;
  const std::vector<std::string> uris = {"test://1", "test://2", "test://3", "test://4",
                                         "test://5"};
  for (const auto& outcome : change("resources/subscribe", uris)) {
    EXPECT_TRUE(outcome) << outcome.error().describe();
  }
  EXPECT_EQ(filters(),
            Json::parse(R"([["test://1","test://2","test://3","test://4","test://5"]])"));
  for (const auto& outcome : change("resources/unsubscribe", {"test://2", "test://4"})) {
    EXPECT_TRUE(outcome) << outcome.error().describe();
  }
  const Json after = filters();
  ASSERT_EQ(after.size(), 2U) << after.dump();
  EXPECT_EQ(after.back(), Json::parse(R"(["test://1","test://3","test://5"])"));
}

TEST_F(ListenFaultsTest, SubscribesOfOneUriWhileItIsOnItsWayShareItsOutcome) {
  start();
  if (IsSkipped()) return;
  for (const auto& outcome : change("resources/subscribe", {"test://silent", "test://silent"})) {
    ASSERT_FALSE(outcome);
    EXPECT_EQ(outcome.error().code, ErrorCode::kTimeout) << outcome.error().describe();
  }
}

TEST_F(ListenFaultsTest, AStreamKajaClosedIsNotHeardFromEvenWhenTheServerIgnoresTheCancel) {
  start("deaf");
  if (IsSkipped()) return;
  ASSERT_TRUE(subscribe("test://a"));
  ASSERT_TRUE(subscribe("test://b"));
  // The server still sends on the first stream, which follows test://a too.
  EXPECT_EQ(call("touch", {{"uri", "test://a"}}), "2");
  EXPECT_EQ(touch("test://b"), (std::vector<std::string>{"test://a", "test://b"}));
}

}  // namespace
}  // namespace kaja::core::mcp
