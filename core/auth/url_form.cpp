#include "core/auth/url_form.h"

#include <cctype>

#include "core/util/percent.h"

namespace kaja::core::auth {

std::string percentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4U];
      out += kHex[byte & 15U];
    }
  }
  return out;
}

std::string encodeForm(const FormFields& fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out += '&';
    out += percentEncode(name);
    out += '=';
    out += percentEncode(value);
  }
  return out;
}

std::map<std::string, std::string> parseQuery(std::string_view query) {
  std::map<std::string, std::string> out;
  std::size_t pos = 0;
  while (pos <= query.size()) {
    std::size_t end = query.find('&', pos);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view pair = query.substr(pos, end - pos);
    if (!pair.empty()) {
      const std::size_t eq = pair.find('=');
      out.emplace(
          percentDecode(pair.substr(0, eq), true),
          eq == std::string_view::npos ? std::string() : percentDecode(pair.substr(eq + 1), true));
    }
    pos = end + 1;
  }
  return out;
}

}  // namespace kaja::core::auth
