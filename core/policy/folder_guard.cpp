#include "core/policy/folder_guard.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "core/paths.h"
#include "core/policy/path_resolver.h"
#include "core/policy/text_normalizer.h"
#include "core/util/quote.h"
#include "core/util/unicode.h"

namespace kaja::core::policy {
namespace {

std::unexpected<Refusal> refuse(std::string_view rule, std::string message) {
  return std::unexpected<Refusal>(Refusal{std::string(rule), std::move(message)});
}

// Direction controls make a path read differently on screen than on disk.
bool isDirectionControl(char32_t c) {
  return c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

// Returns the first character no path given by a model may hold, as text for a message, or
// nullopt when there is none: C0 and C1 controls (NUL included), DEL, direction controls and
// bytes that are not UTF-8, none of which any file name a person types contains.
std::optional<std::string> unsafeCharacter(std::string_view path) {
  if (std::all_of(path.begin(), path.end(), [](char c) { return c >= 0x20 && c < 0x7F; })) {
    return std::nullopt;
  }
  if (!unicode::isValidUtf8(path)) return std::string("a byte that is not UTF-8");
  for (char32_t c : decodeUtf8(path)) {
    if (c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F) || isDirectionControl(c)) {
      char code[16];
      std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(c));
      return std::string("the control character ") + code;
    }
  }
  return std::nullopt;
}

std::string describePath(const std::string& argument, const std::string& given) {
  return "Argument " + argument + " (" + quoteForMessage(given) + ")";
}

// Returns how many names (hard links) the file at `path` has when it is not a folder and has
// more than one, else 0. A write through one name changes the file under all of them, and
// the others may lie anywhere on the same file system.
nlink_t otherNames(const std::string& path) {
  struct stat status {};
  if (::lstat(path.c_str(), &status) != 0 || S_ISDIR(status.st_mode)) return 0;
  return status.st_nlink > 1 ? status.st_nlink : 0;
}

}  // namespace

std::vector<PersonaRoot> usableRoots(const Ability& ability, const PersonaEntry& entry) {
  std::vector<PersonaRoot> roots;
  for (const auto& root : entry.roots) {
    if (ability.pathArgs.empty() && (root.readOnly || root.backup)) continue;
    roots.push_back(root);
  }
  return roots;
}

Result<FolderGuard> FolderGuard::create(const std::vector<PersonaRoot>& roots, std::string home,
                                        const std::vector<std::string>& kajaOwn) {
  FolderGuard guard;
  guard.home_ = std::move(home);
  for (const auto& root : roots) {
    std::string expanded = expandHome(root.path, guard.home_);
    if (!expanded.starts_with("/")) {
      return fail(ErrorCode::kInvalidConfig,
                  "Folder \"" + root.path + "\" must be an absolute path or start with ~/.");
    }
    auto resolved = resolvePath(expanded);
    if (!resolved) return std::unexpected(resolved.error());
    guard.folders_.push_back({root.path, *resolved, root.readOnly, root.backup});
    guard.anyReadOnly_ = guard.anyReadOnly_ || root.readOnly;
    guard.anyBackup_ = guard.anyBackup_ || root.backup;
  }
  // kaja's own folders matter only where a root holds them: nothing else reaches them.
  const size_t given = guard.folders_.size();
  for (const auto& own : given == 0 ? std::vector<std::string>() : kajaOwn) {
    auto resolved = resolvePath(own);
    if (!resolved) continue;
    bool reachable = false;
    for (size_t i = 0; i < given; ++i) {
      reachable = reachable || isWithinEquivalent(*resolved, guard.folders_[i].resolved);
    }
    if (!reachable) continue;
    guard.folders_.push_back({own, *resolved, true, false, true});
    guard.relativeReachesKaja_ = true;
  }
  // Longest first, so the first container found is the nearest; on a tie the stricter wins.
  std::stable_sort(guard.folders_.begin(), guard.folders_.end(),
                   [](const GuardedFolder& a, const GuardedFolder& b) {
                     if (a.resolved.size() != b.resolved.size()) {
                       return a.resolved.size() > b.resolved.size();
                     }
                     return a.readOnly && !b.readOnly;
                   });
  return guard;
}

const GuardedFolder* FolderGuard::nearestFolder(const std::string& resolvedPath) const {
  for (const auto& folder : folders_) {
    if (isWithin(resolvedPath, folder.resolved)) return &folder;
  }
  return nullptr;
}

const GuardedFolder* FolderGuard::nearestEquivalentFolder(const std::string& resolvedPath) const {
  const GuardedFolder* nearest = nullptr;
  size_t depth = 0;
  for (const auto& folder : folders_) {
    if (!isWithinEquivalent(resolvedPath, folder.resolved)) continue;
    size_t components = componentCount(folder.resolved);
    if (nearest == nullptr || components > depth ||
        (components == depth && folder.readOnly && !nearest->readOnly)) {
      nearest = &folder;
      depth = components;
    }
  }
  return nearest;
}

