// Memory and pids limits per confined server: cgroup v2, else v1.
#include "sandbox/cgroups.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <optional>
#include <sstream>
#include <string_view>
#include <thread>
#include <utility>

#include "core/util/sys.h"
#include "core/util/unique_fd.h"

namespace kaja::sandbox {
namespace {

using core::ErrorCode;
using Clock = std::chrono::steady_clock;

constexpr auto kRemoveTime = std::chrono::seconds(2);
constexpr auto kPollStep = std::chrono::milliseconds(5);

/// One line of /proc/self/mountinfo, the parts kaja needs.
struct MountEntry {
  std::string root;        ///< the folder of the hierarchy mounted
  std::string mountPoint;  ///< where
  std::string fsType;
  std::string superOptions;  ///< for cgroup v1, the controllers ("rw,memory")
};

/// Undoes mountinfo's octal escapes ("\040" for a space).
std::string unescape(std::string_view field) {
  auto octal = [](char c) { return c >= '0' && c <= '7'; };
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() && octal(field[i + 1]) && octal(field[i + 2]) &&
        octal(field[i + 3])) {
      out.push_back(static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                                      (field[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(field[i]);
    }
  }
  return out;
}

std::vector<MountEntry> parseMounts(std::string_view mountinfo) {
  std::vector<MountEntry> mounts;
  std::istringstream lines{std::string(mountinfo)};
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::vector<std::string> parts;
    for (std::string part; fields >> part;) parts.push_back(part);
    const auto dash = std::ranges::find(parts, "-");
    if (parts.size() < 5 || dash == parts.end() || parts.end() - dash < 4) continue;
    mounts.push_back({unescape(parts[3]), unescape(parts[4]), *(dash + 1), *(dash + 3)});
  }
  return mounts;
}

bool hasWord(std::string_view text, std::string_view word) {
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find_first_of(", \n", start);
    if (end == std::string_view::npos) end = text.size();
    if (text.substr(start, end - start) == word) return true;
    start = end + 1;
  }
  return false;
}

/// Returns the cgroup path in the hierarchy whose /proc/self/cgroup controller field is, or
/// contains, `controller` ("" for the unified tree).
std::optional<std::string> ownPath(std::string_view cgroup, std::string_view controller) {
  std::istringstream lines{std::string(cgroup)};
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string_view field = std::string_view(line).substr(first + 1, second - first - 1);
    const bool match =
        controller.empty() ? (field.empty() && line.starts_with("0:")) : hasWord(field, controller);
    if (match) return line.substr(second + 1);
  }
  return std::nullopt;
}

/// Returns the folder of cgroup `path` under the mount `m`, or nullopt when `m` does not
/// show it.
std::optional<std::string> folderOf(const MountEntry& m, const std::string& path) {
  if (m.root == "/") return path == "/" ? m.mountPoint : m.mountPoint + path;
  if (path == m.root) return m.mountPoint;
  if (path.starts_with(m.root + "/")) return m.mountPoint + path.substr(m.root.size());
  return std::nullopt;
}

std::optional<std::string> ownCgroupFolder(std::string_view controller) {
  return cgroupFolder(core::readTextFile("/proc/self/mountinfo").value_or(""),
                      core::readTextFile("/proc/self/cgroup").value_or(""), controller);
}

core::Result<void> writeFile(const std::string& path, std::string_view content) {
  core::UniqueFd fd(core::retryOnEintr([&] { return ::open(path.c_str(), O_WRONLY | O_CLOEXEC); }));
  if (!fd.valid()) return core::fail(ErrorCode::kIo, core::syscallMessage("open", path, errno));
  if (core::retryOnEintr([&] { return ::write(fd.get(), content.data(), content.size()); }) < 0) {
    return core::fail(ErrorCode::kIo, core::syscallMessage("write", path, errno));
  }
  return {};
}

core::Result<void> makeFolder(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return core::fail(ErrorCode::kIo, core::syscallMessage("mkdir", path, errno));
  }
  return {};
}

bool validGroupName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name == "." || name == "..") return false;
  return std::ranges::all_of(name, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

/// Finds the unified tree's folder for this process when memory and pids can be given to
/// children there; returns it, or the reason it cannot.
core::Result<std::string> unifiedBase() {
  const auto dir = ownCgroupFolder("");
  if (!dir) return core::fail(ErrorCode::kIo, "this process's cgroup v2 folder is not mounted");
  const auto controllers = core::readTextFile(*dir + "/cgroup.controllers").value_or("");
  if (!hasWord(controllers, "memory") || !hasWord(controllers, "pids")) {
    return core::fail(ErrorCode::kIo, "cgroup v2 at " + *dir + " has no memory and pids");
  }
  const auto enabled = core::readTextFile(*dir + "/cgroup.subtree_control").value_or("");
  if (!hasWord(enabled, "memory") || !hasWord(enabled, "pids")) {
    auto wrote = writeFile(*dir + "/cgroup.subtree_control", "+memory +pids");
    if (!wrote) return std::unexpected(wrote.error());
  }
  return *dir;
}

/// Finds this process's v1 folder of `controller` ("memory", "pids").
core::Result<std::string> legacyBase(std::string_view controller) {
  if (const auto dir = ownCgroupFolder(controller)) return *dir;
  return core::fail(ErrorCode::kIo, "no cgroup v1 " + std::string(controller) + " hierarchy");
}

void removeFolders(const std::vector<std::string>& folders) {
  for (auto it = folders.rbegin(); it != folders.rend(); ++it) ::rmdir(it->c_str());
}

std::string numberOrMax(std::uint64_t value) { return value == 0 ? "max" : std::to_string(value); }

}  // namespace

