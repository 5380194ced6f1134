#include "core/mcp/http_support.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace kaja::core::mcp {
namespace {

net::Url testUrl() {
  auto url = net::parseUrl("https://mcp.example.test/mcp");
  EXPECT_TRUE(url);
  return url ? *url : net::Url{};
}

TEST(HttpSupportTest, ACauseThatIsASentenceReadsAsOneSentence) {
  Error cause{ErrorCode::kConnect,
              "kaja could not resolve \"mcp.example.test\" (Name or service not known).",
              "",
              {}};
  Error error = requestError("server 'docs'", "docs", "POST", testUrl(), cause);
  EXPECT_EQ(error.message,
            "server 'docs' could not be reached at https://mcp.example.test/mcp (kaja could not "
            "resolve \"mcp.example.test\" (Name or service not known)).");
  cause.code = ErrorCode::kTimeout;
  cause.message = "no answer within 15 s.";
  error = requestError("server 'docs'", "docs", "POST", testUrl(), cause);
  EXPECT_EQ(error.code, ErrorCode::kTimeout);
  EXPECT_EQ(error.message,
            "server 'docs' timed out: no answer within 15 s (POST https://mcp.example.test/mcp).");
}

TEST(HttpSupportTest, OnlyARequestAfterTheSessionIsUpFailsAlone) {
  std::vector<std::string> failed;
  TransportHandlers handlers;
  handlers.onRequestFailed = [&](const Json& id, const Error&) { failed.push_back(id.dump()); };
  Error error{ErrorCode::kConnect, "HTTP 500", "", {}};
  auto posted = [](const std::string& method) {
    return std::optional<Message>(Request{Json(7), method, Json::object()});
  };
  EXPECT_TRUE(failRequestAlone(handlers, posted("tools/call"), 500, error));
  EXPECT_TRUE(failRequestAlone(handlers, posted("tools/list"), 0, error));
  EXPECT_FALSE(failRequestAlone(handlers, posted("tools/call"), 401, error));
  EXPECT_FALSE(failRequestAlone(handlers, posted("tools/call"), 403, error));
  EXPECT_FALSE(failRequestAlone(handlers, posted("initialize"), 500, error));
  EXPECT_FALSE(failRequestAlone(handlers, posted("server/discover"), 500, error));
  EXPECT_FALSE(failRequestAlone(
      handlers, std::optional<Message>(Notification{"notifications/initialized", Json::object()}),
      500, error));
  EXPECT_FALSE(failRequestAlone(handlers, std::nullopt, 500, error));
  EXPECT_FALSE(failRequestAlone(TransportHandlers{}, posted("tools/call"), 500, error));
  EXPECT_EQ(failed, (std::vector<std::string>{"7", "7"}));
}

// The server itself answered the call with an error status: it was reached, so the call
// fails as kProtocol (exit 1); a proxy's 407, 502, 503, 504 and a 404 stay kConnect (exit 4).
TEST(HttpSupportTest, AnErrorStatusFromTheServerFailsTheRequestAsReached) {
  std::vector<ErrorCode> codes;
  TransportHandlers handlers;
  handlers.onRequestFailed = [&](const Json&, const Error& error) { codes.push_back(error.code); };
  const Error error{ErrorCode::kConnect, "HTTP", "", {}};
  const std::optional<Message> call(Request{Json(7), "tools/call", Json::object()});
  for (const long status : {500L, 501L, 400L, 429L, 502L, 503L, 504L, 404L, 407L, 0L}) {
    EXPECT_TRUE(failRequestAlone(handlers, call, status, error)) << status;
  }
  const auto p = ErrorCode::kProtocol;
  const auto c = ErrorCode::kConnect;
  EXPECT_EQ(codes, (std::vector<ErrorCode>{p, p, p, p, c, c, c, c, c, c}));
}

TEST(HttpSupportTest, ReconnectsHaveAFloorACapAndBackOff) {
  using std::chrono::milliseconds;
  EXPECT_EQ(reconnectDelay(milliseconds(0), milliseconds(1000)), kMinReconnectDelay);
  EXPECT_EQ(reconnectDelay(std::nullopt, milliseconds(1)), kMinReconnectDelay);
  EXPECT_EQ(reconnectDelay(milliseconds(500), milliseconds(1000)), milliseconds(500));
  EXPECT_EQ(reconnectDelay(std::nullopt, milliseconds(1000)), milliseconds(1000));
  EXPECT_EQ(reconnectDelay(milliseconds(999999999), milliseconds(1000)), milliseconds(30000));
  EXPECT_EQ(reconnectDelay(milliseconds(0), milliseconds(1000), 2), 2 * kMinReconnectDelay);
  EXPECT_EQ(reconnectDelay(milliseconds(0), milliseconds(1000), 3), 4 * kMinReconnectDelay);
  EXPECT_EQ(reconnectDelay(milliseconds(20000), milliseconds(1000), 9), milliseconds(30000));
}

TEST(HttpSupportTest, EchoedValuesMustBeShortVisibleAscii) {
  EXPECT_TRUE(checkEchoedHeader("server 'h'", "h", "Mcp-Session-Id", "abc-123_~!", 256));
  for (const std::string& bad :
       std::vector<std::string>{"", "sid\rX-Injected: 1", "a\nb", "a b", std::string("a\0b", 3),
                                "caf\xc3\xa9", "a\x7f", "a\tb", std::string(257, 'x')}) {
    auto checked = checkEchoedHeader("server 'h'", "h", "Mcp-Session-Id", bad, 256);
    ASSERT_FALSE(checked) << bad;
    EXPECT_EQ(checked.error().code, ErrorCode::kProtocol);
    EXPECT_EQ(checked.error().message.find('\r'), std::string::npos);
    EXPECT_NE(checked.error().message.find("sent an Mcp-Session-Id that"), std::string::npos);
    EXPECT_EQ(checked.error().message.find("X-Injected"), std::string::npos)
        << "the value itself is never quoted";
  }
}

TEST(HttpSupportTest, RedirectsOffHttpOrOffOriginAreRefusals) {
  for (const std::string location :
       {"file:///etc/passwd", "ftp://mcp.example.test/x", "gopher://mcp.example.test/",
        "https://other.example.test/mcp", "http://mcp.example.test/mcp",
        "https://mcp.example.test:444/mcp", "http://169.254.169.254/latest/meta-data/"}) {
    auto target = redirectTarget("server 'h'", "h", testUrl(), 307, location, 0, 3);
    ASSERT_FALSE(target) << location;
    EXPECT_EQ(target.error().code, ErrorCode::kRefused) << location;
    EXPECT_NE(target.error().message.find("kaja does not follow"), std::string::npos);
  }
  EXPECT_TRUE(redirectTarget("server 'h'", "h", testUrl(), 307, "/elsewhere", 0, 3));
}

TEST(HttpSupportTest, JunkEventsWarnThreeTimesAtMost) {
  SkipWarnings warnings;
  int given = 0;
  for (int i = 0; i < 1000; ++i) given += warnings.next("server 'h'", "junk").empty() ? 0 : 1;
  EXPECT_EQ(given, SkipWarnings::kMaxSkipWarnings);
}

}  // namespace
}  // namespace kaja::core::mcp