std::optional<Refusal> FolderGuard::judgeReading(const Ability& ability, const std::string& reading,
                                                 const std::string& resolved,
                                                 CheckedPath& checked) const {
  auto protectedBy = [&](const GuardedFolder& folder, const std::string& how) {
    if (folder.kajaOwn) {
      return Refusal{std::string(rule::kReadOnlyFolder),
                     reading + ", " + how + " kaja's own folder " + quoteForMessage(folder.given) +
                         " (its settings, data and backups), which no ability may change."};
    }
    return Refusal{std::string(rule::kReadOnlyFolder),
                   reading + ", " + how + " the read-only folder " + folder.given + ", so " +
                       ability.name + " may not write there."};
  };
  const GuardedFolder* folder = nearestFolder(resolved);
  const GuardedFolder* equivalent = nearestEquivalentFolder(resolved);
  if (folder != nullptr && folder->readOnly) return protectedBy(*folder, "in");
  if (equivalent != nullptr && equivalent->readOnly) {
    return protectedBy(*equivalent, "through an equivalent name in");
  }
  if (folder == nullptr) return std::nullopt;
  bool backup = folder->backup || (equivalent != nullptr && equivalent->backup);
  checked.landings.push_back(Landing{resolved, folder, backup});
  // A folder inside the path moves or changes with it: a protected one may not, and a
  // backed-up one is copied first.
  for (const auto& inner : folders_) {
    if (!isWithinEquivalent(inner.resolved, resolved) ||
        isWithinEquivalent(resolved, inner.resolved)) {
      continue;
    }
    if (inner.readOnly) return protectedBy(inner, "which holds");
    if (inner.backup) checked.landings.push_back(Landing{inner.resolved, &inner, true});
  }
  return std::nullopt;
}

std::expected<CheckedPath, Refusal> FolderGuard::checkOne(const Ability& ability,
                                                          const std::string& argument,
                                                          const std::string& given) const {
  if (auto bad = unsafeCharacter(given)) {
    return refuse(rule::kUnsafePath, describePath(argument, given) + " holds " + *bad +
                                         ", which no path kaja lets " + ability.name +
                                         " write may hold.");
  }
  std::string expanded = expandHome(given, home_);
  // Where a relative path lands depends on the server's working folder, which kaja cannot
  // see: "../../x" may climb out of every folder, into kaja's own files as much as anywhere.
  if (!expanded.starts_with("/")) {
    return refuse(rule::kRelativePath,
                  describePath(argument, given) +
                      " is a relative path; a write must land in the persona's folders, and "
                      "kaja can check only a path that is absolute or starts with ~/.");
  }
  auto readings = resolveInterpretations(expanded);
  if (!readings) {
    return refuse(rule::kOutsideFolders, describePath(argument, given) + " cannot be checked: " +
                                             readings.error().message + ".");
  }
  // A server may take the path in any of these ways, so each must land somewhere writable.
  // A read-only folder is the more telling refusal, so it is looked for first.
  CheckedPath checked{argument, given, {}, nullptr, {}};
  std::optional<Refusal> outside;
  for (const auto& resolved : *readings) {
    std::string reading = describePath(argument, given) +
                          (resolved == readings->front() ? " resolves to " : " may be read as ") +
                          quoteForMessage(resolved);
    if (auto refusal = judgeReading(ability, reading, resolved, checked)) {
      return std::unexpected(std::move(*refusal));
    }
    if (!outside && nearestFolder(resolved) == nullptr) {
      outside = Refusal{std::string(rule::kOutsideFolders),
                        reading + ", outside every folder the persona gives " + ability.name + "."};
    }
  }
  if (outside) return std::unexpected(std::move(*outside));
  for (const auto& resolved : *readings) {
    if (const nlink_t names = otherNames(resolved); names > 0) {
      return refuse(rule::kLinkedFile,
                    describePath(argument, given) + " names a file that has " +
                        std::to_string(names) +
                        " names (hard links), so a write would change it under the others "
                        "too, wherever they are; kaja cannot tell that none is in a read-only "
                        "folder or in its own, so " +
                        ability.name + " may not change it.");
    }
  }
  checked.resolved = checked.landings.front().resolved;
  checked.folder = checked.landings.front().folder;
  return checked;
}

std::expected<std::vector<CheckedPath>, Refusal> FolderGuard::check(
    const Ability& ability, const mcp::Json& arguments) const {
  std::vector<CheckedPath> checked;
  if (folders_.empty() || !arguments.is_object()) return checked;
  for (const auto& argument : ability.pathArgs) {
    auto it = arguments.find(argument);
    // null is an argument left out, as strict function calling sends every optional one.
    if (it == arguments.end() || it->is_null()) continue;
    std::vector<std::string> values;
    bool wellFormed = it->is_string();
    if (wellFormed) {
      values.push_back(it->get<std::string>());
    } else if (it->is_array()) {
      wellFormed = std::all_of(it->begin(), it->end(), [](const auto& v) { return v.is_string(); });
      if (wellFormed) {
        for (const auto& value : *it) values.push_back(value.get<std::string>());
      }
    }
    if (!wellFormed) {
      return refuse(rule::kOutsideFolders, "Argument " + argument +
                                               " is neither a path nor a list of paths, so it "
                                               "cannot be checked against the persona's folders.");
    }
    for (const auto& value : values) {
      auto one = checkOne(ability, argument, value);
      if (!one) return std::unexpected(std::move(one.error()));
      checked.push_back(std::move(*one));
    }
  }
  return checked;
}

}  // namespace kaja::core::policy
