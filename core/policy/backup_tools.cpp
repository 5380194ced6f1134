#include "core/policy/backup_tools.h"

#include <chrono>
#include <optional>

#include "core/policy/backup.h"
#include "core/policy/folder_guard.h"
#include "core/util/quote.h"

namespace kaja::core::policy {
namespace {

mcp::ToolResult textResult(const std::string& text) {
  mcp::ToolResult result;
  result.raw = {{"content", mcp::Json::array({{{"type", "text"}, {"text", text}}})}};
  return result;
}

mcp::Tool makeTool(const std::string& name, const std::string& description, mcp::Json properties,
                   std::vector<std::string> required, bool readOnly) {
  mcp::Tool tool;
  tool.name = name;
  tool.description = description;
  tool.inputSchema = {{"type", "object"}, {"properties", properties}, {"required", required}};
  tool.raw = {{"name", name},
              {"description", description},
              {"inputSchema", tool.inputSchema},
              {"annotations", {{"readOnlyHint", readOnly}}}};
  return tool;
}

}  // namespace

bool offersBackupTools(const std::vector<PersonaEntry>& entries) {
  for (const auto& entry : entries) {
    for (const auto& root : entry.roots) {
      if (root.backup) return true;
    }
  }
  return false;
}

std::vector<mcp::Tool> backupTools() {
  mcp::Json path = {{"type", "string"},
                    {"description", "Absolute or ~/ path of a file in a backed-up folder."}};
  return {
      makeTool("list_backups",
               "Lists the copies kaja kept of a file before calls changed it, oldest first, "
               "each with its stamp and size.",
               {{"path", path}}, {"path"}, true),
      makeTool("restore_backup",
               "Puts a kept copy of a file back in place. The user is always asked first, and "
               "the current file is kept as a copy too, so a restore can be undone.",
               {{"path", path},
                {"stamp", {{"type", "string"}, {"description", "A stamp from list_backups."}}}},
               {"path", "stamp"}, false),
  };
}

BackupTools::BackupTools(std::vector<PersonaEntry> entries, std::string home,
                         std::string backupsDir, ApprovalSession& approvals, AuditLog* audit,
                         std::string persona, std::vector<std::string> kajaFolders)
    : entries_(std::move(entries)),
      home_(std::move(home)),
      backupsDir_(std::move(backupsDir)),
      approvals_(approvals),
      audit_(audit),
      persona_(std::move(persona)),
      kajaFolders_(std::move(kajaFolders)) {}

namespace {

// The guard checks paths the way it does for any server: one argument named "path".
Result<CheckedPath> checkPath(const std::vector<PersonaRoot>& roots, const std::string& home,
                              const mcp::Json& arguments,
                              const std::vector<std::string>& kajaFolders = {}) {
  if (!arguments.is_object() || !arguments.contains("path") || !arguments["path"].is_string()) {
    return fail(ErrorCode::kUsage, "needs a \"path\" string argument", kKajaAbility);
  }
  auto guard = FolderGuard::create(roots, home, kajaFolders);
  if (!guard) return std::unexpected(guard.error());
  Ability self;
  self.name = kKajaAbility;
  self.pathArgs = {"path"};
  auto checked = guard->check(self, {{"path", arguments["path"]}});
  if (!checked) return std::unexpected(checked.error().toError(kKajaAbility));
  if (checked->empty()) return CheckedPath{};
  // The guard's folders die with it; only the paths and flags are read from here on.
  CheckedPath path = checked->front();
  path.folder = nullptr;
  for (auto& landing : path.landings) landing.folder = nullptr;
  return path;
}

Error notBackedUp(const mcp::Json& arguments) {
  return Error{ErrorCode::kRefused,
               quoteForMessage(arguments["path"].get<std::string>()) +
                   " is not in a backed-up folder of this persona",
               kKajaAbility, std::string("rule: ") + std::string(rule::kBackup)};
}

AuditDecision decisionFor(const Result<mcp::ToolResult>& result) {
  if (result) return AuditDecision::kAllowed;
  if (result.error().code != ErrorCode::kRefused) return AuditDecision::kFailed;
  return result.error().detail.find(rule::kApproval) != std::string::npos ? AuditDecision::kDeclined
                                                                          : AuditDecision::kRefused;
}

}  // namespace

Result<std::string> BackupTools::listedPath(const mcp::Json& arguments) const {
  std::vector<PersonaRoot> roots;
  for (const auto& entry : entries_) {
    for (const auto& root : entry.roots) {
      if (root.backup) roots.push_back({root.path, false, true});
    }
  }
  auto path = checkPath(roots, home_, arguments);
  if (!path) return std::unexpected(path.error());
  if (path->landings.empty() || !path->landings.front().backup) {
    return std::unexpected(notBackedUp(arguments));
  }
  return path->resolved;
}

Result<std::string> BackupTools::restorablePath(const mcp::Json& arguments) const {
  // Every folder of the persona, read-only ones included: a restore is a write like any other.
  std::vector<PersonaRoot> roots;
  for (const auto& entry : entries_) {
    roots.insert(roots.end(), entry.roots.begin(), entry.roots.end());
  }
  auto path = checkPath(roots, home_, arguments, kajaFolders_);
  if (!path) return std::unexpected(path.error());
  if (path->landings.empty()) return std::unexpected(notBackedUp(arguments));
  // The copies are kept under the kernel's reading; every reading must be a backed-up folder.
  for (const auto& landing : path->landings) {
    if (!landing.backup) return std::unexpected(notBackedUp(arguments));
  }
  return path->resolved;
}

Result<mcp::ToolResult> BackupTools::call(const std::string& tool, const mcp::Json& arguments) {
  std::optional<Result<mcp::ToolResult>> answer;
  callAsync(tool, arguments,
            [&answer](Result<mcp::ToolResult> result) { answer = std::move(result); });
  if (answer) return std::move(*answer);
  return fail(ErrorCode::kRefused,
              "The call to " + tool + " on kaja needs an answer that kaja cannot wait for here.",
              kKajaAbility);
}

void BackupTools::callAsync(const std::string& tool, const mcp::Json& arguments,
                            std::function<void(Result<mcp::ToolResult>)> done) {
  auto started = std::chrono::steady_clock::now();
  auto finish = [this, tool, arguments, started,
                 done = std::move(done)](Result<mcp::ToolResult> result) {
    done(audited(tool, arguments, started, std::move(result)));
  };
  if (tool != "restore_backup") {
    finish(run(tool, arguments));
    return;
  }
  auto path = restorablePath(arguments);
  if (!path) {
    finish(std::unexpected(path.error()));
    return;
  }
  if (!arguments.contains("stamp") || !arguments["stamp"].is_string()) {
    finish(fail(ErrorCode::kUsage, "needs a \"stamp\" string argument from list_backups",
                kKajaAbility));
    return;
  }
  // A stamp that cannot name a copy is refused before a person is asked about it.
  if (auto checked = checkBackupStamp(arguments["stamp"].get_ref<const std::string&>()); !checked) {
    finish(std::unexpected(checked.error()));
    return;
  }
  ApprovalPolicy always{ApprovalMode::kAlways, {}};
  approvals_.decideAsync(
      always, ApprovalRequest{kKajaAbility, tool, arguments, true, false},
      [this, finish, restored = *path,
       stamp = arguments["stamp"].get<std::string>()](const ApprovalOutcome& approval) {
        if (!approval.allowed()) {
          finish(std::unexpected(approval.refusal->toError(kKajaAbility)));
          return;
        }
        BackupStore store(backupsDir_);
        if (auto done = store.restoreBackup(restored, stamp); !done) {
          finish(std::unexpected(done.error()));
          return;
        }
        finish(textResult("Restored " + restored + " from the copy " + stamp +
                          "; the file it replaced was kept as a copy too."));
      });
}

Result<mcp::ToolResult> BackupTools::audited(const std::string& tool, const mcp::Json& arguments,
                                             std::chrono::steady_clock::time_point started,
                                             Result<mcp::ToolResult> result) {
  if (audit_ != nullptr) {
    AuditRecord record;
    record.time = std::chrono::system_clock::now();
    record.persona = persona_;
    record.ability = kKajaAbility;
    record.tool = tool;
    record.decision = decisionFor(result);
    if (!result && result.error().detail.starts_with("rule: ")) {
      record.rule = result.error().detail.substr(6);
    }
    record.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    if (result)
      record.resultBytes =
          result->raw.dump(-1, ' ', false, mcp::Json::error_handler_t::replace).size();
    record.isError = !result;
    record.argumentNames = argumentNames(arguments, {"path", "stamp"});
    if (auto written = audit_->append(record); !written && result) {
      return std::unexpected(written.error());
    }
  }
  return result;
}

Result<mcp::ToolResult> BackupTools::run(const std::string& tool, const mcp::Json& arguments) {
  BackupStore store(backupsDir_);
  if (tool == "list_backups") {
    auto path = listedPath(arguments);
    if (!path) return std::unexpected(path.error());
    auto copies = store.listBackups(*path);
    if (!copies) return std::unexpected(copies.error());
    if (copies->empty()) return textResult("No copies of " + *path + " have been kept.");
    std::string text = "Copies of " + *path + ", oldest first:\n";
    for (const auto& copy : *copies) {
      text += copy.stamp + "  " + std::to_string(copy.size) + " bytes\n";
    }
    return textResult(text);
  }
  return fail(ErrorCode::kNotFound, "kaja has no tool named \"" + tool + "\"", kKajaAbility);
}

}  // namespace kaja::core::policy
