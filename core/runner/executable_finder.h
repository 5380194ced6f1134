#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kaja::core {

/// Finds programs the way a shell would, in a given PATH, plus kaja's own tools folders.
class ExecutableFinder {
 public:
  /// `path` is a PATH-style list; `extraDirs` are searched after it.
  ExecutableFinder(std::string path, std::vector<std::string> extraDirs = {});

  /// Returns the absolute path of `program`: itself when it holds a '/', else the first
  /// executable regular file named so in the search folders.
  [[nodiscard]] std::optional<std::string> find(const std::string& program) const;

  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> dirs_;
};

}  // namespace kaja::core
