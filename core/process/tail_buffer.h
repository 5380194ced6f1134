#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kaja::core {

/// Keeps the last `capacity` bytes appended to it (a server's stderr, say), so a chatty
/// child cannot make kaja's memory grow. Not thread-safe.
class TailBuffer {
 public:
  /// Creates an empty buffer that keeps at most `capacity` bytes.
  explicit TailBuffer(std::size_t capacity) : capacity_(capacity) {}

  /// Appends `bytes`, dropping the oldest bytes beyond the capacity.
  void append(std::string_view bytes) {
    total_ += bytes.size();
    if (bytes.size() >= capacity_) {
      data_.assign(bytes.substr(bytes.size() - capacity_));
      return;
    }
    data_.append(bytes);
    // Trimming only once the string has doubled keeps appends amortised O(1).
    if (data_.size() > 2 * capacity_) data_.erase(0, data_.size() - capacity_);
  }

  /// Returns the kept tail, at most `capacity` bytes.
  [[nodiscard]] std::string tail() const {
    return data_.size() > capacity_ ? data_.substr(data_.size() - capacity_) : data_;
  }

  /// Returns the last non-empty line of the tail, without its newline ("" if none).
  [[nodiscard]] std::string lastLine() const {
    std::string_view view(data_);
    while (!view.empty() && (view.back() == '\n' || view.back() == '\r' || view.back() == ' '))
      view.remove_suffix(1);
    const auto start = view.find_last_of('\n');
    return std::string(start == std::string_view::npos ? view : view.substr(start + 1));
  }

  /// Returns how many bytes were appended in total, kept or not.
  [[nodiscard]] std::size_t totalBytes() const { return total_; }

 private:
  std::size_t capacity_;
  std::size_t total_ = 0;
  std::string data_;
};

}  // namespace kaja::core
