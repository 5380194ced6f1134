#include "core/gateway/tool_catalog.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "core/policy/approval.h"
#include "core/policy/backup_tools.h"

namespace kaja::core::gateway {
namespace {

// The most names an unknown-tool error lists.
constexpr std::size_t kNamesInError = 12;

bool allowedInName(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.';
}

// FNV-1a: a stable hash, the same in every build, for shortened names.
std::string hashSuffix(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return std::string(hex, 8);
}

policy::CallOutcome fromBuiltIn(Result<mcp::ToolResult> result) {
  policy::CallOutcome outcome;
  if (result) {
    outcome.result = std::move(*result);
    return outcome;
  }
  if (result.error().code == ErrorCode::kRefused) {
    outcome.decision = policy::AuditDecision::kRefused;
    std::string rule = result.error().detail.starts_with("rule: ")
                           ? result.error().detail.substr(6)
                           : std::string(policy::rule::kApproval);
    outcome.refusal = policy::Refusal{rule, result.error().message};
    return outcome;
  }
  outcome.decision = policy::AuditDecision::kFailed;
  outcome.error = result.error();
  return outcome;
}

}  // namespace

std::string exposedName(NameStyle style, const std::string& ability, const std::string& tool) {
  std::string joined = style == NameStyle::kCli        ? "mcp__" + ability + "__" + tool
                       : style == NameStyle::kPrefixed ? ability + "__" + tool
                                                       : tool;
  std::string clean = joined;
  std::replace_if(
      clean.begin(), clean.end(), [](char c) { return !allowedInName(c); }, '_');
  // An ability or a tool named with "__" could make the same name as another ability's tool
  // ("a__b" + "c" and "a" + "b__c"), so such names carry a hash of the pair too: neither side
  // gets the plain name, so a server cannot take another's by naming its tool so.
  const bool ambiguous = style != NameStyle::kBare && (ability.find("__") != std::string::npos ||
                                                       tool.find("__") != std::string::npos);
  if (clean == joined && clean.size() <= kMaxToolNameLength && !clean.empty() && !ambiguous) {
    return clean;
  }
  const std::string suffix = "_" + hashSuffix(ambiguous ? ability + '\x1f' + tool : joined);
  if (clean.size() + suffix.size() > kMaxToolNameLength) {
    clean.resize(kMaxToolNameLength - suffix.size());
  }
  return clean + suffix;
}

ToolCatalog::ToolCatalog(CatalogSettings settings, std::vector<policy::CallScope> scopes)
    : settings_(std::move(settings)) {
  std::vector<PersonaEntry> entries;
  for (auto& scope : scopes) {
    entries.push_back(scope.entry);
    std::string name = scope.ability.name;
    abilities_.emplace_back(
        name, Entry{std::make_shared<const policy::CallScope>(std::move(scope)), nullptr});
  }
  backupTools_ = policy::offersBackupTools(entries);
}

const ToolCatalog::Entry* ToolCatalog::find(const std::string& ability) const {
  for (const auto& [name, entry] : abilities_) {
    if (name == ability) return &entry;
  }
  return nullptr;
}

const policy::CallScope* ToolCatalog::scope(const std::string& ability) const {
  const Entry* entry = find(ability);
  return entry == nullptr ? nullptr : entry->scope.get();
}

void ToolCatalog::setTools(const std::string& ability, const std::vector<mcp::Tool>& listed) {
  listed_.reset();
  for (auto& [name, entry] : abilities_) {
    if (name != ability) continue;
    auto filtered = policy::filterTools(entry.scope->ability, &entry.scope->entry, listed);
    if (entry.scope->sandboxed) policy::hideLocalOnlyArgs(entry.scope->ability, filtered);
    entry.filtered = std::make_shared<const policy::FilteredTools>(std::move(filtered));
  }
}

void ToolCatalog::clearTools(const std::string& ability) {
  listed_.reset();
  for (auto& [name, entry] : abilities_) {
    if (name == ability) entry.filtered = nullptr;
  }
}

const std::vector<CatalogTool>& ToolCatalog::list() const {
  if (listed_) return *listed_;
  std::vector<CatalogTool> tools;
  for (const auto& [name, entry] : abilities_) {
    if (!entry.filtered) continue;
    for (const auto& tool : entry.filtered->offered) {
      tools.push_back({exposedName(settings_.names, name, tool.name), name, tool,
                       !policy::isWritingTool(tool, entry.scope->ability)});
    }
  }
  if (backupTools_) {
    for (auto& tool : policy::backupTools()) {
      std::string name = exposedName(settings_.names, policy::kKajaAbility, tool.name);
      bool readOnly = tool.readOnlyHint();
      tools.push_back({std::move(name), policy::kKajaAbility, std::move(tool), readOnly});
    }
  }
  // Kept until the tools change: a call looks its name up here, not in a fresh list.
  routes_.clear();
  ambiguous_.clear();
  for (const auto& tool : tools) {
    auto [it, fresh] = routes_.emplace(tool.name, Route{tool.ability, tool.tool.name});
    if (!fresh && it->second.ability != tool.ability) {
      ambiguous_.try_emplace(tool.name, it->second.ability).first->second += " and " + tool.ability;
    }
  }
  // A name two abilities share is listed for neither: a list names each tool once, and a
  // call to it is refused (route) rather than guessed.
  std::erase_if(tools, [this](const CatalogTool& tool) { return ambiguous_.contains(tool.name); });
  listed_ = std::move(tools);
  return *listed_;
}

std::vector<DroppedEntry> ToolCatalog::dropped() const {
  std::vector<DroppedEntry> all;
  for (const auto& [name, entry] : abilities_) {
    if (!entry.filtered) continue;
    for (const auto& tool : entry.filtered->dropped) all.push_back({name, tool});
  }
  return all;
}

Result<void> ToolCatalog::checkNames() const {
  // Listing finds the names two abilities share.
  (void)list();
  if (ambiguous_.empty()) return {};
  const auto& [name, owners] = *ambiguous_.begin();
  return fail(ErrorCode::kUsage,
              "abilities " + owners + " both offer a tool named \"" + name + "\", so " +
                  (settings_.names == NameStyle::kBare
                       ? "bare names cannot tell them apart; use --names prefixed or a "
                         "persona that narrows one of them"
                       : "their names cannot tell them apart; rename one of the abilities"));
}

Result<ToolCatalog::Route> ToolCatalog::route(const std::string& name) const {
  const std::vector<CatalogTool>& tools = list();
  // Two abilities under one bare name (after a reload brought them together): neither is
  // guessed.
  if (auto twice = ambiguous_.find(name); twice != ambiguous_.end()) {
    return fail(ErrorCode::kNotFound, "abilities " + twice->second + " both offer \"" +
                                          mcp::clip(name, 80) +
                                          "\", so kaja calls neither; serve with --names prefixed");
  }
  if (auto found = routes_.find(name); found != routes_.end()) return found->second;
  std::string known;
  for (std::size_t i = 0; i < tools.size() && i < kNamesInError; ++i) {
    known += (i == 0 ? "" : ", ") + tools[i].name;
  }
  if (tools.size() > kNamesInError) {
    known += " and " + std::to_string(tools.size() - kNamesInError) + " more";
  }
  return fail(ErrorCode::kNotFound,
              "persona \"" + settings_.persona + "\" offers no tool named \"" +
                  mcp::clip(name, 80) + "\"; " +
                  (tools.empty() ? "it offers no tools at all" : "it offers " + known));
}

void ToolCatalog::call(const std::string& ability, const std::string& tool, mcp::Json arguments,
                       policy::ApprovalSession& approvals, policy::AuditLog* audit,
                       policy::AsyncCallFunction send,
                       std::function<void(policy::CallOutcome)> done) {
  if (ability == policy::kKajaAbility) {
    if (!backupTools_) {
      policy::CallOutcome outcome;
      outcome.decision = policy::AuditDecision::kRefused;
      outcome.refusal =
          policy::Refusal{std::string(policy::rule::kAbilityTools),
                          "persona \"" + settings_.persona +
                              "\" has no backed-up folder, so kaja serves it no tools"};
      done(std::move(outcome));
      return;
    }
    std::vector<PersonaEntry> entries;
    entries.reserve(abilities_.size());
    for (const auto& [name, entry] : abilities_) entries.push_back(entry.scope->entry);
    auto tools = std::make_shared<policy::BackupTools>(
        std::move(entries), settings_.home, settings_.pipeline.backupsDir, approvals, audit,
        settings_.persona, settings_.pipeline.kajaFolders);
    tools->callAsync(tool, arguments,
                     [tools, done = std::move(done)](Result<mcp::ToolResult> result) {
                       done(fromBuiltIn(std::move(result)));
                     });
    return;
  }
  const Entry* entry = find(ability);
  if (entry == nullptr || !entry->filtered) {
    policy::CallOutcome outcome;
    outcome.decision = policy::AuditDecision::kRefused;
    outcome.refusal = policy::Refusal{
        std::string(policy::rule::kAbilityTools),
        entry == nullptr ? "persona \"" + settings_.persona + "\" does not include " + ability +
                               "; `kaja personas` shows what it has"
                         : ability + " is not connected, so none of its tools can run now"};
    done(std::move(outcome));
    return;
  }
  auto pipeline = std::make_shared<policy::CallPipeline>(settings_.pipeline, approvals, audit);
  auto scope = entry->scope;
  auto filtered = entry->filtered;
  pipeline->callAsync(*scope, *filtered, tool, std::move(arguments), std::move(send),
                      [pipeline, scope, filtered, done = std::move(done)](
                          policy::CallOutcome outcome) { done(std::move(outcome)); });
}

}  // namespace kaja::core::gateway
