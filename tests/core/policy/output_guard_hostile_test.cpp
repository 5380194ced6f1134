// The output guard against results a hostile or broken server sends: every block and field is
// bounded, malformed parts are shown rather than dropped, and every change is said.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "core/policy/output_guard.h"

namespace kaja::core::policy {
namespace {

using mcp::Json;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

mcp::ToolResult resultOf(Json raw) {
  mcp::ToolResult result;
  result.raw = std::move(raw);
  return result;
}

std::string textAt(const GuardedOutput& out, size_t index) {
  const Json& block = out.result.content().at(index);
  return block.at("text").get<std::string>();
}

// Every string a model could be shown, joined.
std::string allText(const GuardedOutput& out) { return out.result.raw.dump(); }

// The guarded result must always be writable as strict JSON and bounded by the limits.
void expectBounded(const GuardedOutput& out, const OutputLimits& limits) {
  std::string strict;
  ASSERT_NO_THROW(strict = out.result.raw.dump());
  // Block frames have a budget of their own, as large as the text limit and at least 4 KB.
  size_t bound = limits.textBytes + std::max<size_t>(limits.textBytes, 4096) + limits.mediaBytes +
                 limits.structuredBytes + limits.metaBytes + 8192;
  EXPECT_LE(strict.size(), bound);
}

// The fastest of three runs of `work`. The machines are shared, so a test never holds the guard
// to a clock: it compares the guard with a plain copy of the same result, timed side by side, and
// the fastest run of each is the one least disturbed by its neighbours.
template <typename Work>
std::chrono::nanoseconds fastestOfThree(Work&& work) {
  auto best = std::chrono::nanoseconds::max();
  for (int run = 0; run < 3; ++run) {
    auto started = std::chrono::steady_clock::now();
    work();
    best = std::min(best, std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - started));
  }
  return best;
}

// How long the guard takes on `result`, as a multiple of a deep copy of it. The guard reads no
// further into a text than it keeps and never copies what it cuts, so on a huge result it costs a
// small part of one copy (about 1 to 5 per cent here); one that copied, or rescanned, costs more.
double guardCostInCopies(const mcp::ToolResult& result, GuardedOutput& out) {
  size_t sink = 0;
  auto copy = fastestOfThree([&] {
    mcp::ToolResult copied = result;
    sink += copied.raw.size();
  });
  auto guard = fastestOfThree([&] { out = guardOutput(result); });
  EXPECT_GT(sink, 0u);
  return static_cast<double>(guard.count()) /
         static_cast<double>(std::max<int64_t>(copy.count(), 1));
}

TEST(OutputGuardHostileTest, UnknownAndMiscasedTypesAreShownAsJsonText) {
  for (const char* type : {"TEXT", "Image", "foo", "", "text "}) {
    Json block = {{"type", type}, {"text", "hello"}, {"data", "QUJD"}};
    auto out = guardOutput(resultOf({{"content", Json::array({block})}}));
    ASSERT_EQ(out.result.content().size(), 1u) << type;
    EXPECT_EQ(out.result.content()[0]["type"], "text");
    std::string shown = textAt(out, 0);
    EXPECT_THAT(shown, StartsWith("[kaja: a content block was passed on as JSON text because its "
                                  "type"))
        << type;
    EXPECT_THAT(shown, HasSubstr("\"hello\""));
    EXPECT_EQ(out.report.blocksReplaced, 1u);
    EXPECT_TRUE(out.report.changed());
  }
}

TEST(OutputGuardHostileTest, BlocksWithFieldsOfTheWrongTypeAreShownNotTrusted) {
  const std::vector<std::pair<Json, std::string>> cases = {
      {{{"type", "text"}, {"text", 5}}, "its text is not a string"},
      {{{"type", "text"}, {"text", {{"nested", "object"}}}}, "its text is not a string"},
      {{{"type", "text"}}, "its text is not a string"},
      {{{"type", "image"}, {"data", 7}, {"mimeType", "image/png"}}, "its data is not a string"},
      {{{"type", "audio"}, {"data", "QUJD"}, {"mimeType", 7}}, "its mimeType is not a string"},
      {{{"type", 5}, {"text", "x"}}, "its type is missing or not a string"},
      {{{"type", "resource"}, {"resource", "file:///x"}}, "its resource is not an object"},
      {{{"type", "resource"}, {"resource", {{"uri", "file:///x"}, {"text", "a"}, {"blob", "b"}}}},
       "not exactly one string text or blob"},
      {{{"type", "resource_link"}, {"uri", Json::array()}}, "its uri is not a string"},
      {5, "it is not a JSON object"},
      {"plain string", "it is not a JSON object"},
      {Json::array({Json::array({{{"type", "text"}, {"text", "deep"}}})}),
       "it is not a JSON object"},
      {nullptr, "it is not a JSON object"},
  };
  for (const auto& [block, why] : cases) {
    auto out = guardOutput(resultOf({{"content", Json::array({block})}}));
    ASSERT_EQ(out.result.content().size(), 1u) << block.dump();
    EXPECT_THAT(textAt(out, 0), HasSubstr(why)) << block.dump();
    EXPECT_EQ(out.report.blocksReplaced, 1u) << block.dump();
    expectBounded(out, {});
  }
}

TEST(OutputGuardHostileTest, ContentThatIsNoArrayAndResultsThatAreNoObjectAreShown) {
  auto out = guardOutput(resultOf({{"content", "just a string"}}));
  ASSERT_EQ(out.result.content().size(), 1u);
  EXPECT_THAT(textAt(out, 0), HasSubstr("the content is not an array"));
  auto notObject = guardOutput(resultOf(Json::array({1, 2})));
  EXPECT_TRUE(notObject.result.isError());
  EXPECT_THAT(textAt(notObject, 0), HasSubstr("[1,2]"));
}

TEST(OutputGuardHostileTest, AHugeMalformedBlockCostsNoMoreThanTheTextBudget) {
  Json block = {{"type", "TEXT"}, {"text", std::string(3'000'000, 'x')}};
  OutputLimits limits{1000, 100, 100, 100};
  auto out = guardOutput(resultOf({{"content", Json::array({block, block})}}), limits);
  expectBounded(out, limits);
  EXPECT_THAT(textAt(out, 0), HasSubstr("bytes of it were cut"));
  EXPECT_GT(out.report.textBytesCut, 5'990'000u);  // both blocks, as JSON, less what was shown
}

TEST(OutputGuardHostileTest, MetaAndExtraFieldsAreKeptWhenSmallAndCutWhenLarge) {
  Json small = {{"type", "text"},
                {"text", "hi"},
                {"_meta", {{"a", 1}}},
                {"annotations", {{"audience", {"user"}}}}};
  auto kept = guardOutput(resultOf({{"content", {small}}, {"_meta", {{"trace", "t"}}}}));
  EXPECT_FALSE(kept.report.changed());
  EXPECT_EQ(kept.result.content()[0], small);
  EXPECT_EQ(kept.result.raw["_meta"]["trace"], "t");

  std::string huge(2'000'000, 'm');
  Json block = {{"type", "text"}, {"text", "hi"}, {"_meta", {{"blob", huge}}}, {"x-extra", huge}};
  OutputLimits limits{1000, 1000, 1000, 4096};
  auto out = guardOutput(
      resultOf({{"content", {block, block}}, {"_meta", huge}, {"unknownField", {huge, huge}}}),
      limits);
  expectBounded(out, limits);
  EXPECT_GT(out.report.metaBytesCut, 7'000'000u);
  EXPECT_EQ(textAt(out, 0), "hi");
  EXPECT_THAT(allText(out), HasSubstr("more bytes cut]"));
  EXPECT_THAT(textAt(out, out.result.content().size() - 1),
              HasSubstr("bytes of _meta, annotations, names and other fields were cut"));
}

TEST(OutputGuardHostileTest, HugeIdentifiersAreCutWithAMarker) {
  std::string uri = "file:///" + std::string(100'000, 'u');
  Json link = {{"type", "resource_link"}, {"uri", uri}, {"name", std::string(5000, 'n')}};
  Json resource = {{"type", "resource"}, {"resource", {{"uri", uri}, {"text", "body"}}}};
  auto out = guardOutput(resultOf({{"content", {link, resource}}}));
  expectBounded(out, {});
  EXPECT_LT(out.result.content()[0]["uri"].get<std::string>().size(), 1100u);
  EXPECT_THAT(out.result.content()[0]["uri"].get<std::string>(), HasSubstr("more bytes cut]"));
  EXPECT_EQ(out.result.content()[1]["resource"]["text"], "body");
  EXPECT_GT(out.report.metaBytesCut, 200'000u);
}

TEST(OutputGuardHostileTest, TagCharactersAreTakenOutOfTextWithANote) {
  // Tag characters U+E0020–E007E are F3 A0 80 A0 – F3 A0 81 BE.
  std::string tags;
  for (char32_t c = 0xE0020; c <= 0xE007E; ++c) {
    tags += static_cast<char>(0xF0 | (c >> 18));
    tags += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    tags += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    tags += static_cast<char>(0x80 | (c & 0x3F));
  }
  Json blocks = {{{"type", "text"}, {"text", "visible" + tags + " text"}},
                 {{"type", "resource"}, {"resource", {{"uri", "file:///a"}, {"text", tags}}}}};
  auto out = guardOutput(resultOf({{"content", blocks}}));
  EXPECT_EQ(textAt(out, 0), "visible text");
  EXPECT_EQ(out.result.content()[1]["resource"]["text"], "");
  EXPECT_EQ(out.report.hiddenCharactersRemoved, 2u * 95u);
  EXPECT_THAT(textAt(out, 2), HasSubstr("190 invisible Unicode tag characters"));

  // The same in structuredContent and in _meta, which a model may read as well.
  auto structured = guardOutput(resultOf({{"content", Json::array()},
                                          {"structuredContent", {{"v", "a" + tags + "b"}}},
                                          {"_meta", {{"note", tags}}}}));
  EXPECT_EQ(structured.result.raw["structuredContent"]["v"], "ab");
  EXPECT_EQ(structured.result.raw["_meta"]["note"], "");
  EXPECT_EQ(structured.report.hiddenCharactersRemoved, 2u * 95u);
}

// U+E0001 LANGUAGE TAG, and a test for any tag character (F3 A0 80 xx or F3 A0 81 xx).
constexpr const char* kTag = "\xF3\xA0\x80\x81";
bool hasTagCharacter(const std::string& text) {
  for (size_t at = text.find("\xF3\xA0"); at != std::string::npos;
       at = text.find("\xF3\xA0", at + 1)) {
    if (at + 2 < text.size() && (text[at + 2] == '\x80' || text[at + 2] == '\x81')) return true;
  }
  return false;
}

// Found by tests/fuzz/output_guard_fuzz.cpp: a string of an extra field, cut to the meta budget,
// kept the tag characters before the cut.
TEST(OutputGuardHostileTest, TagCharactersAreTakenOutOfStringsThatAreCut) {
  std::string input = R"({"content":[{"type":"image","data":"","text":"xxxxxxxxxxx)" +
                      std::string(kTag) + R"(xxxJQDQ","mimeType":""}]})";
  OutputLimits limits{31, 32, 64, 31};
  auto out = guardOutput(resultOf(Json::parse(input)), limits);
  ASSERT_FALSE(out.result.content().empty());
  EXPECT_THAT(textAt(out, 0), StartsWith("xxxxxxxxxxxxxxJQD…[kaja: 1 more bytes cut]"));
  EXPECT_FALSE(hasTagCharacter(allText(out)));
  EXPECT_EQ(out.report.hiddenCharactersRemoved, 1u);

  // The same in structuredContent and _meta strings that are cut, and in text of tag
  // characters only, cut in the middle of one.
  std::string tags;
  for (int i = 0; i < 50; ++i) tags += kTag;
  Json raw = {{"content", {{{"type", "text"}, {"text", tags}}}},
              {"structuredContent", {{"v", tags + std::string(500, 's')}}},
              {"_meta", {{"m", "a" + tags + std::string(500, 'm')}}}};
  for (size_t limit : {0, 1, 2, 5, 6, 7, 30, 199, 201, 260}) {
    OutputLimits small{limit, limit, limit, limit};
    auto cut = guardOutput(resultOf(raw), small);
    EXPECT_FALSE(hasTagCharacter(allText(cut))) << limit;
    EXPECT_NO_THROW(cut.result.raw.dump()) << limit;
  }
}

