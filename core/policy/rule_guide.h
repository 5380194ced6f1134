#pragma once

#include <span>
#include <string_view>

namespace kaja::core::policy {

/// What one refusal rule (a `rule::k…` value) means to a user, and what to do about it.
struct RuleGuide {
  std::string_view rule;  ///< exactly as refusals and audit rows name it ("K15 read-only folder")
  std::string_view meaning;  ///< when kaja refuses by it
  std::string_view remedy;   ///< how to get the call through, when that is the user's choice
};

/// Returns one entry per rule kaja refuses by, in the order `kaja help rules` prints them.
std::span<const RuleGuide> ruleGuides();

/// Returns the entry whose rule is `rule` or whose code is `rule` ("K15" matches every K15
/// rule: the first is returned), or null.
const RuleGuide* findRuleGuide(std::string_view rule);

}  // namespace kaja::core::policy
