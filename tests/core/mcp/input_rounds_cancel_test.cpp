// Cancelling a 2026-07-28 tools/call that the server answered with input_required: each
// retry is a request with an id of its own, so kaja's notifications/cancelled must name the
// retry the server is working on, never the first round (tests/servers/input_rounds_server.mjs
// logs what it was sent).
#include <gtest/gtest.h>

#include <fstream>
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

class InputRoundsCancelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (nodePath().empty()) GTEST_SKIP() << "node is not installed";
    log_ = dir_.path() + "/events.jsonl";
    auto transport = kaja::testing::spawnStdioServer(
        io_,
        {nodePath(),
         std::string(kaja::test::sourceDir()) + "/tests/servers/input_rounds_server.mjs", log_},
        "rounds");
    ASSERT_TRUE(transport) << transport.error().describe();
    ClientOptions options;
    options.discover = true;
    options.connectTimeout = 15s;
    client_ = Client::create(io_, *transport, options);
    // The person's answer is given at once unless a test holds it.
    client_->setElicitationHandler(
        [this](const Json&, const InputOrigin&, std::function<void(Result<Json>)> respond) {
          ++asked_;
          if (holdAnswers_) {
            held_ = std::move(respond);
            return;
          }
          respond(Json{{"action", "accept"}, {"content", {{"name", "Tester"}}}});
        });
    auto info = kaja::testing::connectNow(io_, *client_);
    ASSERT_TRUE(info) << info.error().describe();
    ASSERT_TRUE(client_->isStateless());
  }

  void TearDown() override { kaja::testing::closeNow(io_, client_); }

  std::int64_t ask(int rounds, bool finish) {
    return client_->callTool(
        "ask", {{"input", "elicitation"}, {"rounds", rounds}, {"finish", finish}}, CallOptions{30s},
        [this](Result<ToolResult> result) { outcome_ = std::move(result); });
  }

  /// Returns the `key` of every `event` line the server logged so far, in order.
  [[nodiscard]] std::vector<Json> logged(const std::string& event, const char* key) const {
    std::vector<Json> values;
    std::ifstream in(log_);
    for (std::string line; std::getline(in, line);) {
      const Json parsed = Json::parse(line, nullptr, false);
      if (parsed.is_object() && parsed.value("event", "") == event) values.push_back(parsed[key]);
    }
    return values;
  }
  [[nodiscard]] std::vector<Json> callIds() const { return logged("call", "id"); }
  [[nodiscard]] std::vector<Json> heldIds() const { return logged("held", "id"); }
  [[nodiscard]] std::vector<Json> cancelledIds() const { return logged("cancelled", "requestId"); }

  /// Runs the loop for `duration`, for what must not happen in it.
  void runFor(std::chrono::milliseconds duration) {
    runUntil(
        io_, [] { return false; }, duration);
  }

  kaja::testing::ScopedTempDir dir_;
  std::string log_;
  boost::asio::io_context io_;
  std::shared_ptr<Client> client_;
  int asked_ = 0;
  bool holdAnswers_ = false;
  std::function<void(Result<Json>)> held_;
  std::optional<Result<ToolResult>> outcome_;
};

TEST_F(InputRoundsCancelTest, CancellingAfterInputRoundsNamesTheRetryInFlight) {
  const std::int64_t call = ask(2, false);
  // The first request and two retries reach the server; it holds the last one.
  ASSERT_TRUE(runUntil(io_, [&] { return !heldIds().empty(); })) << callIds().size();
  const auto ids = callIds();
  ASSERT_EQ(ids.size(), 3U);
  EXPECT_EQ(ids[0], Json(call));
  EXPECT_NE(ids[2], ids[0]);
  EXPECT_EQ(heldIds(), std::vector<Json>{ids[2]});
  EXPECT_EQ(asked_, 2);

  EXPECT_TRUE(client_->cancel(call, "the test gave up"));
  ASSERT_TRUE(runUntil(io_, [&] { return outcome_.has_value() && !cancelledIds().empty(); }));
  ASSERT_FALSE(*outcome_);
  EXPECT_EQ(outcome_->error().code, ErrorCode::kRefused) << outcome_->error().describe();
  runFor(300ms);
  EXPECT_EQ(cancelledIds(), std::vector<Json>{ids[2]});
  // Cancelled once: a second cancel finds nothing pending and sends nothing.
  EXPECT_FALSE(client_->cancel(call));
  runFor(300ms);
  EXPECT_EQ(cancelledIds().size(), 1U);
}

TEST_F(InputRoundsCancelTest, CancellingWhileTheInputIsAskedSendsNoRetryAndNamesNoRequest) {
  holdAnswers_ = true;
  const std::int64_t call = ask(1, true);
  ASSERT_TRUE(runUntil(io_, [&] { return asked_ == 1; }));
  EXPECT_TRUE(client_->cancel(call, "the test gave up"));
  ASSERT_TRUE(runUntil(
      io_, [&] { return outcome_.has_value(); }, 2s));
  ASSERT_FALSE(*outcome_);
  EXPECT_EQ(outcome_->error().code, ErrorCode::kRefused) << outcome_->error().describe();
  // The answer that comes after the cancel is dropped: the server sees no retry, and the first
  // request, which it already answered, is not cancelled.
  ASSERT_TRUE(held_);
  held_(Json{{"action", "accept"}, {"content", {{"name", "Tester"}}}});
  runFor(500ms);
  EXPECT_EQ(callIds().size(), 1U);
  EXPECT_TRUE(cancelledIds().empty()) << Json(cancelledIds()).dump();
  EXPECT_FALSE(client_->cancel(call));
}

TEST_F(InputRoundsCancelTest, CancellingAFinishedCallSendsNothing) {
  const std::int64_t call = ask(1, true);
  ASSERT_TRUE(runUntil(io_, [&] { return outcome_.has_value(); }));
  ASSERT_TRUE(*outcome_) << outcome_->error().describe();
  EXPECT_EQ((*outcome_)->text(), "done");
  EXPECT_EQ(callIds().size(), 2U);
  EXPECT_FALSE(client_->cancel(call));
  runFor(300ms);
  EXPECT_TRUE(cancelledIds().empty()) << Json(cancelledIds()).dump();
}

}  // namespace
}  // namespace kaja::core::mcp
