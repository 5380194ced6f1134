// The HTTP front's header checks, one value at a time.
#include "core/server/http_checks.h"

#include <gtest/gtest.h>

namespace kaja::core::server::http_checks {
namespace {

using mcp::Json;

TEST(HttpChecksTest, AcceptHonoursWildcardsAndZeroQuality) {
  EXPECT_TRUE(accepts("application/json, text/event-stream", "text/event-stream"));
  EXPECT_TRUE(accepts("", "text/event-stream"));
  EXPECT_TRUE(accepts("*/*", "application/json"));
  EXPECT_TRUE(accepts("text/*;q=0.5", "text/event-stream"));
  EXPECT_TRUE(accepts("Application/JSON", "application/json"));
  EXPECT_FALSE(accepts("application/json", "text/event-stream"));
  EXPECT_FALSE(accepts("text/event-stream;q=0, application/json", "text/event-stream"));
  EXPECT_FALSE(accepts("text/html", "application/json"));
  EXPECT_FALSE(accepts("application/jsonx", "application/json"));
}

TEST(HttpChecksTest, OnlyLoopbackAndListedOriginsPass) {
  const std::vector<std::string> allowed = {"app.example", "https://other.example"};
  EXPECT_TRUE(originAllowed("http://localhost:3000", {}));
  EXPECT_TRUE(originAllowed("http://127.0.0.1", {}));
  EXPECT_TRUE(originAllowed("http://127.1.2.3:8080", {}));
  EXPECT_TRUE(originAllowed("http://[::1]:80", {}));
  EXPECT_TRUE(originAllowed("https://APP.example", allowed));
  EXPECT_TRUE(originAllowed("https://other.example", allowed));
  EXPECT_FALSE(originAllowed("http://other.example", allowed));  // another scheme
  EXPECT_FALSE(originAllowed("null", {}));
  EXPECT_FALSE(originAllowed("http://localhost.evil.example", {}));
  EXPECT_FALSE(originAllowed("http://127.0.0.1.evil.example", {}));
  EXPECT_FALSE(originAllowed("http://1270.0.0.1", {}));
  EXPECT_FALSE(originAllowed("http://evil.example", allowed));
}

TEST(HttpChecksTest, OnlyLoopbackAndListedHostsPass) {
  const std::vector<std::string> allowed = {"app.example", "https://other.example:8443/x"};
  for (const char* host : {"localhost", "LOCALHOST:8931", "127.0.0.1", "127.9.8.7:80", "[::1]",
                           "[::1]:8931", " localhost "}) {
    EXPECT_TRUE(hostAllowed(host, {})) << host;
  }
  EXPECT_TRUE(hostAllowed("app.example:8931", allowed));
  EXPECT_TRUE(hostAllowed("Other.Example", allowed));
  // A name re-pointed at 127.0.0.1, and spellings that only start or end like loopback.
  for (const char* host :
       {"evil.example", "evil.example:8931", "localhost.evil.example", "127.0.0.1.evil.example",
        "1270.0.0.1", "[::1", "[::2]", "", "localhost/", "127.0.0.1@evil.example", "0x7f.0.0.1",
        "127.0.0.1:80@evil", "127.0.0.1:", "[::1]x", "[::1]:80x", "localhost:8o"}) {
    EXPECT_FALSE(hostAllowed(host, allowed)) << host;
  }
  EXPECT_TRUE(isLoopbackAddress("127.0.0.1"));
  EXPECT_TRUE(isLoopbackAddress("::1"));
  EXPECT_FALSE(isLoopbackAddress("0.0.0.0"));
  EXPECT_FALSE(isLoopbackAddress("192.168.1.2"));
}

TEST(HttpChecksTest, BearerTokensMatchExactly) {
  EXPECT_TRUE(bearerMatches("Bearer abc123", "abc123"));
  EXPECT_TRUE(bearerMatches("bearer abc123", "abc123"));
  EXPECT_FALSE(bearerMatches("Bearer abc12", "abc123"));
  EXPECT_FALSE(bearerMatches("Bearer abc1234", "abc123"));
  EXPECT_FALSE(bearerMatches("Basic abc123", "abc123"));
  EXPECT_FALSE(bearerMatches("abc123", "abc123"));
  EXPECT_FALSE(bearerMatches("Bearer ", ""));
}

TEST(HttpChecksTest, SessionIdsAreFreshVisibleAscii) {
  auto first = newSessionId();
  auto second = newSessionId();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->size(), 64U);
  EXPECT_NE(*first, *second);
}

TEST(HttpChecksTest, StandardHeadersMustAgreeWithTheBody) {
  const Json call = {{"jsonrpc", "2.0"},
                     {"id", 1},
                     {"method", "tools/call"},
                     {"params",
                      {{"name", "héllo"},
                       {"_meta", {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}}}}}};
  // "héllo" in base64 (UTF-8).
  EXPECT_FALSE(standardHeaderMismatch(call, {"2026-07-28", "tools/call", "=?base64?aMOpbGxv?="}));
  EXPECT_TRUE(standardHeaderMismatch(call, {"2026-07-28", "tools/call", "hello"}));
  EXPECT_TRUE(standardHeaderMismatch(call, {"2026-07-28", "tools/call", "=?base64?!!!!?="}));
  EXPECT_TRUE(standardHeaderMismatch(call, {"2026-07-28", "tools/list", "=?base64?aMOpbGxv?="}));
  EXPECT_TRUE(standardHeaderMismatch(call, {"2026-07-28", std::nullopt, std::nullopt}));
  EXPECT_TRUE(standardHeaderMismatch(call, {"2025-11-25", "tools/call", "=?base64?aMOpbGxv?="}));
  EXPECT_TRUE(standardHeaderMismatch(call, {"", "tools/call", "=?base64?aMOpbGxv?="}));
  const Json list = {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}};
  EXPECT_FALSE(standardHeaderMismatch(list, {"2026-07-28", "tools/list", std::nullopt}));
}

