#include "core/mcp/json_rpc.h"

#include <gtest/gtest.h>

#include <limits>

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
  EXPECT_FALSE(parseMessages(R"({"id":1,"method":"x"})"));  // no jsonrpc
  // A reply that breaks the rules but names its request is read as unreadable (below).
  EXPECT_TRUE(std::get<Response>(parseMessages(R"({"jsonrpc":"2.0","id":1})")->front()).unreadable);
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

// An outside review saw a zero-width space in a session id echoed raw into an HTTP error.
TEST(JsonRpcTest, ClipEscapesCharactersThatDrawNothing) {
  EXPECT_EQ(clip("a\u200bb\u200cc\u200dd"), "a\\u200bb\\u200cc\\u200dd");
  EXPECT_EQ(clip("e\u2060f\u2064g\ufeffh"), "e\\u2060f\\u2064g\\ufeffh");
  // Their neighbours that draw something stay as they are.
  EXPECT_EQ(clip("\u2010\u2030\u205f\ufefe"), "\u2010\u2030\u205f\ufefe");
}

TEST(JsonRpcTest, ClipEscapesWhatTurnsOrBreaksTheLineWhereItIsShown) {
  // U+202E RIGHT-TO-LEFT OVERRIDE, U+2067, U+200F, U+2028, U+2029, U+0085 (C1) and U+009B
  // (C1 CSI, which some terminals obey).
  EXPECT_EQ(clip("evil\u202efdp.exe"), "evil\\u202efdp.exe");
  EXPECT_EQ(clip("a\u2067b\u200fc\u2028d\u2029e\u0085f\u009bg"),
            "a\\u2067b\\u200fc\\u2028d\\u2029e\\u0085f\\u009bg");
  // Their neighbours and other scripts are kept: U+2027, U+202F, U+2065, U+206A, U+00A0, é, 日.
  const std::string kept = "\u2027\u202f\u2065\u206a\u00a0\u00e9\u65e5";
  EXPECT_EQ(clip(kept), kept);
  // A lead byte without its continuation is not taken for a control, nor is what follows it.
  EXPECT_EQ(clip("\xc2"
                 "A\xe2"
                 "AB"),
            "\xc2"
            "A\xe2"
            "AB");
  // A sequence cut short at the end is left for the cut to handle, never read past.
  EXPECT_EQ(clip(std::string("x\xe2\x80", 3)), std::string("x\xe2\x80", 3));
  EXPECT_EQ(clip("ab\u202ecd", 3), "ab…");
}

}  // namespace
}  // namespace kaja::core::mcp

