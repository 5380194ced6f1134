#include "core/policy/call_pipeline.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "core/policy/backup.h"
#include "core/policy/folder_guard.h"

namespace kaja::core::policy {
namespace {

CallOutcome refused(Refusal refusal, AuditDecision decision = AuditDecision::kRefused) {
  CallOutcome outcome;
  outcome.decision = decision;
  outcome.refusal = std::move(refusal);
  return outcome;
}

// Why a tool the server did not offer to this persona cannot be called.
Refusal notOffered(const FilteredTools& filtered, const std::string& ability,
                   const std::string& tool) {
  for (const auto& dropped : filtered.dropped) {
    if (dropped.name == tool) return dropped.refusal;
  }
  return Refusal{std::string(rule::kAbilityTools), ability + " has no tool named \"" + tool +
                                                       "\"; `kaja tools` lists what it offers."};
}

// A tool that only makes folders changes no file already there, so the folders it names
// need no copy; any other tool may move or empty a folder it is given.
bool onlyCreatesFolders(const std::string& tool) {
  return tool == "create_directory" || tool == "make_directory" || tool == "mkdir";
}

size_t resultBytes(const mcp::ToolResult& result) {
  return result.raw.dump(-1, ' ', false, mcp::Json::error_handler_t::replace).size();
}

}  // namespace

size_t jsonDepth(const mcp::Json& value, size_t limit) {
  std::vector<std::pair<const mcp::Json*, size_t>> pending = {{&value, 0}};
  size_t deepest = 0;
  while (!pending.empty()) {
    auto [node, depth] = pending.back();
    pending.pop_back();
    if (!node->is_structured()) continue;
    deepest = std::max(deepest, depth + 1);
    if (deepest > limit) return deepest;
    for (const auto& child : *node) pending.emplace_back(&child, depth + 1);
  }
  return deepest;
}

CallPipeline::CallPipeline(PipelineOptions options, ApprovalSession& approvals, AuditLog* audit)
    : options_(std::move(options)), approvals_(approvals), audit_(audit) {}

CallOutcome CallPipeline::call(const CallScope& scope, const FilteredTools& offered,
                               const std::string& tool, const mcp::Json& arguments,
                               const CallFunction& send) {
  auto started = std::chrono::steady_clock::now();
  CallOutcome outcome = run(scope, offered, tool, arguments, send);
  if (audit_ != nullptr) {
    AuditRecord record;
    record.time = std::chrono::system_clock::now();
    record.persona = scope.persona;
    record.ability = scope.ability.name;
    record.tool = tool;
    record.decision = outcome.decision;
    if (outcome.refusal) record.rule = outcome.refusal->rule;
    record.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    if (outcome.result) {
      record.resultBytes = resultBytes(*outcome.result);
      record.isError = outcome.result->isError();
    }
    record.isError = record.isError || outcome.error.has_value();
    record.argumentNames = argumentNames(arguments);
    // A failing audit log must not hide the call's own outcome; it is reported beside it.
    if (auto written = audit_->append(record); !written && !outcome.error) {
      outcome.error = written.error();
    }
  }
  return outcome;
}

CallOutcome CallPipeline::run(const CallScope& scope, const FilteredTools& filtered,
                              const std::string& tool, const mcp::Json& arguments,
                              const CallFunction& send) {
  if (jsonDepth(arguments, kMaxArgumentDepth) > kMaxArgumentDepth) {
    return refused(Refusal{std::string(rule::kArguments),
                           "The arguments nest deeper than " + std::to_string(kMaxArgumentDepth) +
                               " levels, more than kaja checks; the call did not run."});
  }
  // 1. Filter: the persona sees only what the allow-lists and the scanner let through.
  const mcp::Tool* offered = nullptr;
  for (const auto& candidate : filtered.offered) {
    if (candidate.name == tool) offered = &candidate;
  }
  if (offered == nullptr) return refused(notOffered(filtered, scope.ability.name, tool));

  // 2. Approval decision: is this a write, and who must agree?
  bool write = isWrite(*offered, scope.ability, arguments);
  ApprovalPolicy policy{scope.ability.approval, options_.confirmList};

  // 3. Folder check, before anyone is asked (K15).
  std::vector<CheckedPath> paths;
  std::optional<FolderGuard> guard;
  if (write) {
    auto created = FolderGuard::create(usableRoots(scope.ability, scope.entry), scope.home,
                                       options_.kajaFolders);
    if (!created) {
      CallOutcome outcome;
      outcome.decision = AuditDecision::kFailed;
      outcome.error = created.error();
      return outcome;
    }
    guard = std::move(*created);
    auto checked = guard->check(scope.ability, arguments);
    if (!checked) return refused(checked.error());
    paths = std::move(*checked);
  }

  // 4. Ask, when the policy says so.
  ApprovalRequest request{scope.ability.name, tool, arguments, write,
                          approvalNeed(policy, tool, write) == ApprovalNeed::kPerson};
  for (const auto& path : paths) {
    for (const auto& landing : path.landings) request.writesTo.push_back(landing.resolved);
  }
  ApprovalOutcome approval = approvals_.decide(policy, request);
  if (!approval.allowed()) {
    return refused(
        approval.refusal.value_or(Refusal{std::string(rule::kApproval), "the call needs approval"}),
        AuditDecision::kDeclined);
  }

  // 5. Backup: a file in a backed-up folder is copied first, or the call does not run.
  CallOutcome outcome;
  if (write && guard && guard->anyBackup()) {
    BackupStore store(options_.backupsDir);
    auto copies = store.backupBeforeCall(paths, !onlyCreatesFolders(tool));
    if (!copies) {
      return refused(Refusal{std::string(rule::kBackup), copies.error().message});
    }
    outcome.backups = std::move(*copies);
  }

  // 6. The call itself.
  auto result = send(tool, arguments);
  if (!result) {
    outcome.decision = AuditDecision::kFailed;
    outcome.error = result.error();
    return outcome;
  }

  // 7. Output guard.
  GuardedOutput guarded = guardOutput(*result, options_.limits);
  outcome.result = std::move(guarded.result);
  outcome.output = guarded.report;
  return outcome;
}

}  // namespace kaja::core::policy
