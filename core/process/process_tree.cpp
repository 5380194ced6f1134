#include "core/process/process_tree.h"

#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "core/util/sys.h"
#include "core/util/unique_fd.h"

namespace kaja::core {
namespace {

// A tree that keeps growing while it is frozen is walked at most this many times.
constexpr int kMaxWalks = 64;

struct Stat {
  char state = '?';
  pid_t parent = -1;
};

// Parses /proc/<pid>/stat; the command name (field 2) may hold spaces and parentheses, so
// the fields are counted from the last ')'.
std::optional<Stat> readStat(const std::string& pid) {
  auto text = readTextFile("/proc/" + pid + "/stat");
  if (!text) return std::nullopt;
  const auto close = text->rfind(')');
  if (close == std::string::npos || close + 4 >= text->size()) return std::nullopt;
  Stat stat;
  stat.state = (*text)[close + 2];
  stat.parent = static_cast<pid_t>(std::strtol(text->c_str() + close + 4, nullptr, 10));
  return stat;
}

void appendNumbers(const std::string& text, std::vector<pid_t>& out) {
  const char* cursor = text.c_str();
  while (*cursor != '\0') {
    char* end = nullptr;
    const long value = std::strtol(cursor, &end, 10);
    if (end == cursor) break;
    if (value > 0) out.push_back(static_cast<pid_t>(value));
    cursor = end;
  }
}

std::vector<pid_t> childrenByScan(pid_t pid) {
  std::vector<pid_t> out;
  std::unique_ptr<DIR, int (*)(DIR*)> proc(::opendir("/proc"), ::closedir);
  if (!proc) return out;
  while (const dirent* entry = ::readdir(proc.get())) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    auto stat = readStat(entry->d_name);
    if (stat && stat->parent == pid) out.push_back(static_cast<pid_t>(std::atol(entry->d_name)));
  }
  return out;
}

UniqueFd openPidfd(pid_t pid) {
  return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
}

bool sendThrough(const UniqueFd& pidfd, int signal) {
  return ::syscall(SYS_pidfd_send_signal, pidfd.get(), signal, nullptr, 0) == 0;
}

// A process found under `parent`, pinned so that its pid cannot name another process.
struct Pinned {
  pid_t pid;
  UniqueFd pidfd;
};

// Pins each child of `parent` and keeps those that still have `parent` as their parent
// once pinned; a child reaped and replaced before pidfd_open fails this check.
void pinChildren(pid_t parent, std::vector<Pinned>& found) {
  for (const pid_t child : childrenOf(parent)) {
    if (std::any_of(found.begin(), found.end(), [&](const Pinned& p) { return p.pid == child; })) {
      continue;
    }
    UniqueFd pidfd = openPidfd(child);
    if (!pidfd.valid()) continue;
    if (parentOf(child) != parent || !sendThrough(pidfd, 0)) continue;
    found.push_back(Pinned{child, std::move(pidfd)});
  }
}

// Walks the tree under `root` breadth first, sending `signal` (0 for none) to each process
// as it is found, so that with SIGSTOP a process is frozen before its children are listed.
std::vector<Pinned> walk(pid_t root, int signal) {
  std::vector<Pinned> found;
  pinChildren(root, found);
  for (size_t next = 0; next < found.size(); ++next) {
    if (signal != 0) sendThrough(found[next].pidfd, signal);
    pinChildren(found[next].pid, found);
  }
  return found;
}

}  // namespace

std::vector<pid_t> childrenOf(pid_t pid) {
  const std::string base = "/proc/" + (pid == 0 ? std::string("self") : std::to_string(pid));
  std::unique_ptr<DIR, int (*)(DIR*)> tasks(::opendir((base + "/task").c_str()), ::closedir);
  if (!tasks) return {};
  std::vector<pid_t> out;
  bool listed = false;
  while (const dirent* entry = ::readdir(tasks.get())) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    auto text = readTextFile(base + "/task/" + entry->d_name + "/children");
    if (!text) continue;
    listed = true;
    appendNumbers(*text, out);
  }
  if (!listed) return childrenByScan(pid == 0 ? ::getpid() : pid);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

pid_t parentOf(pid_t pid) {
  auto stat = readStat(std::to_string(pid));
  return stat ? stat->parent : -1;
}

bool isZombieOrGone(pid_t pid) {
  auto stat = readStat(std::to_string(pid));
  return !stat || stat->state == 'Z' || stat->state == 'X';
}

int signalDescendants(pid_t root, int signal) {
  if (signal != SIGKILL) return static_cast<int>(walk(root, signal).size());
  // Frozen processes cannot fork, so once a walk finds nothing new the set is closed.
  std::vector<Pinned> frozen;
  for (int round = 0; round < kMaxWalks; ++round) {
    auto found = walk(root, SIGSTOP);
    const bool grew = std::any_of(found.begin(), found.end(), [&](const Pinned& p) {
      return std::none_of(frozen.begin(), frozen.end(),
                          [&](const Pinned& q) { return q.pid == p.pid; });
    });
    frozen = std::move(found);
    if (!grew) break;
  }
  for (const auto& process : frozen) sendThrough(process.pidfd, SIGKILL);
  return static_cast<int>(frozen.size());
}

}  // namespace kaja::core