// Found by tests/fuzz/output_guard_fuzz.cpp: an empty string of an extra field whose quotes no
// longer fit the meta budget became "…[kaja: 0 more bytes cut]", counted as no byte cut, so the
// result changed while the report said nothing changed.
TEST(OutputGuardHostileTest, AnEmptyStringThatDoesNotFitIsLeftOutAndCounted) {
  std::string input =
      R"({"content":[{"type":"image","data":"","jWateTyptatext":"","mimeType":"image",)"
      R"("mimeTe":""}]})";
  Json raw = Json::parse(input);
  auto out = guardOutput(resultOf(raw), OutputLimits{31, 32, 64, 31});
  ASSERT_EQ(out.result.content().size(), 2u);
  const Json& image = out.result.content()[0];
  EXPECT_EQ(image["jWateTyptatext"], "");
  EXPECT_FALSE(image.contains("mimeTe"));
  EXPECT_THAT(allText(out), Not(HasSubstr("0 more bytes cut")));
  EXPECT_EQ(out.report.metaBytesCut, 12u);  // "mimeTe":"" as compact JSON, with its comma
  EXPECT_TRUE(out.report.changed());
  EXPECT_THAT(textAt(out, 1), HasSubstr("12 bytes of _meta, annotations, names and other fields"));
  // With room for it the same result passes unchanged.
  auto whole = guardOutput(resultOf(raw), OutputLimits{31, 32, 64, 32});
  EXPECT_FALSE(whole.report.changed());
  EXPECT_EQ(whole.result.raw, raw);

  // An empty structuredContent that does not fit is left out with a note, not replaced.
  auto structured = guardOutput(resultOf({{"content", Json::array()}, {"structuredContent", ""}}),
                                OutputLimits{0, 0, 1, 0});
  EXPECT_FALSE(structured.result.raw.contains("structuredContent"));
  EXPECT_TRUE(structured.report.structuredDropped);
  EXPECT_TRUE(structured.report.changed());
}

