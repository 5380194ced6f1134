#include "core/process/cpu_time.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "core/util/sys.h"

namespace kaja::core {
namespace {

struct StatFields {
  long group = -1;
  unsigned long long ticks = 0;  ///< utime + stime + cutime + cstime
};

// Parses /proc/<pid>/stat. The command name (field 2) may hold spaces and parentheses, so
// the fields are counted from the last ')'.
std::optional<StatFields> readStat(const std::string& pid) {
  auto text = readTextFile("/proc/" + pid + "/stat");
  if (!text) return std::nullopt;
  auto close = text->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  const char* cursor = text->c_str() + close + 1;
  StatFields fields;
  // Field 3 is the state; the numbers start at field 4 (ppid).
  for (int field = 3; field <= 17; ++field) {
    while (*cursor == ' ') ++cursor;
    if (*cursor == '\0') return std::nullopt;
    char* end = nullptr;
    if (field >= 4) {
      long long value = std::strtoll(cursor, &end, 10);
      if (field == 5) fields.group = static_cast<long>(value);
      if (field >= 14 && value > 0) fields.ticks += static_cast<unsigned long long>(value);
      cursor = end;
    } else {
      while (*cursor != ' ' && *cursor != '\0') ++cursor;
    }
  }
  return fields;
}

}  // namespace

std::optional<std::chrono::milliseconds> processGroupCpuTime(pid_t group) {
  std::unique_ptr<DIR, int (*)(DIR*)> proc(::opendir("/proc"), ::closedir);
  if (!proc) return std::nullopt;
  const long ticksPerSecond = ::sysconf(_SC_CLK_TCK);
  if (ticksPerSecond <= 0) return std::nullopt;
  bool found = false;
  unsigned long long ticks = 0;
  while (const dirent* entry = ::readdir(proc.get())) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    auto fields = readStat(entry->d_name);
    if (!fields || fields->group != group) continue;
    found = true;
    ticks += fields->ticks;
  }
  if (!found) return std::nullopt;
  return std::chrono::milliseconds(ticks * 1000 / static_cast<unsigned long long>(ticksPerSecond));
}

}  // namespace kaja::core
