#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kaja::core::auth {

/// Name/value pairs in the order they are sent.
using FormFields = std::vector<std::pair<std::string, std::string>>;

/// Returns `text` percent-encoded for a query or an application/x-www-form-urlencoded body:
/// every byte but A-Z a-z 0-9 - . _ ~ becomes %XX.
std::string percentEncode(std::string_view text);

/// Returns `fields` as `a=1&b=2`, each name and value percent-encoded.
std::string encodeForm(const FormFields& fields);

/// Parses a query string (`a=1&b=%20`, no leading '?'), '+' read as a space. A name given
/// twice keeps its first value; a malformed escape is kept as written.
std::map<std::string, std::string> parseQuery(std::string_view query);

}  // namespace kaja::core::auth