// A key is a string a model reads too; once its tag characters are gone it must not replace
// a field the guard set, so a block cannot change its own type or content this way.
TEST(OutputGuardHostileTest, TagCharactersAreTakenOutOfKeysAndIdentifiers) {
  Json text = {{"type", "text"},
               {"text", "hi"},
               {std::string("type") + kTag, "image"},
               {std::string("no") + kTag + "te", 1}};
  Json link = {{"type", "resource_link"},
               {"uri", std::string("file:///a") + kTag + "b"},
               {std::string("name") + kTag, 7}};
  Json image = {{"type", "image"},
                {"data", std::string("QU") + kTag + "JD"},
                {"mimeType", std::string("image/") + kTag + "png"}};
  Json bad = {{"type", std::string("te") + kTag + "xt"}, {"text", std::string("b") + kTag}};
  Json raw = {{"content", {text, link, image, bad}}, {std::string("content") + kTag, "junk"}};
  auto out = guardOutput(resultOf(raw));
  EXPECT_FALSE(hasTagCharacter(allText(out)));
  ASSERT_TRUE(mcp::ToolResult::fromJson(Json(out.result.raw)).has_value());
  const Json& content = out.result.content();
  EXPECT_EQ(content[0]["type"], "text");
  EXPECT_EQ(content[0]["text"], "hi");
  EXPECT_FALSE(content[0].contains("note"));  // a key with a hidden character is left out
  EXPECT_EQ(content[1]["uri"], "file:///ab");
  EXPECT_FALSE(content[1].contains("name"));
  EXPECT_EQ(content[2]["data"], "QUJD");
  EXPECT_EQ(content[2]["mimeType"], "image/png");
  EXPECT_THAT(content[3]["text"].get<std::string>(), HasSubstr(R"("text":"b")"));
  EXPECT_TRUE(out.result.raw["content"].is_array());
  EXPECT_EQ(out.report.hiddenCharactersRemoved, 5u);
  EXPECT_GT(out.report.metaBytesCut, 0u);
}

