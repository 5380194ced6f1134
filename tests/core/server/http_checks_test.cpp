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

}  // namespace
}  // namespace kaja::core::server::http_checks
