// `kaja tools` and `kaja tools ABILITY [TOOL]` end to end: against the real server-everything
// for the listing and the readable schema view, and against tests/servers/
// scripted_tools_server.mjs, which lists exactly the tools a test writes, for hostile schemas
// (nested 10,000 deep, 100,000 properties, $ref loops, escape sequences) and for outputSchema
// and annotations passed on as sent.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

std::string trimmed(std::string text) {
  while (!text.empty() && text.back() == ' ') text.pop_back();
  size_t start = text.find_first_not_of(' ');
  return start == std::string::npos ? "" : text.substr(start);
}

// The column of `line` from `from` up to `to` (npos: the rest), without padding.
std::string column(const std::string& line, size_t from, size_t to) {
  if (from >= line.size()) return "";
  return trimmed(line.substr(from, to == std::string::npos ? to : to - from));
}

// The TOOL cells of the listing, each joined from the lines it wraps over.
std::vector<std::string> toolCells(const std::string& out) {
  std::vector<std::string> lines = linesOf(out);
  std::vector<std::string> cells;
  if (lines.empty()) return cells;
  size_t read = lines[0].find("READ");
  for (size_t i = 1; i < lines.size() && !lines[i].empty(); ++i) {
    std::string cell = column(lines[i], 0, read);
    if (!column(lines[i], read, read + 1).empty()) {
      cells.push_back(cell);
    } else if (!cells.empty()) {
      cells.back() += cell;
    }
  }
  return cells;
}

struct Argument {
  std::string name, type, required, description;
};

// The rows of the first ARGUMENT table in `out`, each joined from the lines it wraps over:
// a row starts where REQUIRED has a value.
std::vector<Argument> argumentRows(const std::string& out) {
  std::vector<std::string> lines = linesOf(out);
  auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
    return line.starts_with("  ARGUMENT");
  });
  std::vector<Argument> rows;
  if (header == lines.end()) return rows;
  size_t type = header->find("TYPE");
  size_t required = header->find("REQUIRED");
  size_t description = header->find("DESCRIPTION");
  for (auto line = header + 1; line != lines.end() && !line->empty(); ++line) {
    Argument cells{column(*line, 0, type), column(*line, type, required),
                   column(*line, required, description), column(*line, description, -1)};
    if (!cells.required.empty()) {
      rows.push_back(cells);
      continue;
    }
    if (rows.empty()) break;
    rows.back().name += cells.name;
    rows.back().type += cells.type;
    if (!cells.description.empty()) rows.back().description += " " + cells.description;
  }
  return rows;
}

const Argument* findArgument(const std::vector<Argument>& rows, const std::string& name) {
  auto found =
      std::find_if(rows.begin(), rows.end(), [&](const Argument& row) { return row.name == name; });
  return found == rows.end() ? nullptr : &*found;
}

class ToolsCliTest : public ::testing::Test {
 protected:
  ToolsCliTest() {
    home_ = root_.path() + "/home";
    root_.write("home/.keep", "");
    root_.write("market/abilities/everything/mcp.toml",
                "command = \"node\"\nargs = [\"" + std::string(kaja::test::sourceDir()) +
                    "/tests/npm/node_modules/@modelcontextprotocol/server-everything/dist/"
                    "index.js\", \"stdio\"]\n");
    root_.write("market/abilities/spare/mcp.toml", "command = \"/bin/cat\"\n");
    root_.write("market/personas/default.toml", "abilities = [\"everything\"]\n");
    root_.write("market/personas/narrow.toml",
                "abilities = [{ name = \"everything\", tools = [\"echo\", \"get-sum\"] }]\n");
  }

  // Makes ability `name`, whose server lists the tools in `toolsText` byte for byte, and a
  // persona of the same name holding it alone.
  void scripted(const std::string& name, const std::string& toolsText) {
    std::string file = root_.write("tools/" + name + ".json", toolsText);
    root_.write("market/abilities/" + name + "/mcp.toml",
                "command = \"node\"\nargs = [\"" + std::string(kaja::test::sourceDir()) +
                    "/tests/servers/scripted_tools_server.mjs\", \"" + file + "\"]\n");
    root_.write("market/personas/" + name + ".toml", "abilities = [\"" + name + "\"]\n");
  }