// Found by the output_guard fuzz target after 8,453,528 executions: "_me" + a tag character +
// "ta" lost its tag character and became a `_meta` holding an array, so the guarded result
// was no valid tool result. A key that cleaning changes is now left out, wherever it is.
TEST(OutputGuardHostileTest, AKeyWithAHiddenCharacterCannotBecomeAFieldOfTheProtocol) {
  const Json raw = {{std::string("_me") + kTag + "ta", Json::array()},
                    {std::string("result") + kTag + "Type", 5},
                    {"content",
                     {{{"type", "text"},
                       {"text", "hi"},
                       {std::string("_me") + kTag + "ta", "not an object"},
                       {std::string("annot") + kTag + "ations", 3}}}},
                    {"structuredContent", {{std::string("ok") + kTag, true}, {"kept", 1}}}};
  auto out = guardOutput(resultOf(raw));
  ASSERT_TRUE(mcp::ToolResult::fromJson(Json(out.result.raw)).has_value()) << out.result.raw.dump();
  EXPECT_FALSE(out.result.raw.contains("_meta"));
  EXPECT_FALSE(out.result.raw.contains("resultType"));
  EXPECT_FALSE(out.result.content()[0].contains("_meta"));
  EXPECT_FALSE(out.result.content()[0].contains("annotations"));
  EXPECT_EQ(out.result.raw["structuredContent"], Json({{"kept", 1}}));
  EXPECT_TRUE(out.report.changed());
}

