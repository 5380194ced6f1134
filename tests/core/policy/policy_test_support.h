#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "core/mcp/types.h"
#include "tests/support/build_paths.h"

namespace kaja::testing {

/// Returns a Tool parsed from `json` (which must have a string "name").
inline core::mcp::Tool toolFromJson(const core::mcp::Json& json) {
  auto tool = core::mcp::Tool::fromJson(json);
  return tool ? *tool : core::mcp::Tool{};
}

/// Returns a tool with `name`, `description` and readOnlyHint `readOnly`.
inline core::mcp::Tool makeTool(const std::string& name, const std::string& description = "",
                                bool readOnly = false) {
  return toolFromJson(core::mcp::Json{{"name", name},
                                      {"description", description},
                                      {"inputSchema", {{"type", "object"}}},
                                      {"annotations", {{"readOnlyHint", readOnly}}}});
}

/// Returns the tools/list snapshot of a real server kept in tests/core/policy/data
/// (`server` is "server-filesystem", "server-everything", "server-sequential-thinking" or
/// "chrome-devtools").
inline std::vector<core::mcp::Tool> fixtureTools(const std::string& server) {
  std::ifstream in(std::string(kaja::test::sourceDir()) + "/tests/core/policy/data/" + server +
                   ".tools.json");
  auto json = core::mcp::Json::parse(in, nullptr, false);
  std::vector<core::mcp::Tool> tools;
  if (!json.is_array()) return tools;
  for (const auto& item : json) tools.push_back(toolFromJson(item));
  return tools;
}

}  // namespace kaja::testing
