// `kaja backups [PATH]` lists the copies kaja kept before calls changed files, and
// `kaja backups restore PATH [STAMP]` puts one back.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/output.h"
#include "core/paths.h"
#include "core/policy/audit_log.h"
#include "core/policy/backup.h"
#include "core/policy/backup_tools.h"
#include "core/policy/refusal.h"
#include "core/util/quote.h"
#include "core/util/sys.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
namespace policy = core::policy;

// How many stamps an error about a missing one lists.
constexpr size_t kStampsShown = 10;

// Returns "512 B", "1.2 KB", "3.4 MB": 1024 to the K, as the README's limits count.
std::string humanSize(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  for (value /= 1024; value >= 1024 && unit + 1 < std::size(units); value /= 1024) ++unit;
  char text[32];
  std::snprintf(text, sizeof text, value < 10 ? "%.1f %s" : "%.0f %s", value, units[unit]);
  return text;
}

// Returns the stamp's time on this machine's clock, or the stamp itself when it names none.
std::string stampTime(const std::string& stamp) {
  auto time = policy::parseBackupStamp(stamp);
  return time ? policy::formatLocalTime(*time) : stamp;
}

std::string stampIso(const std::string& stamp) {
  auto time = policy::parseBackupStamp(stamp);
  return time ? policy::formatIsoUtc(*time) : std::string();
}

// Returns PATH as the store names files: absolute (`~` and the working folder applied), `.`
// and `..` taken out, and the folders that hold it read through their symlinks as the kernel
// reads them. The last name itself is not followed.
core::Result<std::string> storePath(const std::string& given) {
  if (given.empty()) return core::fail(core::ErrorCode::kUsage, "PATH is empty; name a file.");
  std::error_code ec;
  fs::path path = fs::absolute(core::expandHome(given, core::homeDir()), ec).lexically_normal();
  if (ec) {
    return core::fail(core::ErrorCode::kUsage, "Cannot make " + core::quoteForMessage(given) +
                                                   " absolute (" + ec.message() +
                                                   "); give the whole path.");
  }
  if (!path.has_filename()) path = path.parent_path();
  if (path == path.root_path()) {
    return core::fail(core::ErrorCode::kUsage, "The root folder is no file kaja keeps copies of.");
  }
  fs::path folder = fs::weakly_canonical(path.parent_path(), ec);
  if (ec) folder = path.parent_path();
  return (folder / path.filename()).string();
}

json copyJson(const policy::StoredCopy& copy) {
  return {{"path", copy.original},
          {"stamp", copy.entry.stamp},
          {"time", stampIso(copy.entry.stamp)},
          {"size", copy.entry.size},
          {"copy", copy.entry.storedPath}};
}

void printCopies(const std::vector<policy::StoredCopy>& copies, bool asJson) {
  std::set<std::string> files;
  uint64_t bytes = 0;
  for (const auto& copy : copies) {
    files.insert(copy.original);
    bytes += copy.entry.size;
  }
  if (asJson) {
    json list = json::array();
    for (const auto& copy : copies) list.push_back(copyJson(copy));
    json out = {{"copies", list}, {"files", files.size()}, {"bytes", bytes}};
    std::printf("%s\n", jsonText(out).c_str());
    return;
  }
  // The path goes last and whole, never cut or wrapped, so it can be copied.
  std::printf("%-19s  %8s  %-24s  %s\n", "TIME", "SIZE", "STAMP", "FILE");
  for (const auto& copy : copies) {
    std::printf("%-19s  %8s  %-24s  %s\n", stampTime(copy.entry.stamp).c_str(),
                humanSize(copy.entry.size).c_str(), copy.entry.stamp.c_str(),
                oneLine(copy.original).c_str());
  }
  std::printf("%zu %s of %zu %s, %s in all.\n", copies.size(),
              copies.size() == 1 ? "copy" : "copies", files.size(),
              files.size() == 1 ? "file" : "files", humanSize(bytes).c_str());
}

// Returns the copies of `file`, newest first.
core::Result<std::vector<policy::StoredCopy>> copiesOf(const policy::BackupStore& store,
                                                       const std::string& file) {
  auto entries = store.listBackups(file);
  if (!entries) return std::unexpected(entries.error());
  std::vector<policy::StoredCopy> copies;
  for (auto it = entries->rbegin(); it != entries->rend(); ++it) copies.push_back({file, *it});
  return copies;
}

int listCopies(const core::Paths& paths, const std::optional<std::string>& given, bool asJson) {
  policy::BackupStore store(paths.backupsDir);
  std::optional<std::string> file;
  if (given) {
    auto resolved = storePath(*given);
    if (!resolved) return reportError(resolved.error());
    file = *resolved;
  }
  auto copies = file ? copiesOf(store, *file) : store.listAllBackups();
  if (!copies) return reportError(copies.error());
  if (copies->empty() && !asJson) {
    if (file) {
      std::printf("kaja has kept no copies of %s.\n", oneLine(*file).c_str());
    } else {
      std::printf(
          "kaja has kept no copies yet; it keeps them in folders with backup = true (kaja "
          "persona folder add P PATH --backup).\n");
    }
    return kExitOk;
  }
  printCopies(*copies, asJson);
  return kExitOk;
}

// Returns true when `path` is `folder` or inside it.
bool inside(const std::string& path, const std::string& folder) {
  return !folder.empty() && (path == folder || path.starts_with(folder + "/"));
}