TEST(OutputGuardHostileTest, IllFormedUtf8BecomesReplacementCharacters) {
  Json raw = Json::object();
  raw["content"] = Json::array({{{"type", "text"}, {"text", std::string("ok \xFF\xC3 end")}}});
  raw["structuredContent"] = {{"v", std::string("\xED\xA0\x80")}};
  auto out = guardOutput(resultOf(raw));
  EXPECT_EQ(textAt(out, 0), "ok \uFFFD\uFFFD end");
  EXPECT_NO_THROW(out.result.raw.dump());
}

// server-filesystem's read_text_file sends the text twice: in content and structuredContent.
TEST(OutputGuardHostileTest, ATwoMegabyteFileReadIsCutInBothPlacesQuickly) {
  std::string file(2'200'000, 'f');
  Json raw = {{"content", {{{"type", "text"}, {"text", file}}}},
              {"structuredContent", {{"content", file}}}};
  mcp::ToolResult result = resultOf(std::move(raw));
  GuardedOutput out;
  double cost = guardCostInCopies(result, out);
  EXPECT_LT(cost, 0.5) << "the guard took " << cost << " times as long as a copy of the result";
  expectBounded(out, {});
  EXPECT_EQ(out.report.textBytesCut, 2'200'000u - 32768u);
  EXPECT_THAT(textAt(out, 0), HasSubstr("[kaja: output cut here; 2167232 more bytes"));
  std::string structured = out.result.raw["structuredContent"]["content"];
  EXPECT_THAT(structured, HasSubstr("more bytes cut]"));
  EXPECT_LE(structured.size(), 32768u + 64u);
  EXPECT_GT(out.report.structuredBytesCut, 2'100'000u);
}

