#include "cli/json_input.h"

namespace kaja::cli {
namespace {

// Returns "line L, column C" of byte `offset` (1-based) in `text`.
std::string position(const std::string& text, size_t offset) {
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i + 1 < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// The parser's own words without its "last read" excerpt, which may hold a secret.
std::string parseReason(const std::string& what) {
  auto start = what.find(": ");
  std::string reason = start == std::string::npos ? what : what.substr(start + 2);
  if (auto last = reason.find("; last read"); last != std::string::npos) reason.resize(last);
  return reason;
}

}  // namespace

core::Result<nlohmann::json> parseJsonInput(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    return core::fail(core::ErrorCode::kUsage, "the JSON is not valid at " +
                                                   position(text, error.byte) + " (" +
                                                   parseReason(error.what()) + ")");
  }
}

}  // namespace kaja::cli
