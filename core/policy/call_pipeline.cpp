#include "core/policy/call_pipeline.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "core/paths.h"
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

Result<std::pair<std::string, std::size_t>> spillText(const std::string& dir,
                                                      const std::string& ability,
                                                      const std::string& tool,
                                                      const mcp::ToolResult& result,
                                                      std::uint64_t keepBytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail(ErrorCode::kIo, "could not make " + dir + ": " + ec.message());
  fs::permissions(dir, fs::perms::owner_all, ec);
  // The text of every block, and a block of no kind kaja knows (which the guard shows as JSON
  // text) as its JSON; images, audio, blobs and links are not text.
  std::string text;
  const auto stringAt = [](const mcp::Json& object, const char* key) -> const std::string* {
    if (!object.is_object()) return nullptr;
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
  };
  for (const auto& block : result.content()) {
    const std::string* type = stringAt(block, "type");
    const bool resource = type != nullptr && *type == "resource" && block.contains("resource");
    const std::string* piece = stringAt(resource ? block["resource"] : block, "text");
    std::string json;
    if (piece == nullptr) {
      const bool media = type != nullptr && (*type == "image" || *type == "audio" ||
                                             *type == "resource_link" || resource);
      if (media) continue;
      json = block.dump(-1, ' ', false, mcp::Json::error_handler_t::replace);
      piece = &json;
    }
    if (!text.empty()) text += "\n";
    text += *piece;
  }
  if (text.size() > keepBytes) {
    return fail(ErrorCode::kIo, "the text is " + std::to_string(text.size()) +
                                    " bytes, more than the " + std::to_string(keepBytes) +
                                    " bytes kaja keeps of cut results");
  }
  // A week's outputs are kept, within keepBytes together: older ones go as new ones come,
  // and then the oldest others until the new text fits.
  const auto cutoff = fs::file_time_type::clock::now() - std::chrono::hours(24 * 7);
  struct Kept {
    fs::file_time_type time;
    std::uintmax_t size;
    fs::path path;
  };
  std::vector<Kept> kept;
  std::uint64_t total = 0;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const fs::directory_entry& entry = *it;
    std::error_code stat;
    if (!entry.is_regular_file(stat)) continue;
    const auto time = entry.last_write_time(stat);
    const auto size = entry.file_size(stat);
    if (stat) continue;
    if (time < cutoff) {
      fs::remove(entry.path(), stat);
      continue;
    }
    kept.push_back({time, size, entry.path()});
    total += size;
  }
  std::sort(kept.begin(), kept.end(), [](const Kept& a, const Kept& b) {
    // Names start with the time in microseconds, finer than some disks' clocks.
    return a.time != b.time ? a.time < b.time : a.path < b.path;
  });
  for (const auto& old : kept) {
    if (total + text.size() <= keepBytes) break;
    std::error_code removed;
    if (fs::remove(old.path, removed)) total -= std::min<std::uint64_t>(total, old.size);
  }
  auto safe = [](std::string name) {
    for (char& c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
    }
    return name.substr(0, 60);
  };
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const std::string path =
      dir + "/" +
      std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(now).count()) + "-" +
      safe(ability) + "-" + safe(tool) + ".txt";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return fail(ErrorCode::kIo, "could not create " + path + ": " + std::strerror(errno));
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      return fail(ErrorCode::kIo, "could not write " + path + ": " + why);
    }
    written += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return std::make_pair(path, text.size());
}

OwnFiles ownFilesOf(const PipelineOptions& options, const std::string& home) {
  return OwnFiles(options.kajaFolders,
                  options.spillDir.empty() ? std::vector<std::string>()
                                           : std::vector<std::string>{options.spillDir},
                  home);
}

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

/// One call on its way through the steps.
// NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json members fool the check.
struct CallPipeline::Running {
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  const CallScope* scope = nullptr;
  std::string tool;
  mcp::Json arguments;
  AsyncCallFunction send;
  std::function<void(CallOutcome)> done;
  std::vector<std::string> declared;  ///< the argument names the tool's schema declares
  bool write = false;
  std::optional<FolderGuard> guard;
  std::vector<CheckedPath> paths;
  CallOutcome outcome;
};

CallOutcome CallPipeline::call(const CallScope& scope, const FilteredTools& offered,
                               const std::string& tool, const mcp::Json& arguments,
                               const CallFunction& send) {
  std::optional<CallOutcome> answer;
  callAsync(
      scope, offered, tool, arguments,
      [&send](const std::string& name, const mcp::Json& values,
              const std::function<void(Result<mcp::ToolResult>)>& sent) {
        sent(send(name, values));
      },
      [&answer](CallOutcome outcome) { answer = std::move(outcome); });
  if (answer) return std::move(*answer);
  CallOutcome outcome;
  outcome.decision = AuditDecision::kFailed;
  outcome.error =
      Error{ErrorCode::kInternal, "the call did not finish at once", scope.ability.name, {}};
  return outcome;
}

