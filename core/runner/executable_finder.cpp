#include "core/runner/executable_finder.h"

#include <sys/stat.h>
#include <unistd.h>

namespace kaja::core {
namespace {

bool isExecutableFile(const std::string& file) {
  struct stat info {};
  return ::stat(file.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(file.c_str(), X_OK) == 0;
}

}  // namespace

ExecutableFinder::ExecutableFinder(std::string path, std::vector<std::string> extraDirs)
    : path_(std::move(path)) {
  size_t start = 0;
  while (start <= path_.size()) {
    size_t end = path_.find(':', start);
    if (end == std::string::npos) end = path_.size();
    std::string dir = path_.substr(start, end - start);
    // An empty or relative PATH entry would search the current folder: never for kaja.
    if (!dir.empty() && dir.front() == '/') dirs_.push_back(dir);
    start = end + 1;
  }
  for (auto& dir : extraDirs) dirs_.push_back(std::move(dir));
}

std::optional<std::string> ExecutableFinder::find(const std::string& program) const {
  if (program.empty()) return std::nullopt;
  if (program.find('/') != std::string::npos) {
    if (program.front() == '/' && isExecutableFile(program)) return program;
    return std::nullopt;
  }
  for (const auto& dir : dirs_) {
    std::string candidate = dir + "/" + program;
    if (isExecutableFile(candidate)) return candidate;
  }
  return std::nullopt;
}

}  // namespace kaja::core