TEST(HttpChecksTest, RequestMetaMustNameVersionAndCapabilities) {
  const Json version = "2026-07-28";
  auto request = [](Json params) {
    return Json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}, {"params", params}};
  };
  EXPECT_FALSE(requestMetaProblem(
      request({{"_meta",
                {{"io.modelcontextprotocol/protocolVersion", version},
                 {"io.modelcontextprotocol/clientCapabilities", Json::object()}}}})));
  EXPECT_TRUE(requestMetaProblem(Json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}}));
  EXPECT_TRUE(requestMetaProblem(request(Json::object())));
  EXPECT_TRUE(requestMetaProblem(request({{"_meta", "2026-07-28"}})));
  EXPECT_TRUE(requestMetaProblem(
      request({{"_meta", {{"io.modelcontextprotocol/clientCapabilities", Json::object()}}}})));
  EXPECT_TRUE(requestMetaProblem(
      request({{"_meta", {{"io.modelcontextprotocol/protocolVersion", version}}}})));
  EXPECT_TRUE(requestMetaProblem(
      request({{"_meta",
                {{"io.modelcontextprotocol/protocolVersion", 20260728},
                 {"io.modelcontextprotocol/clientCapabilities", Json::object()}}}})));
  EXPECT_TRUE(requestMetaProblem(
      request({{"_meta",
                {{"io.modelcontextprotocol/protocolVersion", version},
                 {"io.modelcontextprotocol/clientCapabilities", Json::array()}}}})));
}

TEST(HttpChecksTest, OnlyCanonicalBase64SentinelsDecode) {
  EXPECT_EQ(decodeHeaderValue("=?base64?SGVsbG8=?="), "Hello");
  EXPECT_EQ(decodeHeaderValue("=?base64?"
                              "?="),
            "");
  EXPECT_EQ(decodeHeaderValue("=?base64?AA==?="), std::string(1, '\0'));
  // Without the exact wrapper a value is literal.
  EXPECT_EQ(decodeHeaderValue("SGVsbG8="), "SGVsbG8=");
  EXPECT_EQ(decodeHeaderValue("=?base64?SGVsbG8="), "=?base64?SGVsbG8=");
  EXPECT_EQ(decodeHeaderValue("=?BASE64?SGVsbG8=?="), "=?BASE64?SGVsbG8=?=");
  EXPECT_EQ(decodeHeaderValue("=?base64?="), "=?base64?=");
  // Inside the wrapper, anything but canonical padded base64 is refused.
  for (const char* bad : {"=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?=", "=?base64?SG=sbG8=?=",
                          "=?base64?SGVsbG8===?=", "=?base64?====?=", "=?base64?SGVs bG8?=",
                          "=?base64?SGVs\nbG8?=", "=?base64?SGVsbG\xC3\xA9?="}) {
    EXPECT_FALSE(decodeHeaderValue(bad)) << bad;
  }
  // Bits left over before the padding must be zero, so that each value has one spelling
  // (found by tests/fuzz/http_checks_fuzz: "SGVsb8G=" decoded like "SGVsb8E=").
  EXPECT_EQ(decodeHeaderValue("=?base64?SGVsbA==?="), "Hell");
  for (const char* bad : {"=?base64?SGVsb8G=?=", "=?base64?SGVsbG9=?=", "=?base64?SGVsbA/=?=",
                          "=?base64?AB==?=", "=?base64?AP==?="}) {
    EXPECT_FALSE(decodeHeaderValue(bad)) << bad;
  }
}

