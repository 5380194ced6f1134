#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

namespace kaja::core {

/// Where each field of a UTC time stands in a fixed-width text of digits.
struct UtcDigitsLayout {
  std::size_t year, month, day, hour, minute, second, millis;  ///< offsets (4 digits for
                                                               ///< the year, 3 for millis, 2 else)
};

/// Returns the UTC time whose digits stand at `layout` in `text`, which the caller has already
/// checked holds digits there; nullopt when a field is out of range (month 13, hour 24).
std::optional<std::chrono::system_clock::time_point> utcFromDigits(std::string_view text,
                                                                   const UtcDigitsLayout& layout);

}  // namespace kaja::core
