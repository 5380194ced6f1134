#include "core/policy/folder_guard.h"

#include <algorithm>

#include "core/paths.h"
#include "core/policy/path_resolver.h"

namespace kaja::core::policy {
namespace {

std::unexpected<Refusal> refuse(std::string_view rule, std::string message) {
  return std::unexpected<Refusal>(Refusal{std::string(rule), std::move(message)});
}

std::string describePath(const std::string& argument, const std::string& given) {
  return "Argument " + argument + " (\"" + given + "\")";
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

Result<FolderGuard> FolderGuard::create(const std::vector<PersonaRoot>& roots, std::string home) {
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

std::expected<CheckedPath, Refusal> FolderGuard::checkOne(const Ability& ability,
                                                          const std::string& argument,
                                                          const std::string& given) const {
  std::string expanded = expandHome(given, home_);
  if (!expanded.starts_with("/")) {
    if (anyReadOnly_ || anyBackup_) {
      return refuse(rule::kRelativePath,
                    describePath(argument, given) +
                        " is a relative path; while a folder is read-only or backed up, paths "
                        "must be absolute or start with ~/.");
    }
    return CheckedPath{argument, given, {}, nullptr};
  }
  auto resolved = resolvePath(expanded);
  if (!resolved) {
    return refuse(rule::kOutsideFolders, describePath(argument, given) + " cannot be checked: " +
                                             resolved.error().message + ".");
  }
  const GuardedFolder* folder = nearestFolder(*resolved);
  if (folder == nullptr) {
    return refuse(rule::kOutsideFolders, describePath(argument, given) + " resolves to " +
                                             *resolved +
                                             ", outside every folder the persona "
                                             "gives " +
                                             ability.name + ".");
  }
  if (folder->readOnly) {
    return refuse(rule::kReadOnlyFolder, describePath(argument, given) + " resolves to " +
                                             *resolved + ", in the read-only folder " +
                                             folder->given + ", so " + ability.name +
                                             " may not write there.");
  }
  return CheckedPath{argument, given, *resolved, folder};
}

std::expected<std::vector<CheckedPath>, Refusal> FolderGuard::check(
    const Ability& ability, const mcp::Json& arguments) const {
  std::vector<CheckedPath> checked;
  if (folders_.empty() || !arguments.is_object()) return checked;
  for (const auto& argument : ability.pathArgs) {
    auto it = arguments.find(argument);
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