TEST(HttpChecksTest, ParamHeadersMustAgreeWithTheArguments) {
  const Json schema = {
      {"type", "object"},
      {"properties",
       {{"region", {{"type", "string"}, {"x-mcp-header", "Region"}}},
        {"count", {{"type", "integer"}, {"x-mcp-header", "Count"}}},
        {"dry", {{"type", "boolean"}, {"x-mcp-header", "Dry-Run"}}},
        {"note", {{"type", "string"}}},
        {"nested",
         {{"type", "object"},
          {"properties", {{"inner", {{"type", "string"}, {"x-mcp-header", "Inner"}}}}}}}}}};
  const Json arguments = {{"region", "Hello"},
                          {"count", 42},
                          {"dry", true},
                          {"note", "n"},
                          {"nested", {{"inner", "x"}}}};
  const ParamHeaders agreeing = {
      {"region", {"=?base64?SGVsbG8=?="}}, {"count", {"42"}}, {"dry-run", {"true"}}};
  EXPECT_FALSE(paramHeaderMismatch(schema, arguments, agreeing));
  // Numbers compare by value; OWS around a value is not part of it.
  ParamHeaders loose = agreeing;
  loose["count"] = {"42.0"};
  loose["region"] = {"  Hello\t"};
  EXPECT_FALSE(paramHeaderMismatch(schema, arguments, loose));

  auto changed = [&](const std::string& name, std::vector<std::string> values) {
    ParamHeaders headers = agreeing;
    if (values.empty()) {
      headers.erase(name);
    } else {
      headers[name] = std::move(values);
    }
    return paramHeaderMismatch(schema, arguments, headers);
  };
  EXPECT_TRUE(changed("region", {"Goodbye"}));
  EXPECT_TRUE(changed("region", {"hello"}));
  EXPECT_TRUE(changed("region", {"=?base64?SGVsbG8?="}));
  EXPECT_TRUE(changed("region", {"=?base64?R29vZGJ5ZQ==?="}));
  EXPECT_TRUE(changed("region", {}));
  EXPECT_TRUE(changed("region", {"Hello", "Hello"}));
  EXPECT_TRUE(changed("count", {"43"}));
  EXPECT_TRUE(changed("count", {"42abc"}));
  EXPECT_TRUE(changed("count", {"0x2a"}));
  EXPECT_TRUE(changed("count", {"1e999"}));
  EXPECT_TRUE(changed("dry-run", {"1"}));
  EXPECT_TRUE(changed("dry-run", {"True"}));
  // A huge value is refused with a short sentence.
  const auto huge = changed("region", {std::string(1 << 20, 'A')});
  ASSERT_TRUE(huge);
  EXPECT_LT(huge->size(), 300U);
  const auto hugeSentinel = changed("region", {"=?base64?" + std::string(1 << 20, '/') + "?="});
  ASSERT_TRUE(hugeSentinel);
  EXPECT_LT(hugeSentinel->size(), 300U);

  // A header for an argument the request does not give is a disagreement too; a null one
  // counts as not given.
  Json without = arguments;
  without.erase("region");
  EXPECT_TRUE(paramHeaderMismatch(schema, without, agreeing));
  ParamHeaders noRegion = agreeing;
  noRegion.erase("region");
  EXPECT_FALSE(paramHeaderMismatch(schema, without, noRegion));
  without["region"] = nullptr;
  EXPECT_FALSE(paramHeaderMismatch(schema, without, noRegion));
  // Headers no property names, and annotations below the top level, are not checked.
  noRegion["unknown"] = {"x"};
  noRegion["inner"] = {"y"};
  without.erase("region");
  EXPECT_FALSE(paramHeaderMismatch(schema, without, noRegion));
  EXPECT_FALSE(paramHeaderMismatch(Json::array(), arguments, {}));
  EXPECT_FALSE(paramHeaderMismatch({{"properties", "region"}}, arguments, {}));
}

TEST(HttpChecksTest, StatelessStatusFollowsTheErrorCode) {
  auto failure = [](Json code) {
    return Json{{"jsonrpc", "2.0"}, {"id", 1}, {"error", {{"code", code}, {"message", "m"}}}};
  };
  EXPECT_EQ(statelessStatus(failure(-32601)), 404U);
  EXPECT_EQ(statelessStatus(failure(-32020)), 400U);
  EXPECT_EQ(statelessStatus(failure(-32021)), 400U);
  EXPECT_EQ(statelessStatus(failure(-32022)), 400U);
  EXPECT_EQ(statelessStatus(failure(-32603)), 200U);
  EXPECT_EQ(statelessStatus(failure("-32601")), 200U);
  EXPECT_EQ(statelessStatus(Json{{"jsonrpc", "2.0"}, {"id", 1}, {"result", Json::object()}}), 200U);
  EXPECT_EQ(statelessStatus(Json::array()), 200U);
}

}  // namespace
}  // namespace kaja::core::server::http_checks
