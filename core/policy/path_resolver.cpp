#include "core/policy/path_resolver.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <deque>
#include <vector>

#include "core/util/sys.h"

namespace kaja::core::policy {
namespace {

constexpr int kMaxSymlinks = 40;  // what the kernel allows before ELOOP

void pushComponents(std::string_view path, std::deque<std::string>& into, bool front) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > pos) parts.emplace_back(path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  if (front) {
    into.insert(into.begin(), parts.begin(), parts.end());
  } else {
    into.insert(into.end(), parts.begin(), parts.end());
  }
}

std::string join(const std::vector<std::string>& parts) {
  std::string path;
  for (const auto& part : parts) path += "/" + part;
  return path;
}

}  // namespace

Result<std::string> resolvePath(std::string_view absolutePath) {
  if (absolutePath.empty() || absolutePath.front() != '/') {
    return fail(ErrorCode::kUsage, "\"" + std::string(absolutePath) + "\" is not an absolute path");
  }
  std::deque<std::string> pending;
  pushComponents(absolutePath, pending, false);
  std::vector<std::string> real;     // existing components, symlinks already followed
  std::vector<std::string> missing;  // lexical tail below the first component that is absent
  int links = 0;
  while (!pending.empty()) {
    std::string part = std::move(pending.front());
    pending.pop_front();
    if (part == ".") continue;
    if (part == "..") {
      // A missing component is no symlink, so its parent is lexical; a real one's is real.
      if (!missing.empty()) {
        missing.pop_back();
      } else if (!real.empty()) {
        real.pop_back();
      }
      continue;
    }
    if (!missing.empty()) {
      missing.push_back(std::move(part));
      continue;
    }
    std::string candidate = join(real) + "/" + part;
    struct stat info {};
    if (::lstat(candidate.c_str(), &info) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) {
        missing.push_back(std::move(part));
        continue;
      }
      return fail(ErrorCode::kIo, syscallMessage("lstat", candidate, errno));
    }
    if (!S_ISLNK(info.st_mode)) {
      real.push_back(std::move(part));
      continue;
    }
    if (++links > kMaxSymlinks) {
      return fail(ErrorCode::kIo, syscallMessage("readlink", candidate, ELOOP));
    }
    std::string target(static_cast<size_t>(info.st_size > 0 ? info.st_size : 256) + 1, '\0');
    ssize_t length = ::readlink(candidate.c_str(), target.data(), target.size());
    if (length < 0) return fail(ErrorCode::kIo, syscallMessage("readlink", candidate, errno));
    if (static_cast<size_t>(length) >= target.size()) {
      return fail(ErrorCode::kIo, "readlink(" + candidate + "): the link changed while read");
    }
    target.resize(static_cast<size_t>(length));
    if (target.starts_with("/")) real.clear();
    pushComponents(target, pending, true);
  }
  std::string resolved = join(real) + join(missing);
  return resolved.empty() ? std::string("/") : resolved;
}

bool isWithin(std::string_view path, std::string_view folder) {
  if (folder == "/") return true;
  return path == folder ||
         (path.size() > folder.size() && path.starts_with(folder) && path[folder.size()] == '/');
}

}  // namespace kaja::core::policy
