// The file that keeps a result's whole text when the output guard cut it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

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

// Found by an outside review: the outputs folder grew without bound, one file per cut
// result, for a week. It now keeps at most a set number of bytes, the newest first.
TEST(SpillTextTest, TheOutputsFolderKeepsAtMostItsLimitAndTheNewestFiles) {
  testing::TempDir dir;
  const auto textOf = [](char c, std::size_t n) {
    return resultOf(Json{{"content", {{{"type", "text"}, {"text", std::string(n, c)}}}}});
  };
  std::vector<std::string> paths;
  for (char c : {'a', 'b', 'c'}) {
    auto kept = spillText(dir.path(), "fs", "read", textOf(c, 400), 1000);
    ASSERT_TRUE(kept) << kept.error().message;
    paths.push_back(kept->first);
  }
  EXPECT_FALSE(std::filesystem::exists(paths[0])) << "the oldest stays past the limit";
  EXPECT_EQ(testing::readFile(paths[1]), std::string(400, 'b'));
  EXPECT_EQ(testing::readFile(paths[2]), std::string(400, 'c'));
  // A text larger than the whole limit is not kept, and costs the others nothing.
  auto huge = spillText(dir.path(), "fs", "read", textOf('d', 1001), 1000);
  ASSERT_FALSE(huge);
  EXPECT_THAT(huge.error().message, HasSubstr("more than the 1000 bytes"));
  EXPECT_TRUE(std::filesystem::exists(paths[1]));
  EXPECT_TRUE(std::filesystem::exists(paths[2]));
}

}  // namespace
}  // namespace kaja::core::policy
