#include "core/mcp/mcp_headers.h"

#include <gtest/gtest.h>

namespace kaja::core::mcp {
namespace {

Json schemaWith(Json properties) {
  return Json{{"type", "object"}, {"properties", std::move(properties)}};
}

TEST(McpHeadersTest, EncodesValuesPlainOrBase64) {
  EXPECT_EQ(encodeHeaderValue("us-west1"), "us-west1");
  EXPECT_EQ(encodeHeaderValue("us west 1"), "us west 1");
  EXPECT_EQ(encodeHeaderValue(""), "");
  EXPECT_EQ(encodeHeaderValue(42), "42");
  EXPECT_EQ(encodeHeaderValue(false), "false");
  EXPECT_EQ(encodeHeaderValue(" padded "), "=?base64?IHBhZGRlZCA=?=");
  EXPECT_EQ(encodeHeaderValue("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
  EXPECT_EQ(encodeHeaderValue("Hello, \xe4\xb8\x96\xe7\x95\x8c"),
            "=?base64?SGVsbG8sIOS4lueVjA==?=");
}

TEST(McpHeadersTest, AcceptsValidAnnotations) {
  auto headers =
      paramHeaders(schemaWith({{"region", {{"type", "string"}, {"x-mcp-header", "Region"}}},
                               {"priority", {{"type", "integer"}, {"x-mcp-header", "Priority"}}},
                               {"query", {{"type", "string"}}}}));
  ASSERT_TRUE(headers) << headers.error().message;
  ASSERT_EQ(headers->size(), 2u);
}

TEST(McpHeadersTest, RejectsInvalidAnnotations) {
  const auto invalid = [](Json property) {
    return !paramHeaders(schemaWith({{"p", std::move(property)}}));
  };
  EXPECT_TRUE(invalid({{"type", "string"}, {"x-mcp-header", ""}}));
  EXPECT_TRUE(invalid({{"type", "string"}, {"x-mcp-header", "My Region"}}));
  EXPECT_TRUE(invalid({{"type", "string"}, {"x-mcp-header", "Region:Primary"}}));
  EXPECT_TRUE(invalid({{"type", "string"}, {"x-mcp-header", "R\xc3\xa9gion"}}));
  EXPECT_TRUE(invalid({{"type", "number"}, {"x-mcp-header", "Score"}}));
  EXPECT_TRUE(invalid({{"type", "object"}, {"x-mcp-header", "Data"}}));
  EXPECT_FALSE(
      paramHeaders(schemaWith({{"a", {{"type", "string"}, {"x-mcp-header", "MyField"}}},
                               {"b", {{"type", "string"}, {"x-mcp-header", "myfield"}}}})));
}

TEST(McpHeadersTest, StandardHeadersForToolsCall) {
  const ToolParamHeaders tools = {{"search", {{"region", "Region"}, {"verbose", "Verbose"}}}};
  const Request call{
      3,
      "tools/call",
      {{"name", "search"}, {"arguments", {{"region", "eu"}, {"verbose", nullptr}, {"q", "x"}}}}};
  const auto headers = standardHeaders(call, tools);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"Mcp-Method", "tools/call"}, {"Mcp-Name", "search"}, {"Mcp-Param-Region", "eu"}};
  EXPECT_EQ(headers, expected);
  const auto read = standardHeaders(Request{4, "resources/read", {{"uri", "file:///a"}}}, {});
  EXPECT_EQ(read.back(), (std::pair<std::string, std::string>{"Mcp-Name", "file:///a"}));
  const auto note = standardHeaders(Notification{"notifications/cancelled", Json()}, {});
  ASSERT_EQ(note.size(), 1u);
  EXPECT_EQ(note[0].second, "notifications/cancelled");
}

}  // namespace
}  // namespace kaja::core::mcp