void CallPipeline::finish(const std::shared_ptr<Running>& running, CallOutcome outcome) {
  if (audit_ != nullptr) {
    const CallScope& scope = *running->scope;
    AuditRecord record;
    record.time = std::chrono::system_clock::now();
    record.persona = scope.persona;
    record.ability = scope.ability.name;
    record.tool = running->tool;
    record.decision = outcome.decision;
    if (outcome.refusal) record.rule = outcome.refusal->rule;
    record.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - running->started);
    if (outcome.result) {
      record.resultBytes = resultBytes(*outcome.result);
      record.isError = outcome.result->isError();
    }
    record.isError = record.isError || outcome.error.has_value();
    record.argumentNames = argumentNames(running->arguments, running->declared);
    // A failing audit log must not hide the call's own outcome; it is reported beside it.
    if (auto written = audit_->append(record); !written && !outcome.error) {
      outcome.error = written.error();
    }
  }
  auto done = std::move(running->done);
  done(std::move(outcome));
}

void CallPipeline::callAsync(const CallScope& scope, const FilteredTools& filtered,
                             const std::string& tool, mcp::Json arguments, AsyncCallFunction send,
                             std::function<void(CallOutcome)> done) {
  auto running = std::make_shared<Running>();
  running->scope = &scope;
  running->tool = tool;
  running->arguments = std::move(arguments);
  running->send = std::move(send);
  running->done = std::move(done);
  const mcp::Json& args = running->arguments;
  if (jsonDepth(args, kMaxArgumentDepth) > kMaxArgumentDepth) {
    finish(running,
           refused(Refusal{std::string(rule::kArguments),
                           "The arguments nest deeper than " + std::to_string(kMaxArgumentDepth) +
                               " levels, more than kaja checks; the call did not run."}));
    return;
  }
  // 1. Filter: the persona sees only what the allow-lists and the scanner let through.
  const mcp::Tool* offered = nullptr;
  for (const auto& candidate : filtered.offered) {
    if (candidate.name == tool) offered = &candidate;
  }
  if (offered == nullptr) {
    finish(running, refused(notOffered(filtered, scope.ability.name, tool)));
    return;
  }
  running->declared = declaredArguments(offered->inputSchema);
  if (scope.sandboxed) {
    if (auto refusal = localOnlyArgRefusal(scope.ability, tool, args)) {
      finish(running, refused(std::move(*refusal)));
      return;
    }
  }

  // 2. Approval decision: is this a write, and who must agree?
  running->write = isWrite(*offered, scope.ability, args);
  ApprovalPolicy policy{scope.ability.approval, options_.confirmList};

  // 3. Folder check, before anyone is asked (K15). No call, read or write, may name kaja's
  // own files; a write must also land in the persona's writable folders.
  // A server that works inside kaja's own folders reaches its files by bare names ("secrets.toml"),
  // which no check of the arguments can tell from words: it gets no call.
  // One check serves both steps below; it touches no file until it judges a path.
  const OwnFiles own = ownFilesOf(options_, scope.home);
  if (!options_.kajaFolders.empty() && scope.ability.cwd) {
    if (auto refusal = own.checkFolder(expandHome(*scope.ability.cwd, scope.home),
                                       "The working folder (cwd) of " + scope.ability.name,
                                       scope.ability.name)) {
      finish(running, refused(std::move(*refusal)));
      return;
    }
  }
  if (!options_.kajaFolders.empty() && mayNamePaths(args, scope.ability.pathArgs)) {
    // A relative path may reach kaja's files where a persona folder holds them, since the
    // server's working folder may be there too.
    bool relativeReaches = false;
    if (!running->write && !scope.entry.roots.empty()) {
      auto created = FolderGuard::create(usableRoots(scope.ability, scope.entry), scope.home,
                                         options_.kajaFolders);
      relativeReaches = created && created->holdsKajaOwn();
    }
    // A relative path lands in the server's working folder (its manifest's, else kaja's own),
    // or in a folder the server was given, which some servers resolve it from
    // (server-filesystem takes its first allowed folder): any folder among its arguments, and
    // the persona's folders, which it gets as roots.
    std::vector<std::string> working;
    std::error_code noCwd;
    if (scope.ability.cwd) {
      working.push_back(expandHome(*scope.ability.cwd, scope.home));
    } else if (auto here = std::filesystem::current_path(noCwd); !noCwd) {
      working.push_back(here.string());
    }
    for (const auto& arg : scope.ability.args) {
      const std::string folder = expandHome(arg, scope.home);
      std::error_code notFolder;
      if (folder.starts_with("/") && std::filesystem::is_directory(folder, notFolder)) {
        working.push_back(folder);
      }
    }
    for (const auto& root : scope.entry.roots) working.push_back(expandHome(root.path, scope.home));
    if (auto refusal = own.checkArguments(args, scope.ability.pathArgs, relativeReaches,
                                          scope.ability.name, working)) {
      finish(running, refused(std::move(*refusal)));
      return;
    }
  }
  if (running->write) {
    auto created = FolderGuard::create(usableRoots(scope.ability, scope.entry), scope.home,
                                       options_.kajaFolders);
    if (!created) {
      CallOutcome outcome;
      outcome.decision = AuditDecision::kFailed;
      outcome.error = created.error();
      finish(running, std::move(outcome));
      return;
    }
    running->guard = std::move(*created);
    auto checked = running->guard->check(scope.ability, args);
    if (!checked) {
      finish(running, refused(checked.error()));
      return;
    }
    running->paths = std::move(*checked);
  }

  // 4. Ask, when the policy says so.
  ApprovalRequest request{scope.ability.name, tool, args, running->write,
                          approvalNeed(policy, tool, running->write) == ApprovalNeed::kPerson};
  for (const auto& path : running->paths) {
    for (const auto& landing : path.landings) request.writesTo.push_back(landing.resolved);
  }
  approvals_.decideAsync(policy, request, [this, running](const ApprovalOutcome& approval) {
    if (!approval.allowed()) {
      finish(running, refused(approval.refusal.value_or(
                                  Refusal{std::string(rule::kApproval), "the call needs approval"}),
                              AuditDecision::kDeclined));
      return;
    }
    // While a person was asked, the folders may have changed (a symlink put in place, a
    // folder moved by another call): the paths are judged again, as they are now.
    if (approval.kind == ApprovalOutcome::Kind::kApproved && running->write) {
      auto created =
          FolderGuard::create(usableRoots(running->scope->ability, running->scope->entry),
                              running->scope->home, options_.kajaFolders);
      auto checked = created
                         ? created->check(running->scope->ability, running->arguments)
                         : std::expected<std::vector<CheckedPath>, Refusal>(std::unexpected(Refusal{
                               std::string(rule::kReadOnlyFolder), created.error().message}));
      if (!checked) {
        Refusal refusal = checked.error();
        refusal.message = "After it was approved: " + refusal.message;
        finish(running, refused(std::move(refusal)));
        return;
      }
      running->guard = std::move(*created);
      running->paths = std::move(*checked);
    }
    approved(running);
  });
}