std::optional<std::string> cgroupFolder(std::string_view mountinfo, std::string_view cgroup,
                                        std::string_view controller) {
  const auto own = ownPath(cgroup, controller);
  if (!own) return std::nullopt;
  for (const auto& m : parseMounts(mountinfo)) {
    const bool fits = controller.empty()
                          ? m.fsType == "cgroup2"
                          : m.fsType == "cgroup" && hasWord(m.superOptions, controller);
    if (!fits) continue;
    if (auto dir = folderOf(m, *own)) return dir;
  }
  return std::nullopt;
}

ServerCgroup::ServerCgroup(ServerCgroup&& other) noexcept
    : folders_(std::exchange(other.folders_, {})), unified_(other.unified_) {}

ServerCgroup& ServerCgroup::operator=(ServerCgroup&& other) noexcept {
  if (this != &other) {
    (void)remove();
    folders_ = std::exchange(other.folders_, {});
    unified_ = other.unified_;
  }
  return *this;
}

ServerCgroup::~ServerCgroup() { (void)remove(); }

std::vector<pid_t> ServerCgroup::pids() const {
  std::vector<pid_t> pids;
  for (const auto& dir : folders_) {
    std::istringstream text(core::readTextFile(dir + "/cgroup.procs").value_or(""));
    for (pid_t pid = 0; text >> pid;) {
      if (pid > 0 && std::ranges::find(pids, pid) == pids.end()) pids.push_back(pid);
    }
  }
  return pids;
}

core::Result<void> ServerCgroup::remove() {
  if (folders_.empty()) return {};
  if (unified_) (void)writeFile(folders_.front() + "/cgroup.kill", "1");
  const auto deadline = Clock::now() + kRemoveTime;
  std::vector<std::string> left = folders_;
  while (true) {
    for (const pid_t pid : pids()) ::kill(pid, SIGKILL);
    std::erase_if(
        left, [](const std::string& dir) { return ::rmdir(dir.c_str()) == 0 || errno == ENOENT; });
    if (left.empty() || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(kPollStep);
  }
  folders_ = left;
  if (left.empty()) return {};
  return core::fail(ErrorCode::kIo, "the cgroup " + left.front() +
                                        " still has processes after 2 s; kill them and remove "
                                        "the folder by hand");
}

CgroupTree::CgroupTree(CgroupTree&& other) noexcept
    : parents_(std::exchange(other.parents_, {})), unified_(other.unified_) {}

CgroupTree& CgroupTree::operator=(CgroupTree&& other) noexcept {
  if (this != &other) {
    removeFolders(parents_);
    parents_ = std::exchange(other.parents_, {});
    unified_ = other.unified_;
  }
  return *this;
}

CgroupTree::~CgroupTree() { removeFolders(parents_); }

core::Result<CgroupTree> CgroupTree::open(const std::string& name) {
  if (!validGroupName(name)) {
    return core::fail(ErrorCode::kInvalidConfig,
                      "the cgroup name \"" + name + "\" may use only letters, digits, . _ -");
  }
  CgroupTree tree;
  std::string why;
  if (auto base = unifiedBase()) {
    const std::string parent = *base + "/" + name;
    auto made = makeFolder(parent);
    if (made) made = writeFile(parent + "/cgroup.subtree_control", "+memory +pids");
    if (made) {
      tree.parents_ = {parent};
      tree.unified_ = true;
      return tree;
    }
    ::rmdir(parent.c_str());
    why = made.error().message;
  } else {
    why = base.error().message;
  }
  for (const char* controller : {"memory", "pids"}) {
    auto base = legacyBase(controller);
    auto made = base ? makeFolder(*base + "/" + name) : std::unexpected(base.error());
    if (!made) {
      removeFolders(tree.parents_);
      tree.parents_.clear();
      return core::fail(ErrorCode::kIo,
                        "memory and pids limits are off: kaja found no cgroup tree it may write "
                        "(v2 with memory and pids delegated, or v1 memory and pids), so servers "
                        "run without them",
                        {}, why + "; " + made.error().message);
    }
    tree.parents_.push_back(*base + "/" + name);
  }
  return tree;
}

core::Result<ServerCgroup> CgroupTree::create(const std::string& name,
                                              const CgroupLimits& limits) const {
  if (!validGroupName(name)) {
    return core::fail(ErrorCode::kInvalidConfig,
                      "the cgroup name \"" + name + "\" may use only letters, digits, . _ -");
  }
  ServerCgroup group;  // removes what was made if a step below fails
  group.unified_ = unified_;
  for (const auto& parent : parents_) {
    auto made = makeFolder(parent + "/" + name);
    if (!made) return std::unexpected(made.error());
    group.folders_.push_back(parent + "/" + name);
  }
  core::Result<void> set;
  if (unified_) {
    const auto& dir = group.folders_.front();
    set = writeFile(dir + "/memory.max", numberOrMax(limits.memoryBytes));
    if (set && limits.memoryBytes != 0) {
      (void)writeFile(dir + "/memory.swap.max", "0");  // absent without swap accounting
      (void)writeFile(dir + "/memory.oom.group", "1");
    }
    if (set) set = writeFile(dir + "/pids.max", numberOrMax(limits.pids));
  } else {
    const auto& memory = group.folders_.front();
    if (limits.memoryBytes != 0) {
      const auto bytes = std::to_string(limits.memoryBytes);
      set = writeFile(memory + "/memory.limit_in_bytes", bytes);
      if (set) (void)writeFile(memory + "/memory.memsw.limit_in_bytes", bytes);
    }
    if (set) set = writeFile(group.folders_.back() + "/pids.max", numberOrMax(limits.pids));
  }
  if (!set) return std::unexpected(set.error());
  return group;
}

}  // namespace kaja::sandbox
