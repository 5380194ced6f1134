// The file that keeps a result's whole text when the output guard cut it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/policy/call_pipeline.h"
#include "tests/support/temp_dir.h"

namespace kaja::core::policy {
namespace {

using mcp::Json;
using ::testing::HasSubstr;
using ::testing::Not;

mcp::ToolResult resultOf(Json raw) {
  mcp::ToolResult result;
  result.raw = std::move(raw);
  return result;
}

// An outside review found the file empty when the blocks left out were of no known kind: the
// guard showed them as JSON text, and the file kept only text blocks.
TEST(SpillTextTest, KeepsTextAndTheJsonOfBlocksOfNoKnownKindButNotMedia) {
  testing::TempDir dir;
  const Json raw = {
      {"content",
       {{{"type", "text"}, {"text", "first"}},
        {{"type", "Text"}, {"text", 7}, {"payload", "miscased block"}},
        {{"type", 5}, {"body", "a type that is a number"}},
        Json("a bare string"),
        {{"type", "resource"}, {"resource", {{"uri", "file:///a"}, {"text", "embedded"}}}},
        {{"type", "resource"}, {"resource", {{"uri", "file:///b"}, {"blob", "QUJD"}}}},
        {{"type", "image"}, {"data", "SU1BR0U="}, {"mimeType", "image/png"}},
        {{"type", "resource_link"}, {"uri", "file:///c"}}}}};
  auto kept = spillText(dir.path(), "fs", "read", resultOf(raw));
  ASSERT_TRUE(kept) << kept.error().message;
  const std::string text = testing::readFile(kept->first);
  EXPECT_EQ(text.size(), kept->second);
  EXPECT_THAT(text, HasSubstr("first"));
  EXPECT_THAT(text, HasSubstr("miscased block"));
  EXPECT_THAT(text, HasSubstr("a type that is a number"));
  EXPECT_THAT(text, HasSubstr("a bare string"));
  EXPECT_THAT(text, HasSubstr("embedded"));
  EXPECT_THAT(text, Not(HasSubstr("QUJD")));
  EXPECT_THAT(text, Not(HasSubstr("SU1BR0U=")));
  EXPECT_THAT(text, Not(HasSubstr("file:///c")));
}

}  // namespace
}  // namespace kaja::core::policy