  testing::CommandResult kaja(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    testing::RunOptions options;
    options.timeoutSeconds = 90;
    return testing::runCommandWith(
        argv,
        {"HOME=" + home_, "XDG_CONFIG_HOME=" + root_.path() + "/config",
         "XDG_DATA_HOME=" + root_.path() + "/data", "PATH=/usr/local/bin:/usr/bin:/bin",
         "KAJA_SHIPPED_MARKETPLACE=" + root_.path() + "/market", "NO_COLOR=1"},
        options);
  }

  testing::TempDir root_;
  std::string home_;
};

TEST_F(ToolsCliTest, ListingWrapsLongNamesAndNeverCutsThem) {
  auto listed = kaja({"tools", "--json"});
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  json object = json::parse(listed.out);
  std::vector<std::string> names;
  for (const auto& tool : object["tools"]) names.push_back(tool["name"]);
  ASSERT_THAT(names, Contains("mcp__everything__trigger-long-running-operation"));
  ASSERT_THAT(names, Contains("mcp__everything__get-annotated-message"));

  auto table = kaja({"tools"});
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_EQ(toolCells(table.out), names) << table.out;
  // 47 columns, wider than the column: broken after a dash, on two lines.
  EXPECT_THAT(table.out, HasSubstr("\nmcp__everything__trigger-long-running-  "));
  EXPECT_THAT(table.out, HasSubstr("\noperation  "));
  for (const auto& line : linesOf(table.out)) {
    EXPECT_LE(line.size(), 100U) << line;
  }
}

TEST_F(ToolsCliTest, InspectShowsEachArgumentWithItsTypeAndWhetherItIsRequired) {
  auto echo = kaja({"tools", "everything", "echo"});
  ASSERT_EQ(echo.exitCode, 0) << echo.err;
  EXPECT_THAT(echo.out, ::testing::StartsWith("mcp__everything__echo\n"));
  EXPECT_THAT(echo.out, HasSubstr("  title        Echo Tool\n"));
  EXPECT_THAT(echo.out, HasSubstr("  read-only    yes\n"));
  EXPECT_THAT(echo.out, HasSubstr("readOnlyHint true, destructiveHint false"));
  std::vector<Argument> rows = argumentRows(echo.out);
  ASSERT_EQ(rows.size(), 1U) << echo.out;
  EXPECT_EQ(rows[0].name, "message");
  EXPECT_EQ(rows[0].type, "string");
  EXPECT_EQ(rows[0].required, "yes");
  EXPECT_EQ(rows[0].description, "Message to echo");

  // The mcp__ name finds the same tool.
  auto byFullName = kaja({"tools", "everything", "mcp__everything__echo"});
  EXPECT_EQ(byFullName.exitCode, 0) << byFullName.err;
  EXPECT_EQ(byFullName.out, echo.out);

  auto annotated = kaja({"tools", "everything", "get-annotated-message"});
  ASSERT_EQ(annotated.exitCode, 0) << annotated.err;
  rows = argumentRows(annotated.out);
  const Argument* type = findArgument(rows, "messageType");
  ASSERT_NE(type, nullptr) << annotated.out;
  EXPECT_EQ(type->type, "string: error|success|debug");
  EXPECT_EQ(type->required, "yes");
  const Argument* image = findArgument(rows, "includeImage");
  ASSERT_NE(image, nullptr) << annotated.out;
  EXPECT_EQ(image->type, "boolean");
  EXPECT_EQ(image->required, "no");
  EXPECT_THAT(image->description, EndsWith("(default false)"));
}

TEST_F(ToolsCliTest, InspectOfAnAbilityShowsEveryToolItOffers) {
  auto listed = kaja({"tools", "everything", "--json"});
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  json object = json::parse(listed.out);
  EXPECT_EQ(object["ability"], "everything");
  std::vector<std::string> names;
  for (const auto& tool : object["tools"]) names.push_back(tool["name"]);
  ASSERT_GT(names.size(), 5U);

  auto shown = kaja({"tools", "everything"});
  ASSERT_EQ(shown.exitCode, 0) << shown.err;
  std::vector<std::string> headings;
  for (const auto& line : linesOf(shown.out)) {
    if (!line.empty() && line[0] != ' ') headings.push_back(line);
  }
  EXPECT_EQ(headings, names);
}