void CallPipeline::approved(const std::shared_ptr<Running>& running) {
  // 5. Backup: a file in a backed-up folder is copied first, or the call does not run.
  if (running->write && running->guard && running->guard->anyBackup()) {
    BackupStore store(options_.backupsDir);
    auto copies = store.backupBeforeCall(running->paths, !onlyCreatesFolders(running->tool));
    if (!copies) {
      finish(running, refused(Refusal{std::string(rule::kBackup), copies.error().message}));
      return;
    }
    running->outcome.backups = std::move(*copies);
  }

  // 6. The call itself.
  auto send = std::move(running->send);
  send(running->tool, running->arguments, [this, running](Result<mcp::ToolResult> result) {
    CallOutcome outcome = std::move(running->outcome);
    if (!result) {
      outcome.decision = AuditDecision::kFailed;
      outcome.error = result.error();
      finish(running, std::move(outcome));
      return;
    }
    // 7. Output guard. Text it cuts is kept whole in a file the result names (V8).
    GuardedOutput guarded = guardOutput(*result, options_.limits);
    const bool textLost = guarded.report.textBytesCut > 0 || guarded.report.blocksLeftOut > 0;
    if (textLost && !options_.spillDir.empty()) {
      auto spilled =
          spillText(options_.spillDir, running->scope->ability.name, running->tool, *result);
      std::string note = spilled ? "kaja kept the whole text (" + std::to_string(spilled->second) +
                                       " bytes) in " + spilled->first +
                                       "; read it from there in parts if you need the rest."
                                 : "kaja could not keep the whole text: " + spilled.error().message;
      if (spilled) outcome.spilledTo = spilled->first;
      mcp::Json& content = guarded.result.raw["content"];
      if (content.is_array()) content.push_back({{"type", "text"}, {"text", note}});
    }
    outcome.result = std::move(guarded.result);
    outcome.output = guarded.report;
    finish(running, std::move(outcome));
  });
}

}  // namespace kaja::core::policy
