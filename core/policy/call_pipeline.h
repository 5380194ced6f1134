#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/manifest/ability.h"
#include "core/manifest/persona.h"
#include "core/mcp/types.h"
#include "core/policy/approval.h"
#include "core/policy/audit_log.h"
#include "core/policy/output_guard.h"
#include "core/policy/own_files.h"
#include "core/policy/refusal.h"
#include "core/policy/tool_filter.h"

namespace kaja::core::policy {

/// What one persona gives one ability: the ability, its persona entry (tools narrowing and
/// the folders that exist) and whose home `~` means.
struct CallScope {
  std::string persona;
  Ability ability;
  PersonaEntry entry;
  std::string home;
  /// The ability runs in a sandbox worker: its localOnlyArgs are hidden and refused (K24).
  bool sandboxed = false;
};

/// Settings shared by every call.
struct PipelineOptions {
  std::string backupsDir;
  OutputLimits limits;
  std::vector<std::string> confirmList;  ///< tools that never run without a person (U4)
  std::vector<std::string> kajaFolders;  ///< kaja's own folders, never written by a call
  /// Where text cut by the output guard is kept whole (V8), one file per call; "" keeps
  /// nothing and the cut text is lost.
  std::string spillDir;
};

/// Returns the check of kaja's own files (K15) under `options`: its folders kept from every
/// server, its spill folder left readable, `~` meaning `home`.
OwnFiles ownFilesOf(const PipelineOptions& options, const std::string& home);

/// How deep a call's arguments may nest. Deeper arguments are refused before any step, so
/// no step recurses through them.
inline constexpr size_t kMaxArgumentDepth = 64;

/// Returns how deeply `value` nests arrays and objects (a scalar is 0), counting without
/// recursion and stopping once past `limit`.
size_t jsonDepth(const mcp::Json& value, size_t limit);

/// Sends the call to the server once every step before it allowed it.
using CallFunction =
    std::function<Result<mcp::ToolResult>(const std::string& tool, const mcp::Json& arguments)>;

/// Sends the call to the server without waiting: `done` runs once with its result.
using AsyncCallFunction = std::function<void(const std::string& tool, const mcp::Json& arguments,
                                             std::function<void(Result<mcp::ToolResult>)> done)>;

/// How one call ended.
struct CallOutcome {
  AuditDecision decision = AuditDecision::kAllowed;
  std::optional<mcp::ToolResult> result;  ///< when the call ran (it may still be isError)
  std::optional<Refusal> refusal;         ///< when a rule or the approver said no
  std::optional<Error> error;             ///< when the server or transport failed
  OutputReport output;
  std::vector<std::string> backups;  ///< copies made before the call
  std::string spilledTo;             ///< the file that holds the whole text, when it was cut
};

/// The most bytes of cut results kept in the outputs folder at once.
inline constexpr std::uint64_t kSpillKeepBytes = std::uint64_t{256} * 1024 * 1024;

/// Writes every text block of `result` (and embedded text resources) whole into a new file
/// under `dir` (made 0700; the file 0600) named after the time, `ability` and `tool`, and
/// removes files there older than a week, then the oldest others until the folder holds at
/// most `keepBytes` with the new file. Returns its path and size. A text larger than
/// `keepBytes` is not kept (kIo, saying so), and nothing is removed for it.
Result<std::pair<std::string, std::size_t>> spillText(const std::string& dir,
                                                      const std::string& ability,
                                                      const std::string& tool,
                                                      const mcp::ToolResult& result,
                                                      std::uint64_t keepBytes = kSpillKeepBytes);

/// Every tool call, in one order: filter (its result passed in) → approval decision → folder check
/// (refusing before anyone is asked, K15) → asking the approver → backup → the call → output guard
/// → audit. Each refusal names its rule in one sentence.
class CallPipeline {
 public:
  /// `approvals` and `audit` (may be null) must outlive the pipeline.
  CallPipeline(PipelineOptions options, ApprovalSession& approvals, AuditLog* audit);

  /// Runs `tool` with `arguments` for `scope`. `offered` is the filter step's result for
  /// this scope (filterTools over what the server listed), computed once per tools/list
  /// rather than per call, since the injection scan is the costliest step.
  CallOutcome call(const CallScope& scope, const FilteredTools& offered, const std::string& tool,
                   const mcp::Json& arguments, const CallFunction& send);

  /// call() for an event loop: the approver may answer later and `send` may finish later;
  /// `done` runs once with the outcome, after the audit row is written. `scope`, `offered`
  /// and the pipeline must stay alive until then.
  void callAsync(const CallScope& scope, const FilteredTools& offered, const std::string& tool,
                 mcp::Json arguments, AsyncCallFunction send,
                 std::function<void(CallOutcome)> done);

 private:
  struct Running;
  void finish(const std::shared_ptr<Running>& running, CallOutcome outcome);
  void approved(const std::shared_ptr<Running>& running);

  PipelineOptions options_;
  ApprovalSession& approvals_;
  AuditLog* audit_;
};

}  // namespace kaja::core::policy
