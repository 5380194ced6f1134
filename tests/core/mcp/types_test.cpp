#include "core/mcp/types.h"

#include <gtest/gtest.h>

namespace kaja::core::mcp {
namespace {

std::string why(const char* text) {
  auto result = ToolResult::fromJson(Json::parse(text));
  return result ? std::string() : result.error().message;
}

TEST(ToolResultTest, AcceptsEveryWellFormedShape) {
  EXPECT_EQ(why(R"({"content":[]})"), "");
  EXPECT_EQ(why(R"({})"), "");
  EXPECT_EQ(why(R"({"content":[{"type":"text","text":"a"},)"
                R"({"type":"image","data":"AA","mimeType":"image/png"},)"
                R"({"type":"audio","data":"AA","mimeType":"audio/wav"},)"
                R"({"type":"resource_link","uri":"file:///a","name":"a"},)"
                R"({"type":"resource","resource":{"uri":"file:///b","text":"b"}},)"
                R"({"type":"Text","text":5},{"type":"future","anything":[1]}],)"
                R"("structuredContent":{"a":1},"isError":false,"_meta":{}})"),
            "");
}

TEST(ToolResultTest, NamesTheFirstWrongField) {
  EXPECT_EQ(why(R"("text")"), "The result is malformed: it is a string, not an object.");
  EXPECT_EQ(why(R"([1])"), "The result is malformed: it is an array, not an object.");
  EXPECT_EQ(why(R"(null)"), "The result is malformed: it is a null, not an object.");
  EXPECT_EQ(why(R"({"content":[{"type":"text","text":5}]})"),
            "The result is malformed: content[0].text is a number, not a string.");
  EXPECT_EQ(why(R"({"content":[{"type":"text"}]})"),
            "The result is malformed: content[0].text is missing.");
  EXPECT_EQ(why(R"({"content":[{"type":"text","text":"a"},7]})"),
            "The result is malformed: content[1] is a number, not an object.");
  EXPECT_EQ(why(R"({"content":[{"type":3}]})"),
            "The result is malformed: content[0].type is a number, not a string.");
  EXPECT_EQ(why(R"({"content":[{"type":"image","data":"AA","mimeType":7}]})"),
            "The result is malformed: content[0].mimeType is a number, not a string.");
  EXPECT_EQ(why(R"({"content":[{"type":"audio","data":[],"mimeType":"a"}]})"),
            "The result is malformed: content[0].data is an array, not a string.");
  EXPECT_EQ(why(R"({"content":[{"type":"resource","resource":{"uri":"u","blob":false}}]})"),
            "The result is malformed: content[0].resource.blob is a boolean, not a string.");
  EXPECT_EQ(why(R"({"content":[{"type":"resource_link","uri":{}}]})"),
            "The result is malformed: content[0].uri is an object, not a string.");
  EXPECT_EQ(why(R"({"content":{}})"),
            "The result is malformed: content is an object, not an array.");
  EXPECT_EQ(why(R"({"isError":"yes"})"),
            "The result is malformed: isError is a string, not a boolean.");
  EXPECT_EQ(why(R"({"structuredContent":"s"})"),
            "The result is malformed: structuredContent is a string, not an object.");
  EXPECT_EQ(why(R"({"resultType":5})"),
            "The result is malformed: resultType is a number, not a string.");
}

TEST(ToolTest, ChecksTheTypesOfItsFields) {
  EXPECT_TRUE(Tool::fromJson(Json::parse(R"({"name":"a","inputSchema":{"type":"object"}})")));
  auto bad = Tool::fromJson(Json::parse(R"({"name":"a","description":5})"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "Tool 'a' in tools/list is malformed: description is a number, not a string.");
  EXPECT_FALSE(Tool::fromJson(Json::parse(R"({"name":"a","inputSchema":[]})")));
  EXPECT_FALSE(Tool::fromJson(Json::parse(R"({"name":"a","annotations":"ro"})")));
  EXPECT_FALSE(Tool::fromJson(Json::parse(R"({"name":5})")));
}

}  // namespace
}  // namespace kaja::core::mcp