TEST_F(ToolsCliTest, UnknownAbilityOrToolIsAUsageErrorThatSuggestsTheNearest) {
  auto ability = kaja({"tools", "everythng"});
  EXPECT_EQ(ability.exitCode, 2);
  EXPECT_EQ(ability.err,
            "kaja: error: persona \"default\" has no ability \"everythng\"; did you mean "
            "\"everything\"?\n");
  EXPECT_EQ(ability.out, "");

  auto far = kaja({"tools", "zzzzzzzzzz"});
  EXPECT_EQ(far.exitCode, 2);
  EXPECT_THAT(far.err, HasSubstr("has no ability \"zzzzzzzzzz\""));
  EXPECT_THAT(far.err, EndsWith(".\n"));

  // Installed, but not in this persona: the command that adds it.
  auto spare = kaja({"tools", "spare"});
  EXPECT_EQ(spare.exitCode, 2);
  EXPECT_EQ(spare.err,
            "kaja: error: persona \"default\" has no ability \"spare\"; `kaja persona add "
            "default spare` adds it.\n");

  auto tool = kaja({"tools", "everything", "ech"});
  EXPECT_EQ(tool.exitCode, 2);
  EXPECT_EQ(tool.err,
            "kaja: error: ability \"everything\" has no tool \"ech\"; did you mean \"echo\"?\n");

  auto farTool = kaja({"tools", "everything", "zzzzzzzzzz"});
  EXPECT_EQ(farTool.exitCode, 2);
  EXPECT_THAT(farTool.err, EndsWith(".\n"));

  auto extra = kaja({"tools", "everything", "echo", "more"});
  EXPECT_EQ(extra.exitCode, 2);
  EXPECT_THAT(extra.err, EndsWith(".\n"));
}

TEST_F(ToolsCliTest, AToolARuleLeftOutIsNamedWithItsRule) {
  auto dropped = kaja({"tools", "--persona", "narrow", "everything", "get-env"});
  EXPECT_EQ(dropped.exitCode, 3);
  EXPECT_THAT(dropped.err, HasSubstr("tool \"get-env\" of \"everything\" is left out of persona "
                                     "\"narrow\" by rule K13 persona tools"));
  EXPECT_THAT(dropped.err, HasSubstr("`kaja help rules K13` says more."));
  EXPECT_THAT(dropped.err, Not(HasSubstr("has no tool")));
  EXPECT_THAT(dropped.err, EndsWith(".\n"));

  auto ability = kaja({"tools", "--persona", "narrow", "everything", "--json"});
  ASSERT_EQ(ability.exitCode, 0) << ability.err;
  json object = json::parse(ability.out);
  ASSERT_EQ(object["tools"].size(), 2U);
  bool listsGetEnv = false;
  for (const auto& drop : object["dropped"]) listsGetEnv |= drop["tool"] == "get-env";
  EXPECT_TRUE(listsGetEnv);
}

