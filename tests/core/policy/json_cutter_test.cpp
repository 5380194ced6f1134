#include "core/policy/json_cutter.h"

#include <gtest/gtest.h>

#include <random>

namespace kaja::core::policy {
namespace {

using mcp::Json;

// A random value of printable ASCII strings and keys, which JSON writes with no escapes.
Json randomValue(std::mt19937& random, int depth) {
  std::uniform_int_distribution<int> kind(0, depth > 4 ? 4 : 6);
  std::uniform_int_distribution<int> count(0, 5);
  std::uniform_int_distribution<int> letter('a', 'z');
  const auto word = [&] {
    std::string text;
    for (int i = count(random); i > 0; --i) text += static_cast<char>(letter(random));
    return text;
  };
  switch (kind(random)) {
    case 0:
      return nullptr;
    case 1:
      return count(random) % 2 == 0;
    case 2:
      return static_cast<int64_t>(random()) - (1LL << 31);
    case 3:
      return static_cast<double>(random()) / 7.0;
    case 4:
      return word();
    case 5: {
      Json array = Json::array();
      for (int i = count(random); i > 0; --i) array.push_back(randomValue(random, depth + 1));
      return array;
    }
    default: {
      Json object = Json::object();
      for (int i = count(random); i > 0; --i) object[word()] = randomValue(random, depth + 1);
      return object;
    }
  }
}

// The count of what a cut leaves out must add up to what the model is told was cut: each
// separator once, no trailing comma counted.
TEST(JsonCutterTest, TheSizeOfAValueWithoutEscapesIsTheLengthOfItsCompactJson) {
  std::mt19937 random(20261206);
  for (int i = 0; i < 2000; ++i) {
    Json value = randomValue(random, 0);
    ASSERT_EQ(jsonSizeEstimate(value), value.dump().size()) << value.dump();
  }
  EXPECT_EQ(jsonSizeEstimate(Json::array()), 2u);
  EXPECT_EQ(jsonSizeEstimate(Json::object()), 2u);
  EXPECT_EQ(jsonSizeEstimate(Json{{"k", 0}, {"v", "value"}}), 19u);
}

// What is cut is counted to the byte, give or take what the budget charges beyond the bytes kept:
// one comma per row, and the marker of the string cut in the last row kept.
TEST(JsonCutterTest, WhatIsCountedAsCutIsTheWholeLessTheBudget) {
  Json rows = Json::array();
  for (int i = 0; i < 5000; ++i) rows.push_back({{"k", i}, {"v", "value"}});
  const size_t whole = rows.dump().size();
  JsonCutter cutter(4096);
  auto kept = cutter.cut(rows);
  ASSERT_TRUE(kept.has_value());
  EXPECT_LE(kept->dump().size(), 4096u + 64u);
  EXPECT_GE(cutter.cutBytes(), whole - 4096);
  EXPECT_LE(cutter.cutBytes(), whole - 4096 + 4096 / 20);
}

}  // namespace
}  // namespace kaja::core::policy
