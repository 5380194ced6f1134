// A client of `kaja serve` cancels a call that is held at kaja's server: the
// notifications/cancelled kaja passes on must name the request the server is working on
// (tests/servers/input_rounds_server.mjs logs what it was sent). kaja speaks 2025-11-25 to
// its servers, so today that is the one request of the call; were it to speak 2026-07-28 to
// them, the server would ask for input twice first and the request would be the last retry.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tests/cli/serve_test_support.h"
#include "tests/support/build_paths.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using testing::eventually;

class ServeInputRoundsTest : public ::testing::Test {
 protected:
  ServeInputRoundsTest() {
    log_ = env_.root.path() + "/rounds-events.jsonl";
    // Were the server to ask for input, roots/list is what kaja answers itself.
    env_.root.write("market/abilities/rounds/mcp.toml",
                    "command = \"node\"\nargs = [\"" + std::string(kaja::test::sourceDir()) +
                        "/tests/servers/input_rounds_server.mjs\", \"" + log_ +
                        "\"]\nroots = true\napproval = \"never\"\n[env]\nKAJA_GATEWAY_TEST = \"" +
                        env_.tag + "-rounds;\"\n");
    env_.root.write("market/personas/rounds.toml",
                    "abilities = [{ name = \"rounds\", roots = [\"~/rw\"] }]\n");
  }

  /// Returns the `key` of every `event` line the server logged so far, in order.
  [[nodiscard]] std::vector<json> logged(const std::string& event, const char* key) const {
    std::vector<json> values;
    std::istringstream in(testing::readFile(log_));
    for (std::string line; std::getline(in, line);) {
      const json parsed = json::parse(line, nullptr, false);
      if (parsed.is_object() && parsed.value("event", "") == event) values.push_back(parsed[key]);
    }
    return values;
  }

  testing::ServeFixture env_;
  std::string log_;
};

TEST_F(ServeInputRoundsTest, ACancelledCallCancelsTheRequestTheServerIsWorkingOn) {
  auto kaja = env_.serve({"--persona", "rounds"});
  ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
  kaja->send(json{{"jsonrpc", "2.0"},
                  {"id", "asking"},
                  {"method", "tools/call"},
                  {"params",
                   {{"name", "rounds__ask"},
                    {"arguments", {{"input", "roots"}, {"rounds", 2}, {"finish", false}}}}}});
  ASSERT_TRUE(eventually([&] { return !logged("held", "id").empty(); }, 30)) << env_.serveErrors();
  const auto held = logged("held", "id");
  const auto calls = logged("call", "id");
  ASSERT_EQ(held.size(), 1U);
  EXPECT_EQ(held[0], calls.back());

  kaja->send(json{{"jsonrpc", "2.0"},
                  {"method", "notifications/cancelled"},
                  {"params", {{"requestId", "asking"}, {"reason", "the test gave up"}}}});
  ASSERT_TRUE(eventually([&] { return !logged("cancelled", "requestId").empty(); }, 10))
      << env_.serveErrors();
  // Time for a second, wrong notification to arrive, were one sent.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(logged("cancelled", "requestId"), held);
  EXPECT_EQ(logged("call", "id"), calls);
  // A cancelled request gets no answer, and the session goes on.
  kaja->send(json{{"jsonrpc", "2.0"}, {"id", "after"}, {"method", "ping"}});
  auto pong = kaja->answer("after", 10);
  ASSERT_TRUE(pong) << env_.serveErrors();
  for (const auto& line : kaja->seen) {
    EXPECT_NE(line.value("id", json()), json("asking")) << "a cancelled request was answered";
  }
}

}  // namespace
}  // namespace kaja::cli
