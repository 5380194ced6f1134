#pragma once

#include <string>
#include <vector>

#include "core/gateway/tool_catalog.h"
#include "core/mcp/types.h"

namespace kaja::core::gateway {

/// The one tool a gateway in proxy mode offers (V1): search, describe, call and status over
/// the persona's tools, so that a persona with hundreds of tools costs a model a few
/// hundred tokens of schema instead of all of them.
inline constexpr const char* kProxyToolName = "mcp";

/// How many results a search returns unless asked, and at most.
inline constexpr std::size_t kDefaultSearchResults = 12;
inline constexpr std::size_t kMaxSearchResults = 40;

/// Returns the definition of the proxy tool.
mcp::Json proxyToolDefinition();

/// One search hit.
struct SearchHit {
  const CatalogTool* tool = nullptr;
  int score = 0;
};

/// Ranks `tools` for `query`: each word of the query scores in the tool's name (weight 12),
/// its ability (8) and its description (5), an exact word counting three times its
/// weight, a word's prefix twice and a substring once; the whole query equal to a tool's
/// name adds a bonus. Ties keep catalog order. At most `limit` hits with a score above 0;
/// an empty query lists the first `limit` tools.
std::vector<SearchHit> searchTools(const std::vector<CatalogTool>& tools, const std::string& query,
                                   std::size_t limit);

}  // namespace kaja::core::gateway
