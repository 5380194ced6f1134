#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/output.h"
#include "cli/persona_session.h"
#include "core/gateway/proxy_tool.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
namespace mcp = core::mcp;
namespace policy = core::policy;

/// A persona that offers more tools than this gets a warning (S5).
constexpr size_t kManyTools = 40;

struct ToolRow {
  std::string fullName;  ///< mcp__<ability>__<tool> (S2), shortened past 64 characters
  std::string ability;
  std::string tool;
  bool readOnly = false;
  size_t schemaChars = 0;
  std::string description;
  json inputSchema;  ///< as the model is shown it (after the filter step)
};

ToolRow makeRow(const core::gateway::CatalogTool& entry) {
  const mcp::Tool& tool = entry.tool;
  return {entry.name,
          entry.ability,
          tool.name,
          entry.readOnly,
          tool.name.size() + tool.description.size() +
              tool.inputSchema.dump(-1, ' ', false, json::error_handler_t::replace).size(),
          tool.description,
          tool.inputSchema};
}

// The first line of a description, on one line: third-party text never spans rows.
std::string firstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  std::replace_if(
      line.begin(), line.end(), [](char c) { return c == '\t' || c == '\r'; }, ' ');
  return line;
}

}  // namespace

int runTools(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--json"}, {"--persona"});
  if (!parsed) return reportError(parsed.error());
  if (!parsed->positional.empty()) {
    printError("tools takes no arguments (see kaja tools --help)");
    return kExitUsage;
  }
  auto session = PersonaSession::open(parsed->value("--persona"));
  if (!session) return reportError(session.error());

  core::gateway::ToolCatalog catalog = session->catalog(core::gateway::NameStyle::kCli);
  std::vector<ToolRow> rows;
  for (const auto& tool : catalog.list()) rows.push_back(makeRow(tool));
  json dropped = json::array();
  for (const auto& drop : catalog.dropped()) {
    dropped.push_back({{"ability", drop.ability},
                       {"tool", drop.tool.name},
                       {"rule", drop.tool.refusal.rule},
                       {"reason", drop.tool.refusal.message}});
  }
  json failed = json::array();
  for (const auto& report : session->reports) {
    if (report.error) {
      failed.push_back({{"ability", report.ability}, {"error", report.error->describe()}});
    }
  }

  size_t totalChars = 0;
  for (const auto& row : rows) totalChars += row.schemaChars;
  // What `kaja serve --proxy` costs instead: its one tool, whatever the persona holds.
  const size_t proxyChars = core::gateway::proxyToolDefinition()
                                .dump(-1, ' ', false, json::error_handler_t::replace)
                                .size();
  std::vector<std::string> warnings;
  if (rows.size() > kManyTools) {
    warnings.push_back("persona \"" + session->persona.name + "\" offers " +
                       std::to_string(rows.size()) + " tools; over " + std::to_string(kManyTools) +
                       " models choose worse and every request costs more.");
  }

  if (parsed->has("--json")) {
    json tools = json::array();
    for (const auto& row : rows) {
      tools.push_back({{"name", row.fullName},
                       {"ability", row.ability},
                       {"tool", row.tool},
                       {"readOnly", row.readOnly},
                       {"schemaChars", row.schemaChars},
                       {"schemaTokens", row.schemaChars / 4},
                       {"description", row.description},
                       {"inputSchema", row.inputSchema}});
    }
    json out = {{"persona", session->persona.name},
                {"tools", tools},
                {"schemaChars", totalChars},
                {"schemaTokens", totalChars / 4},
                {"proxySchemaTokens", proxyChars / 4},
                {"dropped", dropped},
                {"failed", failed},
                {"skipped", session->skipped},
                {"warnings", warnings}};
    std::printf("%s\n", jsonText(out).c_str());
    return kExitOk;
  }

  bool colourful = useColour(stdout);
  Table table({"TOOL", "READ", "SCHEMA", "DESCRIPTION"});
  for (const auto& row : rows) {
    table.addRow({oneLine(row.fullName), row.readOnly ? "ro" : "write",
                  std::to_string(row.schemaChars / 4) + " tok",
                  fitWidth(oneLine(firstLine(row.description)), 60)});
  }
  std::fputs(table.render(100, colourful).c_str(), stdout);
  std::printf("\npersona %s: %zu tools, schemas ~%zu tokens (~%zu with kaja serve --proxy)\n",
              oneLine(session->persona.name).c_str(), rows.size(), totalChars / 4, proxyChars / 4);
  for (const auto& item : dropped) {
    printWarning("mcp__" + item["ability"].get<std::string>() + "__" +
                 item["tool"].get<std::string>() + " left out (" + item["rule"].get<std::string>() +
                 "): " + item["reason"].get<std::string>());
  }
  for (const auto& item : failed) printWarning(item["error"].get<std::string>());
  for (const auto& text : session->skipped) printWarning(text);
  for (const auto& text : session->persona.warnings) printWarning(text);
  for (const auto& text : warnings) printWarning(text);
  return kExitOk;
}

}  // namespace kaja::cli
