#include "core/gateway/proxy_tool.h"

#include <algorithm>
#include <cctype>

namespace kaja::core::gateway {
namespace {

constexpr int kNameWeight = 12;
constexpr int kAbilityWeight = 8;
constexpr int kDescriptionWeight = 5;
constexpr int kFullNameBonus = 100;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// Splits on anything that is not a letter or digit (so read_text_file gives three words).
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c >= 0x80) {
      word += static_cast<char>(std::tolower(c));
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

// How well `term` matches the words of one field: exact 3, prefix 2, substring 1, else 0.
int matchStrength(const std::vector<std::string>& field, const std::string& whole,
                  const std::string& term) {
  int best = 0;
  for (const auto& word : field) {
    if (word == term) return 3;
    if (word.starts_with(term)) best = std::max(best, 2);
  }
  if (best == 0 && whole.find(term) != std::string::npos) best = 1;
  return best;
}

}  // namespace

mcp::Json proxyToolDefinition() {
  return {
      {"name", kProxyToolName},
      {"description",
       "Finds and runs this persona's tools. operation=search with a query lists matching "
       "tools; describe with a name gives its full input schema; call with a name and "
       "arguments runs it; status shows each ability's state."},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"operation",
           {{"type", "string"},
            {"enum", mcp::Json::array({"search", "describe", "call", "status"})}}},
          {"query", {{"type", "string"}, {"description", "words to search for"}}},
          {"name", {{"type", "string"}, {"description", "a tool name from search"}}},
          {"arguments", {{"type", "object"}, {"description", "the tool's arguments, for call"}}},
          {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", kMaxSearchResults}}}}},
        {"required", mcp::Json::array({"operation"})}}}};
}

std::vector<SearchHit> searchTools(const std::vector<CatalogTool>& tools, const std::string& query,
                                   std::size_t limit) {
  limit = std::clamp<std::size_t>(limit, 1, kMaxSearchResults);
  const std::vector<std::string> terms = words(query);
  const std::string wholeQuery = lower(query);
  std::vector<SearchHit> hits;
  for (const auto& tool : tools) {
    const std::string name = lower(tool.name);
    const std::string ability = lower(tool.ability);
    const std::string description = lower(tool.tool.description);
    const auto nameWords = words(tool.name + " " + tool.tool.name);
    const auto abilityWords = words(tool.ability);
    const auto descriptionWords = words(tool.tool.description);
    int score = 0;
    for (const auto& term : terms) {
      score += kNameWeight * matchStrength(nameWords, name, term);
      score += kAbilityWeight * matchStrength(abilityWords, ability, term);
      score += kDescriptionWeight * matchStrength(descriptionWords, description, term);
    }
    if (!wholeQuery.empty() && (wholeQuery == name || wholeQuery == lower(tool.tool.name))) {
      score += kFullNameBonus;
    }
    if (score > 0 || terms.empty()) hits.push_back({&tool, score});
  }
  std::stable_sort(hits.begin(), hits.end(),
                   [](const SearchHit& a, const SearchHit& b) { return a.score > b.score; });
  if (hits.size() > limit) hits.resize(limit);
  return hits;
}

}  // namespace kaja::core::gateway
