#include "core/mcp/http_support.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace kaja::core::mcp
