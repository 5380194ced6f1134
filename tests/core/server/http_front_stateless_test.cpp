// The HTTP front's 2026-07-28 checks on real sockets on 127.0.0.1: a request's _meta, its
// standard and Mcp-Param-* headers, its version, and the status an error reply gets.
#include <gtest/gtest.h>

#include "core/server/http_front.h"
#include "tests/core/server/http_front_harness.h"

namespace kaja::core::server {
namespace {

using kaja::testing::bothAccepted;
using kaja::testing::FrontHarness;
using kaja::testing::Headers;
using kaja::testing::with;
using mcp::Json;

const Json kMeta = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                    {"io.modelcontextprotocol/clientCapabilities", Json::object()}};

std::string request(int id, const std::string& method, const Json& params) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump();
}

Headers standard(const std::string& method, const Headers& more = {}) {
  return with(
      with(bothAccepted(), {{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", method}}), more);
}

// Calls the echo tool, whose "region" argument travels in Mcp-Param-Region too.
kaja::testing::HttpReply callEcho(const FrontHarness& h, const Json& arguments,
                                  const Headers& params) {
  return h.post(
      request(9, "tools/call", {{"name", "echo"}, {"arguments", arguments}, {"_meta", kMeta}}),
      standard("tools/call", with({{"Mcp-Name", "echo"}}, params)));
}

Json errorOf(const kaja::testing::HttpReply& reply) {
  const Json body = Json::parse(reply.body, nullptr, false);
  return body.is_object() ? body.value("error", Json()) : Json();
}

TEST(HttpFrontStatelessTest, ARequestWithoutItsMetaGets400AndInvalidParams) {
  FrontHarness h;
  const Json noCapabilities = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}};
  const Json noVersion = {{"io.modelcontextprotocol/clientCapabilities", Json::object()}};
  for (const Json& params : {Json::object(), Json{{"_meta", noCapabilities}},
                             Json{{"_meta", noVersion}}, Json{{"_meta", "2026-07-28"}}}) {
    const auto reply = h.post(request(41, "server/discover", params), standard("server/discover"));
    EXPECT_EQ(reply.status, 400) << params.dump();
    EXPECT_EQ(errorOf(reply)["code"], -32602) << reply.body;
    EXPECT_EQ(Json::parse(reply.body)["id"], 41) << reply.body;
  }
  // No session was made for any of them.
  EXPECT_EQ(h.log->created, 0);
  const auto fine =
      h.post(request(42, "server/discover", {{"_meta", kMeta}}), standard("server/discover"));
  EXPECT_EQ(fine.status, 200);
}

TEST(HttpFrontStatelessTest, VersionErrorsCarryTheRequestIdAndTheStatelessVersions) {
  FrontHarness h;
  Json meta = kMeta;
  meta["io.modelcontextprotocol/protocolVersion"] = "v999.0.0";
  // The header and _meta agree on a version kaja does not speak.
  const auto unknown = h.post(request(301, "server/discover", {{"_meta", meta}}),
                              with(bothAccepted(), {{"MCP-Protocol-Version", "v999.0.0"},
                                                    {"Mcp-Method", "server/discover"}}));
  EXPECT_EQ(unknown.status, 400);
  EXPECT_EQ(errorOf(unknown)["code"], -32022);
  EXPECT_EQ(errorOf(unknown)["data"]["supported"], Json::array({"2026-07-28"}));
  EXPECT_EQ(errorOf(unknown)["data"]["requested"], "v999.0.0");
  EXPECT_EQ(Json::parse(unknown.body)["id"], 301);
  // They disagree: a header mismatch, whatever the versions are.
  const auto mismatch =
      h.post(request(302, "server/discover", {{"_meta", meta}}), standard("server/discover"));
  EXPECT_EQ(mismatch.status, 400);
  EXPECT_EQ(errorOf(mismatch)["code"], -32020);
  EXPECT_EQ(Json::parse(mismatch.body)["id"], 302);
  // A 2025 session's request with an unknown version hears of every version kaja speaks.
  const std::string session = h.initialize();
  const auto old = h.post(
      request(5, "tools/list", Json::object()),
      with(bothAccepted(), {{"Mcp-Session-Id", session}, {"MCP-Protocol-Version", "1999-01-01"}}));
  EXPECT_EQ(old.status, 400);
  EXPECT_EQ(errorOf(old)["data"]["supported"].size(), 5U);
  EXPECT_EQ(Json::parse(old.body)["id"], 5);
}

TEST(HttpFrontStatelessTest, ParamHeadersMustAgreeWithTheArguments) {
  FrontHarness h;
  const Json hello = {{"region", "Hello"}};
  EXPECT_EQ(callEcho(h, hello, {{"Mcp-Param-Region", "Hello"}}).status, 200);
  EXPECT_EQ(callEcho(h, hello, {{"mcp-param-region", "=?base64?SGVsbG8=?="}}).status, 200);
  EXPECT_EQ(callEcho(h, Json::object(), {}).status, 200);
  const int made = h.log->created;
  const std::vector<Headers> wrong = {
      {},                                                              // missing
      {{"Mcp-Param-Region", "Goodbye"}},                               // disagrees
      {{"Mcp-Param-Region", "=?base64?SGVsbG8?="}},                    // not base64
      {{"Mcp-Param-Region", "=?base64?SGVs!!!bG8=?="}},                // not the alphabet
      {{"Mcp-Param-Region", "Hello"}, {"Mcp-Param-Region", "Hello"}},  // twice
      {{"Mcp-Param-Region", std::string(12000, 'H')}},                 // huge
  };
  for (const auto& params : wrong) {
    const auto reply = callEcho(h, hello, params);
    EXPECT_EQ(reply.status, 400) << (params.empty() ? "missing" : params[0].second.substr(0, 40));
    EXPECT_EQ(errorOf(reply)["code"], -32020) << reply.body;
    EXPECT_EQ(Json::parse(reply.body)["id"], 9);
    EXPECT_LT(reply.body.size(), 600U);
  }
  // A header for an argument the body does not carry is refused too.
  EXPECT_EQ(callEcho(h, Json::object(), {{"Mcp-Param-Region", "Hello"}}).status, 400);
  // A header past the front's header limit never reaches the check.
  EXPECT_EQ(callEcho(h, hello, {{"Mcp-Param-Region", std::string(20000, 'H')}}).status, 431);
  // Each refused request's session ended with it, the tool never ran.
  for (int i = 0; i < 100 && h.log->ended < h.log->created; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(h.log->ended, h.log->created);
  EXPECT_EQ(h.log->created, made + static_cast<int>(wrong.size()) + 1);
}

TEST(HttpFrontStatelessTest, AnErrorAloneTakesTheStatusItsCodeCallsFor) {
  FrontHarness h;
  for (const auto& [code, status] : std::vector<std::pair<int, int>>{
           {-32601, 404}, {-32021, 400}, {-32022, 400}, {-32020, 400}, {-32603, 200}}) {
    for (const std::string accept : {"application/json, text/event-stream", "application/json"}) {
      const auto reply = h.post(request(7, "test/fail", {{"code", code}, {"_meta", kMeta}}),
                                with(standard("test/fail"), {{"Accept", accept}}));
      EXPECT_EQ(reply.status, status) << code << " " << accept;
      const Json error =
          status == 200 && !reply.events.empty() ? reply.events[0]["error"] : errorOf(reply);
      EXPECT_EQ(error["code"], code) << reply.body;
    }
  }
  // Once the reply has begun as a stream its status is sent: a later error stays in it.
  const auto streamed =
      h.post(request(8, "test/fail", {{"code", -32601}, {"progress", true}, {"_meta", kMeta}}),
             standard("test/fail"));
  EXPECT_EQ(streamed.status, 200);
  EXPECT_EQ(streamed.header("content-type"), "text/event-stream");
  ASSERT_EQ(streamed.events.size(), 2U);
  EXPECT_EQ(streamed.events[1]["error"]["code"], -32601);
  // A 2025 session's errors keep status 200.
  const std::string session = h.initialize();
  const auto old = h.post(request(9, "test/fail", {{"code", -32601}}),
                          with(bothAccepted(), {{"Mcp-Session-Id", session}}));
  EXPECT_EQ(old.status, 200);
}

}  // namespace
}  // namespace kaja::core::server
