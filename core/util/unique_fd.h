#pragma once

#include <utility>

namespace kaja::core {

/// Owns one file descriptor and closes it on destruction. Move-only; -1 means empty.
class UniqueFd {
 public:
  UniqueFd() = default;
  /// Takes ownership of `fd` (which may be -1).
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  /// Returns the descriptor, still owned by this object, or -1.
  [[nodiscard]] int get() const { return fd_; }
  /// Returns true when a descriptor is held.
  [[nodiscard]] bool valid() const { return fd_ >= 0; }
  /// Gives up ownership and returns the descriptor; the caller must close it.
  [[nodiscard]] int release() { return std::exchange(fd_, -1); }
  /// Closes the held descriptor (if any) and takes `fd` instead.
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

}  // namespace kaja::core
