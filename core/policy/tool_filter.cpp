#include "core/policy/tool_filter.h"

#include <algorithm>
#include <set>

#include "core/policy/approval.h"
#include "core/policy/text_normalizer.h"
#include "core/util/quote.h"

namespace kaja::core::policy {
namespace {

bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string quoted(const std::string& text) { return quoteForMessage(text); }

// Deeper than this a schema was already refused by the scan (ScanLimits::maxSchemaDepth).
constexpr int kMaxStripDepth = 64;

// True when `text` may hold an invisible character: a control other than whitespace, DEL, or
// any non-ASCII byte. Most tool text is plain ASCII and is then left alone.
bool mayHoldInvisible(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    auto byte = static_cast<unsigned char>(c);
    return byte >= 0x7F || (byte < 0x20 && (byte < '\t' || byte > '\r'));
  });
}

void strip(std::string& text) {
  if (mayHoldInvisible(text)) text = stripInvisible(text);
}

void stripStrings(mcp::Json& value, int depth) {
  if (value.is_string()) {
    strip(value.get_ref<std::string&>());
    return;
  }
  if (depth >= kMaxStripDepth || !value.is_structured()) return;
  for (auto& child : value) stripStrings(child, depth + 1);
}

// The tool as the model is shown it: every string but the name without invisible characters
// (a name or key holding one was refused by the scan, since it is sent back as written).
mcp::Tool offerable(const mcp::Tool& tool) {
  mcp::Tool out = tool;
  strip(out.title);
  strip(out.description);
  stripStrings(out.inputSchema, 0);
  if (out.raw.is_object()) {
    for (auto& [key, value] : out.raw.items()) {
      if (key != "name") stripStrings(value, 0);
    }
  }
  return out;
}

// Removes `names` from one JSON Schema's top-level `properties` and `required`.
void dropProperties(mcp::Json& schema, const std::vector<std::string>& names) {
  if (!schema.is_object()) return;
  if (auto properties = schema.find("properties");
      properties != schema.end() && properties->is_object()) {
    for (const auto& name : names) properties->erase(name);
  }
  if (auto required = schema.find("required"); required != schema.end() && required->is_array()) {
    mcp::Json kept = mcp::Json::array();
    for (const auto& item : *required) {
      if (!item.is_string() || !listed(names, item.get<std::string>())) kept.push_back(item);
    }
    *required = std::move(kept);
  }
}

}  // namespace

void hideLocalOnlyArgs(const Ability& ability, FilteredTools& tools) {
  if (ability.localOnlyArgs.empty()) return;
  for (auto& tool : tools.offered) {
    dropProperties(tool.inputSchema, ability.localOnlyArgs);
    if (tool.raw.is_object()) {
      if (auto schema = tool.raw.find("inputSchema"); schema != tool.raw.end()) {
        dropProperties(*schema, ability.localOnlyArgs);
      }
    }
  }
}

std::optional<Refusal> localOnlyArgRefusal(const Ability& ability, const std::string& tool,
                                           const mcp::Json& arguments) {
  if (!arguments.is_object()) return std::nullopt;
  for (const auto& name : ability.localOnlyArgs) {
    if (!arguments.contains(name)) continue;
    return Refusal{std::string(rule::kLocalOnlyArg),
                   "Argument " + quoted(name) + " of " + quoted(tool) + " is local-only (" +
                       ability.name +
                       "'s localOnlyArgs) and the server runs in the sandbox, where it would "
                       "act on the sandbox's files; call it without " +
                       quoted(name) + "."};
  }
  return std::nullopt;
}

bool allFoldersReadOnly(const PersonaEntry& entry) {
  return !entry.roots.empty() && std::all_of(entry.roots.begin(), entry.roots.end(),
                                             [](const PersonaRoot& root) { return root.readOnly; });
}

FilteredTools filterTools(const Ability& ability, const PersonaEntry* entry,
                          const std::vector<mcp::Tool>& tools, const ScanLimits& limits) {
  FilteredTools result;
  bool readOnlyPersona = entry != nullptr && allFoldersReadOnly(*entry);
  std::set<std::string> seen;
  for (const auto& tool : tools) {
    std::string name = quoted(tool.name);
    // A tool no client can name, or a second tool under a name already offered, which a
    // call could not tell from the first.
    if (tool.name.empty() || !seen.insert(tool.name).second) {
      result.dropped.push_back(
          {tool.name,
           {std::string(rule::kAbilityTools),
            tool.name.empty() ? ability.name + " lists a tool with an empty name, which no call "
                                               "can name; kaja leaves it out."
                              : ability.name + " lists two tools named " + name +
                                    "; kaja offers at most the first."},
           {}});
      continue;
    }
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
    result.offered.push_back(offerable(tool));
  }
  return result;
}

}  // namespace kaja::core::policy
