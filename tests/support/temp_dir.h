#pragma once

#include <string>

namespace kaja::testing {

/// A fresh folder under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  /// Writes `content` to `relative` (creating folders) and returns the full path.
  std::string write(const std::string& relative, const std::string& content) const;
  /// Writes an executable shell script to `relative` and returns the full path.
  std::string writeScript(const std::string& relative, const std::string& body) const;

 private:
  std::string path_;
};

/// Returns the contents of `path`, or "" when it cannot be read.
std::string readFile(const std::string& path);

}  // namespace kaja::testing