TEST_F(ToolsCliTest, JsonCarriesOutputSchemaAndAnnotationsAsTheServerSentThem) {
  json tools = json::parse(R"([{
    "name": "weather",
    "title": "Weather",
    "description": "Returns the weather.",
    "inputSchema": {"type": "object", "required": ["city"], "additionalProperties": false,
      "properties": {
        "city": {"type": "string"},
        "unit": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "opts": {"type": "object", "properties": {"depth": {"type": "integer", "default": 2}}},
        "stops": {"type": "array", "items": {"type": "object", "required": ["name"],
                  "properties": {"name": {"type": "string", "description": "A stop."}}}}}},
    "outputSchema": {"type": "object",
                     "properties": {"temperature": {"type": "number", "minimum": -273.15},
                                    "tags": {"type": "array", "items": {"type": "string"}},
                                    "note": {"type": ["string", "null"], "default": "é ✓"}},
                     "required": ["temperature"], "x-vendor": {"depth": [1, [2, [3]]]}},
    "annotations": {"title": "Weather report", "readOnlyHint": true, "destructiveHint": false,
                    "idempotentHint": true, "openWorldHint": true, "x-cost": 0.25,
                    "x-nested": {"a": [null, 18446744073709551615, -9007199254740993]}}
  }])");
  scripted("weather", tools.dump(2));

  auto listed = kaja({"tools", "--persona", "weather", "--json"});
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  json sent = tools[0];
  json got = json::parse(listed.out)["tools"][0];
  EXPECT_EQ(got["name"], "mcp__weather__weather");
  EXPECT_EQ(got["title"], "Weather");
  EXPECT_EQ(got["inputSchema"], sent["inputSchema"]);
  EXPECT_EQ(got["outputSchema"], sent["outputSchema"]);
  EXPECT_EQ(got["annotations"], sent["annotations"]);

  auto one = kaja({"tools", "--persona", "weather", "--json", "weather", "weather"});
  ASSERT_EQ(one.exitCode, 0) << one.err;
  json single = json::parse(one.out)["tools"];
  ASSERT_EQ(single.size(), 1U);
  EXPECT_EQ(single[0], got);

  auto shown = kaja({"tools", "--persona", "weather", "weather", "weather"});
  ASSERT_EQ(shown.exitCode, 0) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr("title \"Weather report\", readOnlyHint true"));
  EXPECT_THAT(shown.out, HasSubstr("x-cost 0.25"));
  std::vector<Argument> rows = argumentRows(shown.out);
  std::vector<std::string> names;
  for (const auto& row : rows) names.push_back(row.name);
  // Required first; a nested object's arguments right after it.
  EXPECT_EQ(names, (std::vector<std::string>{"city", "opts", "opts.depth", "stops", "stops[].name",
                                             "unit"}));
  EXPECT_EQ(rows[2].type, "integer");
  EXPECT_EQ(rows[2].description, "(default 2)");
  EXPECT_EQ(rows[3].type, "array of object");
  EXPECT_EQ(rows[4].required, "yes");
  EXPECT_EQ(rows[4].description, "A stop.");
  EXPECT_EQ(rows[5].type, "string|null");
  EXPECT_THAT(shown.out, HasSubstr("returns      object {note: string|null, tags: array of "
                                   "string, temperature: number}"));
}

// A tool nested past the transport's limit fails its server's connection cleanly; one past
// the scanner's limit is left out by it (T7), and the view names that rule.
TEST_F(ToolsCliTest, DeepSchemasAreRefusedWithTheirReason) {
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += R"({"type":"object","properties":{"a":)";
  deep += R"({"type":"string"})";
  for (int i = 0; i < 10000; ++i) deep += "}}";
  scripted("abyss", R"([{"name":"dig","inputSchema":)" + deep + "}]");
  auto abyss = kaja({"tools", "--persona", "abyss", "abyss"});
  EXPECT_EQ(abyss.exitCode, 4) << abyss.err;
  EXPECT_THAT(abyss.err, HasSubstr("deeper than"));
  EXPECT_THAT(abyss.err, EndsWith("\n"));
  EXPECT_EQ(linesOf(abyss.err).size(), 1U) << abyss.err;

  std::string nested;
  for (int i = 0; i < 60; ++i) nested += R"({"type":"object","properties":{"a":)";
  nested += R"({"type":"string"})";
  for (int i = 0; i < 60; ++i) nested += "}}";
  scripted("nested", R"([{"name":"dig","inputSchema":)" + nested +
                         R"(},{"name":"ok","inputSchema":{"type":"object"}}])");
  auto cut = kaja({"tools", "--persona", "nested", "nested", "dig"});
  EXPECT_EQ(cut.exitCode, 3) << cut.err;
  EXPECT_THAT(cut.err, HasSubstr("by rule T7 prompt injection"));
  EXPECT_THAT(cut.err, HasSubstr("schema-too-deep"));
  auto ok = kaja({"tools", "--persona", "nested", "nested", "ok"});
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("No arguments."));
}

