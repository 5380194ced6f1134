// The HTTP front with a router: many endpoints on one listener, each with its own sessions.
#include <gtest/gtest.h>

#include "core/server/http_front.h"
#include "tests/core/server/http_front_harness.h"

namespace kaja::core::server {
namespace {

using kaja::testing::bothAccepted;
using kaja::testing::EchoLog;
using kaja::testing::FrontHarness;
using kaja::testing::with;

constexpr const char* kInit =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":)"
    R"("2025-11-25","capabilities":{},"clientInfo":{"name":"t"}}})";
constexpr const char* kList = R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})";

// Routes /a/mcp and /b/mcp to two logs; /a needs "Authorization: Bearer a-token";
// /answer is answered by the router itself.
HttpFrontOptions routed(std::shared_ptr<EchoLog> a, std::shared_ptr<EchoLog> b,
                        std::shared_ptr<int> answered) {
  HttpFrontOptions options;
  options.router = [a, b, answered](const RouteRequest& request) {
    RouteDecision decision;
    if (request.path == "/answer") {
      ++*answered;
      decision.status = 200;
      decision.body = R"({"ended":true})";
    } else if (request.path == "/a/mcp") {
      if (request.header("Authorization") != "Bearer a-token") {
        decision.status = 401;
        decision.body = R"({"error":"token"})";
        decision.headers = {{"WWW-Authenticate", "Bearer"}};
        return decision;
      }
      decision.endpoint = "a";
      decision.owner = "owner-a";
      decision.sessions = kaja::testing::echoFactory(a);
    } else if (request.path == "/b/mcp") {
      decision.endpoint = "b";
      decision.sessions = kaja::testing::echoFactory(b);
    } else {
      decision.status = 404;
      decision.body = "{}";
    }
    return decision;
  };
  return options;
}

TEST(HttpRouterTest, EachEndpointMakesItsOwnSessionsAndASessionAnswersOnlyAtItsOwn) {
  auto a = std::make_shared<EchoLog>();
  auto b = std::make_shared<EchoLog>();
  auto answered = std::make_shared<int>(0);
  FrontHarness h(routed(a, b, answered));
  const auto auth = with(bothAccepted(), {{"Authorization", "Bearer a-token"}});

  const auto initA = h.send("POST", kInit, auth, "/a/mcp");
  ASSERT_EQ(initA.status, 200);
  const std::string idA = initA.header("mcp-session-id");
  const auto initB = h.send("POST", kInit, bothAccepted(), "/b/mcp");
  ASSERT_EQ(initB.status, 200);
  EXPECT_EQ(a->created, 1);
  EXPECT_EQ(b->created, 1);
  EXPECT_EQ(h.log->created, 0);  // the front's own factory is not used

  // A's session id at B's endpoint is unknown there.
  const auto crossed =
      h.send("POST", kList, with(bothAccepted(), {{"Mcp-Session-Id", idA}}), "/b/mcp");
  EXPECT_EQ(crossed.status, 404);
  const auto crossedDelete =
      h.send("DELETE", "", with(bothAccepted(), {{"Mcp-Session-Id", idA}}), "/b/mcp");
  EXPECT_EQ(crossedDelete.status, 404);
  EXPECT_EQ(a->ended, 0);
  const auto listed = h.send("POST", kList, with(auth, {{"Mcp-Session-Id", idA}}), "/a/mcp");
  EXPECT_EQ(listed.status, 200);
}

TEST(HttpRouterTest, TheRoutersRefusalsAndAnswersAreSentAsTheyAre) {
  auto a = std::make_shared<EchoLog>();
  auto b = std::make_shared<EchoLog>();
  auto answered = std::make_shared<int>(0);
  FrontHarness h(routed(a, b, answered));
  const auto refused = h.send("POST", kInit, bothAccepted(), "/a/mcp");
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(refused.header("www-authenticate"), "Bearer");
  EXPECT_EQ(a->created, 0);
  const auto wrong =
      h.send("POST", kInit, with(bothAccepted(), {{"Authorization", "Bearer b-token"}}), "/a/mcp");
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(h.send("GET", "", {}, "/nowhere").status, 404);
  const auto answer = h.send("POST", "", {}, "/answer");
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, R"({"ended":true})");
  EXPECT_EQ(*answered, 1);  // given once, when the headers came
  EXPECT_EQ(a->created + b->created, 0);
}

TEST(HttpRouterTest, OneOwnerCannotTakeEverySession) {
  auto a = std::make_shared<EchoLog>();
  auto b = std::make_shared<EchoLog>();
  auto answered = std::make_shared<int>(0);
  HttpFrontOptions options = routed(a, b, answered);
  options.maxSessionsPerOwner = 2;
  FrontHarness h(options);
  const auto auth = with(bothAccepted(), {{"Authorization", "Bearer a-token"}});
  const std::string first = h.send("POST", kInit, auth, "/a/mcp").header("mcp-session-id");
  EXPECT_EQ(h.send("POST", kInit, auth, "/a/mcp").status, 200);
  const auto full = h.send("POST", kInit, auth, "/a/mcp");
  EXPECT_EQ(full.status, 429);
  EXPECT_EQ(full.header("retry-after"), "30");
  EXPECT_EQ(a->created, 2);
  // Another owner (none, here) is not held back.
  EXPECT_EQ(h.send("POST", kInit, bothAccepted(), "/b/mcp").status, 200);
  // Ending one makes room again.
  EXPECT_EQ(h.send("DELETE", "", with(auth, {{"Mcp-Session-Id", first}}), "/a/mcp").status, 204);
  EXPECT_EQ(h.send("POST", kInit, auth, "/a/mcp").status, 200);
}

}  // namespace
}  // namespace kaja::core::server
