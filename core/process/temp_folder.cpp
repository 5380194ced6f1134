#include "core/process/temp_folder.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <set>
#include <vector>

#include "core/util/sys.h"
#include "core/util/unique_fd.h"

namespace kaja::core {
namespace {

// Folders deeper than this below the top are moved up to the top and emptied in a later
// pass, so removal holds few descriptors and no path grows past PATH_MAX.
constexpr int kMaxDepth = 32;
constexpr int kMaxPasses = 10000;

// Leaked on purpose: the signal thread may use them while static destructors run.
std::mutex& registryMutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}
std::set<std::string>& registry() {
  static auto* folders = new std::set<std::string>();
  return *folders;
}

constexpr int kFolderFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// Opens folder `name` in `parent` without following a symlink, first giving it owner
// permissions when it has none (a server may chmod 000 what it made).
UniqueFd openFolder(int parent, const char* name) {
  UniqueFd fd(::openat(parent, name, kFolderFlags));
  if (fd.valid() || errno != EACCES) return fd;
  UniqueFd path(::openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!path.valid()) return path;
  ::chmod(("/proc/self/fd/" + std::to_string(path.get())).c_str(), 0700);
  return UniqueFd(::openat(parent, name, kFolderFlags));
}

std::vector<std::string> entriesOf(int dir) {
  std::vector<std::string> names;
  const int listFd = ::fcntl(dir, F_DUPFD_CLOEXEC, 0);
  if (listFd < 0) return names;
  DIR* list = ::fdopendir(listFd);
  if (list == nullptr) {
    ::close(listFd);
    return names;
  }
  ::rewinddir(list);
  while (const dirent* entry = ::readdir(list)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(list);
  return names;
}

// Moves folder `name` in `dir` to a fresh name in `top`.
void moveUp(int dir, const std::string& name, int top, unsigned& moved) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const std::string fresh = ".kaja-deep-" + std::to_string(moved++);
    if (::renameat2(dir, name.c_str(), top, fresh.c_str(), RENAME_NOREPLACE) == 0) return;
    if (errno != EEXIST) return;
  }
}

// Removes what it can inside the folder open as `dir`.
void empty(int dir, int top, int depth, unsigned& moved) {
  ::fchmod(dir, 0700);  // unlinking needs write and search permission on the folder
  for (const auto& name : entriesOf(dir)) {
    if (::unlinkat(dir, name.c_str(), 0) == 0 || errno == ENOENT) continue;
    if (errno != EISDIR && errno != EPERM) continue;
    if (depth >= kMaxDepth) {
      moveUp(dir, name, top, moved);
      continue;
    }
    UniqueFd child = openFolder(dir, name.c_str());
    if (!child.valid()) continue;
    empty(child.get(), top, depth + 1, moved);
    ::unlinkat(dir, name.c_str(), AT_REMOVEDIR);
  }
}

}  // namespace

Result<std::unique_ptr<TempFolder>> TempFolder::create(std::string_view prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = (tmp != nullptr && tmp[0] == '/' ? std::string(tmp) : std::string("/tmp")) +
                     "/" + std::string(prefix) + "XXXXXX";
  std::lock_guard held(registryMutex());
  if (::mkdtemp(path.data()) == nullptr) {
    return fail(ErrorCode::kIo, syscallMessage("mkdtemp", path, errno));
  }
  const int lock = ::open(path.c_str(), kFolderFlags);
  if (lock >= 0) ::flock(lock, LOCK_EX | LOCK_NB);
  registry().insert(path);
  return std::unique_ptr<TempFolder>(new TempFolder(path, lock));
}

TempFolder::~TempFolder() {
  removeTree(path_);
  if (lock_ >= 0) ::close(lock_);
  std::lock_guard held(registryMutex());
  registry().erase(path_);
}

int removeStaleTempFolders(std::string_view prefix, std::chrono::seconds minimumAge) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string base = tmp != nullptr && tmp[0] == '/' ? std::string(tmp) : "/tmp";
  UniqueFd dir(::open(base.c_str(), kFolderFlags));
  if (!dir.valid()) return 0;
  const auto now = std::chrono::system_clock::now();
  int removed = 0;
  for (const auto& name : entriesOf(dir.get())) {
    if (name.rfind(prefix, 0) != 0) continue;
    struct stat info {};
    if (::fstatat(dir.get(), name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISDIR(info.st_mode) || info.st_uid != ::getuid()) continue;
    if (now - std::chrono::system_clock::from_time_t(info.st_mtime) < minimumAge) continue;
    UniqueFd folder(::openat(dir.get(), name.c_str(), kFolderFlags));
    // A live kaja holds the lock; the kernel dropped a killed one's.
    if (!folder.valid() || ::flock(folder.get(), LOCK_EX | LOCK_NB) != 0) continue;
    if (removeTree(base + "/" + name)) ++removed;
  }
  return removed;
}

void removeAllTempFolders() {
  std::lock_guard held(registryMutex());
  for (const auto& path : registry()) removeTree(path);
  registry().clear();
}

bool removeTree(const std::string& path) {
  UniqueFd top = openFolder(AT_FDCWD, path.c_str());
  if (!top.valid()) {
    if (errno == ENOENT) return true;
    // Not a folder (or a symlink to one): the name itself goes, never what it points at.
    return ::unlink(path.c_str()) == 0 || errno == ENOENT;
  }
  unsigned moved = 0;
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    empty(top.get(), top.get(), 0, moved);
    if (::rmdir(path.c_str()) == 0 || errno == ENOENT) return true;
    if (errno != ENOTEMPTY && errno != EEXIST) return false;
  }
  return false;
}

}  // namespace kaja::core
