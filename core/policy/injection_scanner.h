#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/mcp/types.h"

namespace kaja::core::policy {

/// One prompt-injection match (T7).
struct InjectionFinding {
  /// e.g. "role-tag", "ignore-instructions", "secret-path"; "hidden-text" for text spelled in
  /// Unicode tag characters, "invisible-characters" for a name or key holding one
  std::string pattern;
  std::string field;  ///< where: "name", "description", "inputSchema.properties.path.description"
};

/// Bounds of a tool scan.
struct ScanLimits {
  size_t maxDescriptionChars = 4000;  ///< a longer description is itself a finding
  /// JSON nesting below inputSchema/outputSchema that is still read; anything deeper is a
  /// finding ("schema-too-deep"), because strings kaja did not read must not reach the model.
  /// 12 levels hold about five nested object schemas (properties → name → items → …).
  int maxSchemaDepth = 12;
};

/// Returns the findings in one model-facing string. `field` is copied into each finding.
/// `identifier` also reads camelCase as separate words (for names and property keys), and
/// makes any invisible character a finding (a name is sent back as written, so it cannot be
/// cleaned). A string holding invisible characters is read with them removed, and with each
/// run of them read as nothing or as a word break, whichever spells a pattern's words, so that
/// "ig\u200bnore\u200bprevious instructions" reads "ignore previous instructions"; text
/// hidden in tag characters is read too, and is a finding by itself. Every code point that is
/// no letter breaks words (see normalizeForScan for the folding); one or two in-word marks
/// ("ig.nore", "ig-nore"), a hyphen at a line break and a space between two single letters
/// ("i g n o r e") are also read as nothing (see WordLattice).
///
/// Deliberate exceptions, chosen to keep real tools usable: `.env.example`, `.env.sample`,
/// `.env.template` and `.env.dist` are templates without secrets and do not match, and
/// `process.env` (a property, not a file) does not match; a bare `.env`, `.env.local` or
/// `.env.production` does.
std::vector<InjectionFinding> scanText(std::string_view text, std::string_view field,
                                       bool identifier = false);

/// Returns the findings in every model-facing string of `tool`: name, title, description,
/// annotations.title, and every string value and object key inside inputSchema and
/// outputSchema (so descriptions, titles, enum values, defaults, examples and property
/// names), down to `limits.maxSchemaDepth`. An empty result means the tool may be offered.
std::vector<InjectionFinding> scanTool(const mcp::Tool& tool, const ScanLimits& limits = {});

/// Returns "pattern in field, pattern in field" for messages, fields escaped to one line.
std::string describeFindings(const std::vector<InjectionFinding>& findings);

}  // namespace kaja::core::policy
