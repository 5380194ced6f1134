#include "core/mcp/json_rpc.h"

#include <gtest/gtest.h>

namespace kaja::core::mcp {
namespace {

TEST(JsonRpcTest, ParsesRequestNotificationAndResponses) {
  auto messages = parseMessages(
      R"([{"jsonrpc":"2.0","id":7,"method":"roots/list"},)"
      R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}},)"
      R"({"jsonrpc":"2.0","id":"a","result":{"x":1}},)"
      R"({"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope","data":[1]}}])");
  ASSERT_TRUE(messages) << messages.error().message;
  ASSERT_EQ(messages->size(), 4u);
  const auto& request = std::get<Request>((*messages)[0]);
  EXPECT_EQ(request.id, 7);
  EXPECT_EQ(request.method, "roots/list");
  EXPECT_TRUE(request.params.is_null());
  EXPECT_EQ(std::get<Notification>((*messages)[1]).params["progress"], 1);
  const auto& ok = std::get<Response>((*messages)[2]);
  EXPECT_EQ(ok.id, "a");
  EXPECT_EQ((*ok.result)["x"], 1);
  const auto& failed = std::get<Response>((*messages)[3]);
  ASSERT_TRUE(failed.error);
  EXPECT_EQ(failed.error->code, rpc_error::kMethodNotFound);
  EXPECT_EQ(failed.error->message, "nope");
  EXPECT_EQ(failed.error->data, Json::array({1}));
}

TEST(JsonRpcTest, NonJsonIsOneProtocolSentence) {
  auto messages = parseMessages("Server starting on stdio...");
  ASSERT_FALSE(messages);
  EXPECT_EQ(messages.error().code, ErrorCode::kProtocol);
  EXPECT_EQ(messages.error().message, "The line is not JSON: \"Server starting on stdio...\".");
}

TEST(JsonRpcTest, RejectsWhatIsNotJsonRpc) {
  EXPECT_FALSE(parseMessages(R"({"id":1,"method":"x"})"));     // no jsonrpc
  EXPECT_FALSE(parseMessages(R"({"jsonrpc":"2.0","id":1})"));  // no result
  EXPECT_FALSE(parseMessages(R"({"jsonrpc":"2.0","id":1,"result":1,"error":{}})"));
  EXPECT_FALSE(parseMessages(R"({"jsonrpc":"2.0","id":1.5,"method":"x"})"));  // float id
  EXPECT_FALSE(parseMessages(R"({"jsonrpc":"2.0","method":7})"));
  EXPECT_FALSE(parseMessages(R"([])"));
  EXPECT_FALSE(parseMessages(R"(42)"));
}

TEST(JsonRpcTest, SerializesToOneLine) {
  const std::string line = serialize(Request{Json(5), "tools/call", Json{{"text", "two\nlines"}}});
  EXPECT_EQ(line.find('\n'), std::string::npos);
  auto back = parseMessages(line);
  ASSERT_TRUE(back);
  EXPECT_EQ(std::get<Request>(back->front()).params["text"], "two\nlines");
  EXPECT_EQ(serialize(Notification{"notifications/initialized", Json()}),
            R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  EXPECT_EQ(serialize(makeErrorResponse(Json(9), rpc_error::kMethodNotFound, "no")),
            R"({"error":{"code":-32601,"message":"no"},"id":9,"jsonrpc":"2.0"})");
}

TEST(JsonRpcTest, InvalidUtf8IsReplacedNotThrown) {
  const std::string line = serialize(Notification{"x", Json{{"bad", std::string("\xff\xfe")}}});
  EXPECT_NE(line.find("\xEF\xBF\xBD"), std::string::npos) << line;
}

TEST(JsonRpcTest, IdsAreUniqueAndClipKeepsUtf8Whole) {
  IdAllocator ids;
  EXPECT_EQ(ids.next(), 1);
  EXPECT_EQ(ids.next(), 2);
  EXPECT_EQ(clip("abcdef", 3), "abc…");
  EXPECT_EQ(clip("aé", 2), "a…");  // é is two bytes; never cut in half
  EXPECT_EQ(clip("short"), "short");
  EXPECT_EQ(clip("red\x1b[31m\nline"), "red [31m line");
}

}  // namespace
}  // namespace kaja::core::mcp