namespace kaja::core::mcp {
namespace {

std::string deep(std::size_t depth, char open, char close) {
  return std::string(depth, open) + std::string(depth, close);
}

std::string deepObjects(std::size_t depth) {
  std::string out;
  for (std::size_t i = 0; i < depth; ++i) out += R"({"a":)";
  return out + "1" + std::string(depth, '}');
}

Response onlyResponse(const Result<std::vector<Message>>& messages) {
  EXPECT_TRUE(messages) << messages.error().message;
  if (!messages || messages->size() != 1 || !std::holds_alternative<Response>(messages->front())) {
    ADD_FAILURE() << "expected exactly one response";
    return Response{};
  }
  return std::get<Response>(messages->front());
}

TEST(JsonRpcLimitsTest, DeepNestingAnywhereFailsOnlyItsRequest) {
  const std::vector<std::string> deepValues = {deep(60000, '[', ']'), deepObjects(60000),
                                               deep(kMaxJsonDepth + 1, '[', ']')};
  for (const auto& value : deepValues) {
    for (const std::string& line :
         {R"({"jsonrpc":"2.0","id":7,"result":)" + value + "}",
          R"({"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":{"x":)" + value +
              "}}}",
          R"({"id":7,"error":{"code":1,"message":"m","data":)" + value + R"(},"jsonrpc":"2.0"})"}) {
      const Response& response = onlyResponse(parseMessages(line));
      EXPECT_EQ(response.id, 7);
      ASSERT_TRUE(response.unreadable);
      EXPECT_NE(response.unreadable->message.find("nested deeper than 256 levels"),
                std::string::npos)
          << response.unreadable->message;
    }
  }
  // A request or notification from the server that is too deep cannot be matched: an error.
  auto request = parseMessages(R"({"jsonrpc":"2.0","id":1,"method":"x","params":)" +
                               deep(60000, '[', ']') + "}");
  ASSERT_FALSE(request);
  EXPECT_NE(request.error().message.find("nested deeper"), std::string::npos);
  // Exactly at the bound is still read.
  const Response& ok = onlyResponse(parseMessages(R"({"jsonrpc":"2.0","id":1,"result":)" +
                                                  deep(kMaxJsonDepth - 1, '[', ']') + "}"));
  EXPECT_FALSE(ok.unreadable);
  ASSERT_TRUE(ok.result);
  EXPECT_NO_THROW((void)ok.result->dump());
}

TEST(JsonRpcLimitsTest, ADeepElementOfABatchLeavesTheOthers) {
  auto messages =
      parseMessages(R"([{"jsonrpc":"2.0","id":1,"result":)" + deep(60000, '[', ']') +
                    R"(},{"jsonrpc":"2.0","id":2,"result":{"ok":true}},)"
                    R"({"jsonrpc":"2.0","method":"notifications/x","params":{"y":1}}])");
  ASSERT_TRUE(messages) << messages.error().message;
  ASSERT_EQ(messages->size(), 3u);
  EXPECT_TRUE(std::get<Response>((*messages)[0]).unreadable);
  EXPECT_EQ(std::get<Response>((*messages)[0]).id, 1);
  const auto& kept = std::get<Response>((*messages)[1]);
  EXPECT_FALSE(kept.unreadable);
  EXPECT_EQ((*kept.result)["ok"], true);
  EXPECT_EQ(std::get<Notification>((*messages)[2]).params["y"], 1);
}

TEST(JsonRpcLimitsTest, TooManyValuesFailOnlyTheirRequest) {
  std::string values = "0";
  for (std::size_t i = 0; i < kMaxJsonValues; ++i) values += ",0";
  const Response& response = onlyResponse(
      parseMessages(R"({"jsonrpc":"2.0","id":"big","result":{"v":[)" + values + "]}}"));
  EXPECT_EQ(response.id, "big");
  ASSERT_TRUE(response.unreadable);
  EXPECT_NE(response.unreadable->message.find("more than"), std::string::npos);
}

TEST(JsonRpcLimitsTest, MalformedBytesAreReadAsReplacementCharacters) {
  const std::string fffd = "\xEF\xBF\xBD";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("a \ud83d b")", "a " + fffd + " b"},
      {R"("\ude00")", fffd},
      {R"("\ud83d\ud83d\ude00")", fffd + "\xF0\x9F\x98\x80"},  // a lone high, then a pair
      {"\"bad \xff\xfe\"", "bad " + fffd + fffd},
      {"\"\xc0\xaf\"", fffd + fffd},             // overlong
      {"\"\xed\xa0\x80\"", fffd + fffd + fffd},  // an encoded surrogate
      {"\"tab\there\"", "tab\there"},
      {"\"esc\x1b[31m\"", "esc\x1b[31m"},
      {R"("fine \ud83d\ude00")", "fine \xF0\x9F\x98\x80"}};
  for (const auto& [text, expected] : cases) {
    const Response& response =
        onlyResponse(parseMessages(R"({"jsonrpc":"2.0","id":3,"result":{"t":)" + text + "}}"));
    ASSERT_TRUE(response.result) << text;
    EXPECT_EQ((*response.result)["t"], expected) << text;
    EXPECT_NO_THROW((void)response.result->dump());
  }
}

TEST(JsonRpcLimitsTest, ABadReplyWithAnIdFailsItsRequestAtOnce) {
  for (const std::string line :
       {R"({"jsonrpc":"2.0","id":4,"result":1,"error":{}})",
        R"({"jsonrpc":"2.0","id":4,"error":"no"})",
        R"({"jsonrpc":"2.0","id":4,"error":{"code":"x"}})", R"({"jsonrpc":"2.0","id":4})",
        R"({"jsonrpc":"1.0","id":4})", R"({"id":4,"result":{}})"}) {
    const Response& response = onlyResponse(parseMessages(line));
    EXPECT_EQ(response.id, 4) << line;
    EXPECT_TRUE(response.unreadable) << line;
  }
}

TEST(JsonRpcLimitsTest, ErrorCodesKeepSixtyFourBits) {
  for (const std::int64_t code :
       {std::int64_t{99999999999}, std::int64_t{-99999999999},
        std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()}) {
    const Response& response =
        onlyResponse(parseMessages(R"({"jsonrpc":"2.0","id":1,"error":{"code":)" +
                                   std::to_string(code) + R"(,"message":"m"}})"));
    ASSERT_TRUE(response.error);
    EXPECT_EQ(response.error->code, code);
  }
  const Response& beyond = onlyResponse(parseMessages(
      R"({"jsonrpc":"2.0","id":1,"error":{"code":18446744073709551615,"message":"m"}})"));
  EXPECT_TRUE(beyond.unreadable);
}

TEST(JsonRpcLimitsTest, ABatchKeepsItsGoodRepliesAroundBadElements) {
  auto messages = parseMessages(
      R"([42,{"jsonrpc":"2.0","method":5},{"jsonrpc":"2.0","id":"zz","result":1,"error":{}},)"
      R"({"jsonrpc":"2.0","id":9,"result":{"k":1}}])");
  ASSERT_TRUE(messages) << messages.error().message;
  ASSERT_EQ(messages->size(), 4u);
  EXPECT_TRUE(std::get<Response>((*messages)[0]).unreadable);
  EXPECT_TRUE(std::get<Response>((*messages)[0]).id.is_null());
  EXPECT_TRUE(std::get<Response>((*messages)[1]).id.is_null());
  EXPECT_EQ(std::get<Response>((*messages)[2]).id, "zz");
  EXPECT_TRUE(std::get<Response>((*messages)[2]).unreadable);
  const auto& good = std::get<Response>((*messages)[3]);
  EXPECT_FALSE(good.unreadable);
  EXPECT_EQ((*good.result)["k"], 1);
}

// A reply the JSON reader cannot take (a number past what a double holds) still names its
// request, so that request fails at once with the reason rather than at its timeout.
TEST(JsonRpcTest, AReplyThatIsNoJsonFailsItsRequestWhenItsIdCameFirst) {
  auto messages =
      parseMessages(R"({"jsonrpc":"2.0","id":4,"result":{"structuredContent":{"v":1e400}}})");
  ASSERT_TRUE(messages) << messages.error().message;
  ASSERT_EQ(messages->size(), 1u);
  const auto* reply = std::get_if<Response>(&messages->front());
  ASSERT_NE(reply, nullptr);
  EXPECT_EQ(reply->id, Json(4));
  ASSERT_TRUE(reply->unreadable.has_value());
  EXPECT_NE(reply->unreadable->message.find("number overflow"), std::string::npos)
      << reply->unreadable->message;
  // No id before the break, or a request rather than a reply: the line's error, as before.
  EXPECT_FALSE(parseMessages(R"({"result":{"v":1e400},"id":4})"));
  EXPECT_FALSE(parseMessages(R"({"jsonrpc":"2.0","method":"x","id":4,"params":[1e400]})"));
}

}  // namespace
}  // namespace kaja::core::mcp
