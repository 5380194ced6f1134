#include "core/util/utc_digits.h"

#include <charconv>
#include <ctime>

namespace kaja::core {

std::optional<std::chrono::system_clock::time_point> utcFromDigits(std::string_view text,
                                                                   const UtcDigitsLayout& layout) {
  auto number = [&](std::size_t at, std::size_t length) {
    int value = 0;
    if (at + length <= text.size())
      std::from_chars(text.data() + at, text.data() + at + length, value);
    return value;
  };
  std::tm utc{};
  utc.tm_year = number(layout.year, 4) - 1900;
  utc.tm_mon = number(layout.month, 2) - 1;
  utc.tm_mday = number(layout.day, 2);
  utc.tm_hour = number(layout.hour, 2);
  utc.tm_min = number(layout.minute, 2);
  utc.tm_sec = number(layout.second, 2);
  if (utc.tm_mon < 0 || utc.tm_mon > 11 || utc.tm_mday < 1 || utc.tm_mday > 31 ||
      utc.tm_hour > 23 || utc.tm_min > 59 || utc.tm_sec > 60) {
    return std::nullopt;
  }
  return std::chrono::system_clock::from_time_t(::timegm(&utc)) +
         std::chrono::milliseconds(number(layout.millis, 3));
}

}  // namespace kaja::core