// Refuses to restore onto anything but a regular file (or no file), or into kaja's own
// folders; returns nullopt when the restore may go ahead.
std::optional<core::Error> refusal(const core::Paths& paths, const std::string& file) {
  auto refuse = [](const std::string& message) {
    return core::Error{core::ErrorCode::kRefused, message, {}, {}};
  };
  for (const auto& own : {paths.configDir, paths.dataDir}) {
    std::error_code ec;
    std::string real = fs::weakly_canonical(own, ec).string();
    if (inside(file, own) || (!ec && inside(file, real))) {
      return refuse(core::quoteForMessage(file) +
                    " is inside kaja's own folders; kaja restores only files that calls changed.");
    }
  }
  struct stat info {};
  if (::lstat(file.c_str(), &info) != 0) {
    if (errno == ENOENT) return std::nullopt;
    return core::Error{core::ErrorCode::kIo, core::syscallMessage("lstat", file, errno), {}, {}};
  }
  if (S_ISLNK(info.st_mode)) {
    return refuse(core::quoteForMessage(file) +
                  " is a symbolic link; kaja puts a copy back only in place of a regular file, "
                  "so remove the link or name the file it points to.");
  }
  if (!S_ISREG(info.st_mode)) {
    return refuse(core::quoteForMessage(file) +
                  " is not a regular file; move it away first to put the copy back.");
  }
  return std::nullopt;
}

// Returns the copy named `stamp` (the newest when empty), or a usage error listing the
// stamps there are.
core::Result<policy::StoredCopy> chooseCopy(const std::vector<policy::StoredCopy>& copies,
                                            const std::string& file, const std::string& stamp) {
  if (copies.empty()) {
    return core::fail(core::ErrorCode::kNotFound, "kaja has kept no copies of " +
                                                      core::quoteForMessage(file) +
                                                      "; `kaja backups` lists the files it has.");
  }
  if (stamp.empty()) return copies.front();
  for (const auto& copy : copies) {
    if (copy.entry.stamp == stamp) return copy;
  }
  std::string known;
  for (size_t i = 0; i < copies.size() && i < kStampsShown; ++i) {
    known += (i == 0 ? "" : ", ") + copies[i].entry.stamp;
  }
  if (copies.size() > kStampsShown) {
    known += " and " + std::to_string(copies.size() - kStampsShown) + " older";
  }
  return core::fail(core::ErrorCode::kUsage, "There is no copy " + core::quoteForMessage(stamp) +
                                                 " of " + core::quoteForMessage(file) +
                                                 "; its copies, newest first, are " + known + ".");
}

// Writes the audit row of a restore typed at the shell, as kaja's own restore_backup tool
// writes one for a model's; a log that cannot be written is a warning, the restore stands.
void auditRestore(const core::Paths& paths, policy::AuditDecision decision,
                  const std::string& rule) {
  auto log = policy::AuditLog::open(paths.dataDir);
  policy::AuditRecord record;
  record.time = std::chrono::system_clock::now();
  record.ability = policy::kKajaAbility;
  record.tool = "restore_backup";
  record.decision = decision;
  record.rule = rule;
  record.isError = decision != policy::AuditDecision::kAllowed;
  record.argumentNames = {"path", "stamp"};
  auto written = log ? log->append(record) : std::unexpected(log.error());
  if (!written) printWarning("no audit row was written: " + written.error().describe());
}

int restoreCopy(const core::Paths& paths, const std::string& given, const std::string& stamp,
                bool asJson) {
  auto file = storePath(given);
  if (!file) return reportError(file.error());
  if (auto refused = refusal(paths, *file)) {
    if (refused->code != core::ErrorCode::kRefused) return reportError(*refused);
    auditRestore(paths, policy::AuditDecision::kRefused, std::string(policy::rule::kBackup));
    printRefusal(refused->message);
    return kExitRefused;
  }
  policy::BackupStore store(paths.backupsDir);
  auto copies = copiesOf(store, *file);
  if (!copies) return reportError(copies.error());
  auto chosen = chooseCopy(*copies, *file, stamp);
  if (!chosen) return reportError(chosen.error());
  auto kept = store.restoreBackup(*file, chosen->entry.stamp);
  auditRestore(paths, kept ? policy::AuditDecision::kAllowed : policy::AuditDecision::kFailed, "");
  if (!kept) return reportError(kept.error());
  auto before = *kept ? store.describeCopy(**kept) : std::nullopt;
  if (asJson) {
    json out = {{"path", *file},
                {"restored", copyJson(*chosen)},
                {"kept", before ? copyJson(*before) : json()}};
    std::printf("%s\n", jsonText(out).c_str());
    return kExitOk;
  }
  std::string what = before ? "the file it replaced is kept as copy " + before->entry.stamp +
                                  ", so running this again undoes it"
                            : "there was no file there before";
  printNote("restored " + *file + " from the copy " + chosen->entry.stamp + " (" +
            stampTime(chosen->entry.stamp) + "); " + what + ".");
  return kExitOk;
}

}  // namespace

int runBackups(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--json"});
  if (!parsed) return reportError(parsed.error());
  const auto& words = parsed->positional;
  auto paths = core::Paths::fromEnvironment();
  if (!paths) return reportError(paths.error());
  bool asJson = parsed->has("--json");
  if (!words.empty() && words[0] == "restore") {
    if (words.size() < 2 || words.size() > 3) {
      printError(
          "usage: kaja backups restore PATH [STAMP] (`kaja backups PATH` lists the stamps).");
      return kExitUsage;
    }
    return restoreCopy(*paths, words[1], words.size() == 3 ? words[2] : "", asJson);
  }
  if (words.size() > 1) {
    printError(
        "kaja backups takes at most one PATH; to put a copy back, run `kaja backups "
        "restore PATH [STAMP]`.");
    return kExitUsage;
  }
  return listCopies(*paths, words.empty() ? std::nullopt : std::optional(words[0]), asJson);
}

}  // namespace kaja::cli
