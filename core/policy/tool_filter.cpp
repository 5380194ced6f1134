#include "core/policy/tool_filter.h"

#include <algorithm>

#include "core/policy/approval.h"

namespace kaja::core::policy {
namespace {

bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string quoted(const std::string& text) { return "\"" + text + "\""; }

}  // namespace

bool allFoldersReadOnly(const PersonaEntry& entry) {
  return !entry.roots.empty() && std::all_of(entry.roots.begin(), entry.roots.end(),
                                             [](const PersonaRoot& root) { return root.readOnly; });
}

FilteredTools filterTools(const Ability& ability, const PersonaEntry* entry,
                          const std::vector<mcp::Tool>& tools, const ScanLimits& limits) {
  FilteredTools result;
  bool readOnlyPersona = entry != nullptr && allFoldersReadOnly(*entry);
  for (const auto& tool : tools) {
    std::string name = quoted(tool.name);
    if (ability.tools && !listed(*ability.tools, tool.name)) {
      result.dropped.push_back(
          {tool.name,
           {std::string(rule::kAbilityTools),
            "Tool " + name + " is not in the tools list of " + ability.name + "'s mcp.toml."},
           {}});
      continue;
    }
    if (entry != nullptr && entry->tools && !listed(*entry->tools, tool.name)) {
      result.dropped.push_back(
          {tool.name,
           {std::string(rule::kPersonaTools),
            "Tool " + name + " is not in the tools the persona allows for " + ability.name + "."},
           {}});
      continue;
    }
    if (readOnlyPersona && isWritingTool(tool, ability)) {
      result.dropped.push_back(
          {tool.name,
           {std::string(rule::kReadOnlyPersona),
            "Tool " + name + " can write, and every folder the persona gives " + ability.name +
                " is read-only."},
           {}});
      continue;
    }
    auto findings = scanTool(tool, limits);
    if (!findings.empty()) {
      result.dropped.push_back({tool.name,
                                {std::string(rule::kPromptInjection),
                                 "Tool " + name + " from " + ability.name +
                                     " was not registered because its text looks like a prompt "
                                     "injection (" +
                                     describeFindings(findings) + ")."},
                                std::move(findings)});
      continue;
    }
    result.offered.push_back(tool);
  }
  return result;
}

}  // namespace kaja::core::policy
