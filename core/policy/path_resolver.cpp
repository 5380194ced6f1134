#include "core/policy/path_resolver.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <optional>

#include "core/util/sys.h"
#include "core/util/unicode.h"

namespace kaja::core::policy {
namespace {

constexpr int kMaxSymlinks = 40;  // what the kernel allows before ELOOP

std::vector<std::string> splitComponents(std::string_view path) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > pos) parts.emplace_back(path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string>& parts) {
  std::string path;
  for (const auto& part : parts) path += "/" + part;
  return path;
}

bool isAscii(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

bool equalIgnoringAsciiCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
           return lower(x) == lower(y);
         });
}

// The forms names are compared in: folded (what servers and case-insensitive mounts map), and
// for folders also the confusable skeleton, folded first and folded after (Cyrillic К and
// Latin K only meet the second way).
struct NameKeys {
  std::string folded;
  std::string foldedSkeleton;
  std::string skeletonFolded;
};

// One name compared with many: its keys are made once, and only when a name that is not
// ASCII needs them. With `lookAlikes` false only the folded form is compared, which is what
// a server may map a missing name through; look-alikes are for matching folders.
class NameMatcher {
 public:
  NameMatcher(std::string_view name, bool lookAlikes)
      : name_(name), ascii_(isAscii(name)), lookAlikes_(lookAlikes) {}

  bool matches(std::string_view other) {
    if (other == name_) return true;
    if (ascii_ && isAscii(other)) return equalIgnoringAsciiCase(name_, other);
    if (!keys_) keys_ = keysOf(name_);
    NameKeys theirs = keysOf(other);
    return theirs.folded == keys_->folded ||
           (lookAlikes_ && (theirs.foldedSkeleton == keys_->foldedSkeleton ||
                            theirs.skeletonFolded == keys_->skeletonFolded));
  }

 private:
  [[nodiscard]] NameKeys keysOf(std::string_view name) const {
    NameKeys keys{unicode::nfkcCasefold(name), {}, {}};
    if (lookAlikes_) {
      keys.foldedSkeleton = unicode::confusableSkeleton(keys.folded);
      keys.skeletonFolded = unicode::nfkcCasefold(unicode::confusableSkeleton(name));
    }
    return keys;
  }

  std::string_view name_;
  bool ascii_;
  bool lookAlikes_;
  std::optional<NameKeys> keys_;
};

// One reading of a path part way through resolution.
struct Walk {
  std::vector<std::string> real;     // existing components, symlinks already followed
  std::deque<std::string> pending;   // components still to look at
  std::vector<std::string> missing;  // lexical tail below the first component that is absent
  int links = 0;
};

// Lists the names in `dir` that a server could take for `part`, other than `part` itself.
Result<std::vector<std::string>> equivalentEntries(const std::string& dir, const std::string& part,
                                                   size_t maxEntries) {
  std::vector<std::string> matches;
  int fd = retryOnEintr(
      [&] { return ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW); });
  if (fd < 0) return matches;  // a folder that cannot be listed has no names to confuse
  DIR* listing = ::fdopendir(fd);
  if (listing == nullptr) {
    ::close(fd);
    return matches;
  }
  size_t seen = 0;
  bool tooMany = false;
  NameMatcher matcher(part, /*lookAlikes=*/false);
  while (const dirent* entry = ::readdir(listing)) {
    std::string_view name(entry->d_name);
    if (name == "." || name == ".." || name == part) continue;
    if (++seen > maxEntries) {
      tooMany = true;
      break;
    }
    if (matcher.matches(name)) matches.emplace_back(name);
  }
  ::closedir(listing);
  if (tooMany) {
    return fail(ErrorCode::kRefused, dir + " holds more than " + std::to_string(maxEntries) +
                                         " entries, too many to look for names equivalent "
                                         "to \"" +
                                         part + "\"");
  }
  return matches;
}

