#include "core/policy/output_guard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kaja::core::policy {
namespace {

using mcp::Json;
using ::testing::HasSubstr;

mcp::ToolResult resultWith(Json content, Json extra = Json::object()) {
  mcp::ToolResult result;
  result.raw = extra;
  result.raw["content"] = std::move(content);
  return result;
}

Json text(const std::string& value) { return {{"type", "text"}, {"text", value}}; }
Json image(size_t bytes) {
  return {{"type", "image"}, {"mimeType", "image/png"}, {"data", std::string(bytes, 'A')}};
}

TEST(OutputGuardTest, SmallResultsPassUnchanged) {
  auto input = resultWith(Json::array({text("hello"), image(100)}),
                          {{"isError", true}, {"structuredContent", {{"a", 1}}}});
  auto out = guardOutput(input);
  EXPECT_FALSE(out.report.changed());
  EXPECT_EQ(out.result.raw, input.raw);
}

TEST(OutputGuardTest, CutsTextAtTheLimitWithAMarker) {
  auto out =
      guardOutput(resultWith(Json::array({text(std::string(40000, 'x'))})), {1000, 100, 100});
  EXPECT_EQ(out.report.textBytesCut, 39000u);
  std::string shown = out.result.content()[0]["text"];
  EXPECT_TRUE(shown.starts_with(std::string(1000, 'x')));
  EXPECT_TRUE(shown.substr(1000).starts_with("\n[kaja: output cut here;"));
  EXPECT_THAT(shown, HasSubstr("39000 more bytes of text were not shown (limit 1000 bytes)"));
}

TEST(OutputGuardTest, DefaultLimitIs32KilobytesAcrossBlocks) {
  auto out = guardOutput(resultWith(
      Json::array({text(std::string(20000, 'a')), text(std::string(20000, 'b')), text("tail")})));
  EXPECT_EQ(out.report.textBytesCut, 40004u - 32768u);
  ASSERT_EQ(out.result.content().size(), 2u);  // the third block is gone entirely
  EXPECT_EQ(out.result.content()[0]["text"], std::string(20000, 'a'));
  EXPECT_THAT(out.result.content()[1]["text"].get<std::string>(), HasSubstr("7236 more bytes"));
}

TEST(OutputGuardTest, CutsOnAUtf8Boundary) {
  std::string euros;
  for (int i = 0; i < 10; ++i) euros += "\u20AC";  // 3 bytes each
  EXPECT_EQ(utf8CutPoint(euros, 10), 9u);
  EXPECT_EQ(utf8CutPoint(euros, 9), 9u);
  EXPECT_EQ(utf8CutPoint(euros, 100), 30u);
  auto out = guardOutput(resultWith(Json::array({text(euros)})), {10, 100, 100});
  std::string shown = out.result.content()[0]["text"];
  EXPECT_TRUE(shown.starts_with("\u20AC\u20AC\u20AC\n[kaja:"));
  EXPECT_EQ(out.report.textBytesCut, 21u);
  EXPECT_NO_FATAL_FAILURE(out.result.raw.dump());  // still valid UTF-8 for the JSON writer
}

TEST(OutputGuardTest, MediaPassesWholeUpToItsLimitThenBecomesANote) {
  auto out = guardOutput(resultWith(Json::array({image(600), image(600), text("caption")})),
                         {1000, 1000, 1000});
  ASSERT_EQ(out.result.content().size(), 3u);
  EXPECT_EQ(out.result.content()[0], image(600));
  EXPECT_EQ(out.result.content()[1]["type"], "text");
  EXPECT_THAT(out.result.content()[1]["text"].get<std::string>(),
              HasSubstr("an image (image/png) of 600 bytes was left out"));
  EXPECT_EQ(out.result.content()[2], text("caption"));
  EXPECT_EQ(out.report.mediaBlocksReplaced, 1u);
  EXPECT_EQ(out.report.textBytesCut, 0u);  // a 600-byte image does not spend the text budget
}

TEST(OutputGuardTest, OversizedStructuredContentIsCutKeepingItsShape) {
  Json big = {{"rows", std::string(5000, 'r')}, {"count", 2}};
  auto out = guardOutput(resultWith(Json::array({text("summary")}), {{"structuredContent", big}}),
                         {32768, 1000, 1000});
  EXPECT_FALSE(out.report.structuredDropped);
  EXPECT_GT(out.report.structuredBytesCut, 4000u);
  auto structured = out.result.structuredContent();
  ASSERT_TRUE(structured.has_value());
  EXPECT_EQ((*structured)["count"], 2);
  std::string rows = (*structured)["rows"];
  EXPECT_TRUE(rows.starts_with(std::string(900, 'r')));
  EXPECT_THAT(rows, HasSubstr("more bytes cut]"));
  EXPECT_LE(structured->dump().size(), 1100u);
  ASSERT_EQ(out.result.content().size(), 2u);
  EXPECT_EQ(out.result.content()[0], text("summary"));
  EXPECT_THAT(out.result.content()[1]["text"].get<std::string>(),
              HasSubstr("structured content was cut to its first 1000 bytes"));
}

TEST(OutputGuardTest, StructuredContentWithNoRoomIsDroppedWithANote) {
  auto out =
      guardOutput(resultWith(Json::array(), {{"structuredContent", {{"a", "b"}}}}), {100, 100, 0});
  EXPECT_TRUE(out.report.structuredDropped);
  EXPECT_FALSE(out.result.structuredContent().has_value());
  ASSERT_EQ(out.result.content().size(), 1u);
  EXPECT_THAT(out.result.content()[0]["text"].get<std::string>(),
              HasSubstr("structured content of 9 bytes was left out"));  // {"a":"b"}
}

TEST(OutputGuardTest, EmbeddedResourcesCountAsTextOrMedia) {
  Json textResource = {{"type", "resource"},
                       {"resource", {{"uri", "file:///a"}, {"text", std::string(50, 't')}}}};
  Json blobResource = {{"type", "resource"},
                       {"resource", {{"uri", "file:///b"}, {"blob", std::string(50, 'b')}}}};
  auto out = guardOutput(resultWith(Json::array({textResource, blobResource})), {20, 10, 100});
  EXPECT_EQ(out.report.textBytesCut, 30u);
  EXPECT_THAT(out.result.content()[0]["resource"]["text"].get<std::string>(),
              HasSubstr("30 more bytes"));
  EXPECT_EQ(out.result.content()[0]["resource"]["uri"], "file:///a");
  EXPECT_EQ(out.result.content()[1]["type"], "text");
  EXPECT_EQ(out.report.mediaBlocksReplaced, 1u);
}

}  // namespace
}  // namespace kaja::core::policy