// The texts are copied whole by a plain copy of the result; the guard reads no further into each
// than it keeps, so it costs a small part of one copy in every build (0.01 here, also under ASan).
TEST(OutputGuardHostileTest, SixtyMegabytesOfTextCostTheGuardASmallPartOfACopy) {
  std::string text(60'000'000, 't');
  Json raw = {{"content", {{{"type", "text"}, {"text", text}}, {{"type", "text"}, {"text", text}}}},
              {"structuredContent", {{"content", text}}}};
  mcp::ToolResult result = resultOf(std::move(raw));
  GuardedOutput out;
  double cost = guardCostInCopies(result, out);
  EXPECT_LT(cost, 0.25) << "the guard took " << cost << " times as long as a copy of the result";
  expectBounded(out, {});
  EXPECT_EQ(out.report.textBytesCut, 120'000'000u - 32768u);
  EXPECT_GT(out.report.structuredBytesCut, 59'000'000u);
}

// 200,000 rows of structured content are cut to the limit and what was cut is counted. Not timed:
// walking small nodes costs about what writing them costs, in a ratio that differs by build (0.3
// to 0.5 of a dump here, 3.5 to 5 under ASan), so no bound tells a sound guard from a slow one.
TEST(OutputGuardHostileTest, TwoHundredThousandRowsAreCutToTheLimitAndCounted) {
  Json rows = Json::array();
  for (int i = 0; i < 200'000; ++i) rows.push_back({{"k", i}, {"v", "value"}});
  const size_t written = Json{{"rows", rows}}.dump().size();
  auto out = guardOutput(
      resultOf({{"content", Json::array()}, {"structuredContent", {{"rows", std::move(rows)}}}}));
  expectBounded(out, {});
  EXPECT_GT(out.report.structuredBytesCut, written - 2 * 32768u);
  EXPECT_LE(out.report.structuredBytesCut, written);
}

TEST(OutputGuardHostileTest, DeepStructuresAreCutAtABoundedDepth) {
  Json deep = "bottom";
  for (int i = 0; i < 500; ++i) deep = Json::array({deep});
  auto out = guardOutput(
      resultOf({{"content", Json::array()}, {"structuredContent", deep}, {"_meta", deep}}));
  EXPECT_THAT(out.result.raw["structuredContent"].dump(), HasSubstr("nested more than 64 levels"));
  expectBounded(out, {});
}

// Random results built from the pieces a hostile server has: whatever they hold, the guarded
// result is strict JSON within the limits, and any change is reported.
// Found by the output_guard fuzz target after 9,577,791 executions: each block of an unknown
// type got a note of its own, so a result of many small such blocks grew past every limit.
TEST(OutputGuardHostileTest, ManyUnknownBlocksCannotGrowTheResultPastItsLimits) {
  Json content = Json::array();
  for (int i = 0; i < 100'000; ++i) content.push_back({{"type", "imag" + std::to_string(i)}});
  const OutputLimits limits;
  auto out = guardOutput(resultOf({{"content", content}}), limits);
  expectBounded(out, limits);
  EXPECT_GT(out.report.blocksLeftOut, 90'000U);
  EXPECT_GT(out.report.blocksReplaced, 10U);  // the first ones are still shown as JSON text
  EXPECT_TRUE(out.report.changed());
  EXPECT_THAT(textAt(out, 0), HasSubstr("\"imag0\""));
  EXPECT_THAT(allText(out), HasSubstr(std::to_string(out.report.blocksLeftOut) +
                                      " content blocks were left out"));
}

TEST(OutputGuardHostileTest, FloodsOfTinyBlocksOfEveryKindStayWithinTheLimits) {
  const OutputLimits limits{1024, 1024, 1024, 1024};
  const std::string longType(1000, 't');
  const std::vector<Json> tiny = {
      {{"type", "text"}, {"text", ""}},
      {{"type", "image"}, {"data", ""}, {"mimeType", longType}},
      {{"type", "image"}, {"data", std::string(2000, 'A')}, {"mimeType", longType}},  // replaced
      {{"type", "resource_link"}, {"uri", "file:///" + longType}, {"name", longType}},
      {{"type", "resource"}, {"resource", {{"uri", "file:///" + longType}, {"text", ""}}}},
      {{"type", "resource"}, {"resource", {{"uri", "file:///x"}, {"blob", ""}}}},
      Json(7)};
  for (const Json& block : tiny) {
    Json content = Json::array();
    for (int i = 0; i < 50'000; ++i) content.push_back(block);
    auto out = guardOutput(resultOf({{"content", content}}), limits);
    expectBounded(out, limits);
    EXPECT_GT(out.report.blocksLeftOut, 0U) << block.dump().substr(0, 80);
    // The blocks shown come first and in order: what is left out is the tail.
    ASSERT_FALSE(out.result.content().empty());
  }
}

TEST(OutputGuardHostileTest, AResultOfSomeHundredsOfSmallBlocksPassesWhole) {
  Json content = Json::array();
  for (int i = 0; i < 300; ++i) {
    content.push_back({{"type", "text"}, {"text", "line " + std::to_string(i)}});
  }
  content.push_back({{"type", "resource_link"}, {"uri", "file:///tmp/a.txt"}, {"name", "a.txt"}});
  const Json raw = {{"content", content}};
  auto out = guardOutput(resultOf(raw), OutputLimits{});
  EXPECT_FALSE(out.report.changed());
  EXPECT_EQ(out.result.raw, raw);
}

TEST(OutputGuardHostileTest, RandomHostileResultsStayWithinTheLimits) {
  std::mt19937 random(9);
  std::vector<Json> pieces = {Json(std::string(70'000, 'a')),
                              Json(std::string("\xFF\xFE bad")),
                              Json(5),
                              Json(nullptr),
                              Json::array({1, "x"}),
                              Json::object({{"_meta", std::string(20'000, 'm')}}),
                              Json("TEXT"),
                              Json("text"),
                              Json("image"),
                              Json("resource"),
                              Json("resource_link")};
  OutputLimits limits{4096, 8192, 4096, 2048};
  for (int round = 0; round < 300; ++round) {
    Json content = Json::array();
    int blocks = static_cast<int>(random() % 6);
    for (int b = 0; b < blocks; ++b) {
      Json block = Json::object();
      for (const char* key :
           {"type", "text", "data", "mimeType", "uri", "resource", "_meta", "x"}) {
        if (random() % 2 == 0) block[key] = pieces[random() % pieces.size()];
      }
      content.push_back(random() % 8 == 0 ? pieces[random() % pieces.size()] : block);
    }
    Json raw = {{"content", content}};
    if (random() % 2 == 0) raw["structuredContent"] = pieces[random() % pieces.size()];
    if (random() % 2 == 0) raw["_meta"] = pieces[random() % pieces.size()];
    if (random() % 3 == 0) raw["isError"] = pieces[random() % pieces.size()];
    auto out = guardOutput(resultOf(raw), limits);
    expectBounded(out, limits);
    // Ill-formed UTF-8 shows itself as U+FFFD; any other difference must be reported.
    std::string input = raw.dump(-1, ' ', false, Json::error_handler_t::replace);
    bool wellFormed = input.find("\uFFFD") == std::string::npos;
    if (wellFormed && out.result.raw.dump() != input) {
      EXPECT_TRUE(out.report.changed())
          << raw.dump(-1, ' ', false, Json::error_handler_t::replace).substr(0, 300);
    }
  }
}

}  // namespace
}  // namespace kaja::core::policy