TEST_F(ToolsCliTest, HugeSchemasAndRefLoopsAreShownWithinBounds) {
  json properties = json::object();
  for (int i = 0; i < 100000; ++i) {
    properties["p" + std::to_string(100000 + i)] = {{"type", "string"}};
  }
  json wide = {{"name", "wide"}, {"inputSchema", {{"type", "object"}, {"properties", properties}}}};
  // A node whose two children are nodes again: 2^n arguments, and a loop without end.
  json loop = json::parse(R"({"name": "tree", "inputSchema": {
    "type": "object", "properties": {"root": {"$ref": "#/$defs/node"}},
    "$defs": {"node": {"type": "object", "properties": {
      "left": {"$ref": "#/$defs/node"}, "right": {"$ref": "#/$defs/node"}}}}}})");
  json chain = json::parse(R"({"name": "chain", "inputSchema": {
    "type": "object", "properties": {"start": {"$ref": "#/$defs/a"}},
    "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}})");
  json self = json::parse(R"({"name": "self", "inputSchema": {
    "type": "object", "properties": {"name": {"type": "string"}, "child": {"$ref": "#"}}}})");
  scripted("big", json::array({wide, loop, chain, self}).dump());

  auto shown = kaja({"tools", "--persona", "big", "big", "wide"});
  ASSERT_EQ(shown.exitCode, 0) << shown.err;
  EXPECT_EQ(argumentRows(shown.out).size(), 200U);
  EXPECT_THAT(shown.out, HasSubstr("Only the first 200 arguments are shown; --json prints the "
                                   "whole schema.\n"));
  auto full = kaja({"tools", "--persona", "big", "--json", "big", "wide"});
  ASSERT_EQ(full.exitCode, 0) << full.err;
  EXPECT_EQ(json::parse(full.out)["tools"][0]["inputSchema"]["properties"].size(), 100000U);

  auto tree = kaja({"tools", "--persona", "big", "big", "tree"});
  ASSERT_EQ(tree.exitCode, 0) << tree.err;
  std::vector<Argument> rows = argumentRows(tree.out);
  EXPECT_EQ(rows.size(), 31U) << tree.out;  // root, then 2 + 4 + 8 + 16 below it
  const Argument* deepest = findArgument(rows, "root.left.left.left.left");
  ASSERT_NE(deepest, nullptr) << tree.out;
  EXPECT_EQ(deepest->type, "object (not shown deeper)");
  EXPECT_THAT(tree.out, HasSubstr("nested more than 5 levels deep are not shown"));

  auto chained = kaja({"tools", "--persona", "big", "big", "chain"});
  ASSERT_EQ(chained.exitCode, 0) << chained.err;
  rows = argumentRows(chained.out);
  ASSERT_EQ(rows.size(), 1U) << chained.out;
  EXPECT_EQ(rows[0].type, "…");

  auto selfish = kaja({"tools", "--persona", "big", "big", "self"});
  ASSERT_EQ(selfish.exitCode, 0) << selfish.err;
  rows = argumentRows(selfish.out);
  EXPECT_NE(findArgument(rows, "child.child.child.child.name"), nullptr) << selfish.out;
}

TEST_F(ToolsCliTest, EscapeSequencesFromTheServerAreShownEscaped) {
  // JSON text, so that \u001b and \r reach the server as escapes and kaja as the bytes.
  scripted("odd", R"([
    {"name": "evil\u001b[31m", "description": "A name with escapes.",
     "inputSchema": {"type": "object"}},
    {"name": "carriage", "description": "Line one\rkaja: all checks passed\nline two",
     "inputSchema": {"type": "object", "properties": {
       "q": {"type": "string", "description": "over\rwrite", "default": "a\rb"}}}}
  ])");

  auto all = kaja({"tools", "--persona", "odd", "odd"});
  ASSERT_EQ(all.exitCode, 0) << all.err;
  EXPECT_EQ(all.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(all.err.find('\x1b'), std::string::npos);
  EXPECT_EQ(all.out.find('\r'), std::string::npos);
  EXPECT_THAT(all.err, HasSubstr("mcp__odd__evil\\u001b[31m left out (T7 prompt injection)"));
  std::vector<Argument> rows = argumentRows(all.out);
  const Argument* q = findArgument(rows, "q");
  ASSERT_NE(q, nullptr) << all.out;
  EXPECT_EQ(q->description, "over write (default a b)");

  auto named = kaja({"tools", "--persona", "odd", "odd", "evil\x1b[31m"});
  EXPECT_EQ(named.exitCode, 3);
  EXPECT_EQ(named.err.find('\x1b'), std::string::npos);
  EXPECT_THAT(named.err, HasSubstr("tool \"evil\\u001b[31m\" of \"odd\" is left out"));

  auto unknown = kaja({"tools", "--persona", "odd", "odd", "x\x1b]0;title\x07"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_EQ(unknown.err.find('\x1b'), std::string::npos);
  EXPECT_EQ(unknown.err.find('\x07'), std::string::npos);
}

}  // namespace
}  // namespace kaja::cli