// Follows `walk` to its end. Where the next component is missing and `forks` is given, every
// existing equivalent name becomes a new walk appended to `forks`.
Result<std::string> finishWalk(Walk walk, std::vector<Walk>* forks, size_t maxEntries) {
  while (!walk.pending.empty()) {
    std::string part = std::move(walk.pending.front());
    walk.pending.pop_front();
    if (part == ".") continue;
    if (part == "..") {
      // A missing component is no symlink, so its parent is lexical; a real one's is real.
      if (!walk.missing.empty()) {
        walk.missing.pop_back();
      } else if (!walk.real.empty()) {
        walk.real.pop_back();
      }
      continue;
    }
    if (!walk.missing.empty()) {
      walk.missing.push_back(std::move(part));
      continue;
    }
    std::string parent = join(walk.real);
    std::string candidate = parent + "/" + part;
    struct stat info {};
    if (::lstat(candidate.c_str(), &info) != 0) {
      if (errno != ENOENT && errno != ENOTDIR) {
        return fail(ErrorCode::kIo, syscallMessage("lstat", candidate, errno));
      }
      if (forks != nullptr && errno == ENOENT) {
        auto matches = equivalentEntries(parent.empty() ? "/" : parent, part, maxEntries);
        if (!matches) return std::unexpected(matches.error());
        for (auto& match : *matches) {
          Walk fork = walk;
          fork.pending.push_front(std::move(match));
          forks->push_back(std::move(fork));
        }
      }
      walk.missing.push_back(std::move(part));
      continue;
    }
    if (!S_ISLNK(info.st_mode)) {
      walk.real.push_back(std::move(part));
      continue;
    }
    // The links of /proc (self, thread-self, a process's cwd, root and fd) read differently
    // in each process: what kaja would find is not what a server finds.
    if (!walk.real.empty() && walk.real.front() == "proc") {
      return fail(ErrorCode::kRefused,
                  candidate +
                      " is a link in /proc, which each process reads as its own (its "
                      "working folder, root or open files), so where the path lands "
                      "depends on which process opens it");
    }
    if (++walk.links > kMaxSymlinks) {
      return fail(ErrorCode::kIo, syscallMessage("readlink", candidate, ELOOP));
    }
    std::string target(static_cast<size_t>(info.st_size > 0 ? info.st_size : 256) + 1, '\0');
    ssize_t length = ::readlink(candidate.c_str(), target.data(), target.size());
    if (length < 0) return fail(ErrorCode::kIo, syscallMessage("readlink", candidate, errno));
    if (static_cast<size_t>(length) >= target.size()) {
      return fail(ErrorCode::kIo, "readlink(" + candidate + "): the link changed while read");
    }
    target.resize(static_cast<size_t>(length));
    if (target.starts_with("/")) walk.real.clear();
    auto parts = splitComponents(target);
    walk.pending.insert(walk.pending.begin(), parts.begin(), parts.end());
  }
  std::string resolved = join(walk.real) + join(walk.missing);
  return resolved.empty() ? std::string("/") : resolved;
}

Walk startWalk(std::string_view absolutePath) {
  Walk walk;
  auto parts = splitComponents(absolutePath);
  walk.pending.assign(parts.begin(), parts.end());
  return walk;
}

std::optional<Error> relativeError(std::string_view path) {
  if (!path.empty() && path.front() == '/') return std::nullopt;
  return Error{ErrorCode::kUsage, "\"" + std::string(path) + "\" is not an absolute path", {}, {}};
}

}  // namespace

Result<std::string> resolvePath(std::string_view absolutePath) {
  if (auto error = relativeError(absolutePath)) return std::unexpected(*error);
  return finishWalk(startWalk(absolutePath), nullptr, 0);
}

std::string collapseLexically(std::string_view absolutePath) {
  std::vector<std::string> kept;
  for (auto& part : splitComponents(absolutePath)) {
    if (part == ".") continue;
    if (part == "..") {
      if (!kept.empty()) kept.pop_back();
      continue;
    }
    kept.push_back(std::move(part));
  }
  std::string collapsed = join(kept);
  return collapsed.empty() ? std::string("/") : collapsed;
}

bool equivalentNames(std::string_view a, std::string_view b) {
  return NameMatcher(a, /*lookAlikes=*/true).matches(b);
}

Result<std::vector<std::string>> resolveInterpretations(std::string_view absolutePath,
                                                        const InterpretLimits& limits) {
  if (auto error = relativeError(absolutePath)) return std::unexpected(*error);
  std::vector<Walk> walks = {startWalk(absolutePath)};
  std::string lexical = collapseLexically(absolutePath);
  if (lexical != absolutePath) walks.push_back(startWalk(lexical));
  std::vector<std::string> readings;
  // Each fork replaces a missing name with an existing one, so every walk ends; the budget
  // bounds how many there can be in all.
  size_t budget = limits.maxInterpretations * 4;
  for (size_t i = 0; i < walks.size(); ++i) {
    if (i >= budget) break;
    Walk walk = std::move(walks[i]);
    auto resolved = finishWalk(std::move(walk), &walks, limits.maxDirectoryEntries);
    if (!resolved) return std::unexpected(resolved.error());
    if (std::find(readings.begin(), readings.end(), *resolved) == readings.end()) {
      readings.push_back(std::move(*resolved));
    }
  }
  if (walks.size() > budget || readings.size() > limits.maxInterpretations) {
    return fail(ErrorCode::kRefused,
                "\"" + std::string(absolutePath) + "\" can be read as more than " +
                    std::to_string(limits.maxInterpretations) +
                    " different paths through equivalent names, too many to check");
  }
  return readings;
}

bool isWithin(std::string_view path, std::string_view folder) {
  if (folder == "/") return true;
  return path == folder ||
         (path.size() > folder.size() && path.starts_with(folder) && path[folder.size()] == '/');
}

bool isWithinEquivalent(std::string_view path, std::string_view folder) {
  if (isWithin(path, folder)) return true;
  if (isAscii(path) && isAscii(folder)) {
    return path.size() >= folder.size() &&
           equalIgnoringAsciiCase(path.substr(0, folder.size()), folder) &&
           (path.size() == folder.size() || path[folder.size()] == '/' || folder == "/");
  }
  auto pathParts = splitComponents(path);
  auto folderParts = splitComponents(folder);
  if (folderParts.size() > pathParts.size()) return false;
  for (size_t i = 0; i < folderParts.size(); ++i) {
    if (!equivalentNames(pathParts[i], folderParts[i])) return false;
  }
  return true;
}

size_t componentCount(std::string_view absolutePath) {
  return splitComponents(absolutePath).size();
}

}  // namespace kaja::core::policy
