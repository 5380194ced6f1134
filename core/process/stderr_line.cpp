#include "core/process/stderr_line.h"

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <vector>

namespace kaja::core {
namespace {

constexpr std::array<std::string_view, 12> kErrorWords = {"Error:",
                                                          "error:",
                                                          "ERROR",
                                                          "Error [",
                                                          "error[",
                                                          "Exception",
                                                          "panic:",
                                                          "fatal:",
                                                          "FATAL",
                                                          "Cannot find module",
                                                          "Cannot find package",
                                                          "Fatal error"};
// ": not found" is how dash says "command not found".
constexpr std::array<std::string_view, 8> kFailureWords = {"ENOENT",
                                                           "EACCES",
                                                           "EADDRINUSE",
                                                           "No such file",
                                                           "Permission denied",
                                                           "command not found",
                                                           ": not found",
                                                           "Segmentation fault"};

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view trimmed(std::string_view line) {
  while (!line.empty() && isSpace(line.front())) line.remove_prefix(1);
  while (!line.empty() && isSpace(line.back())) line.remove_suffix(1);
  return line;
}

bool containsAny(std::string_view line, std::span<const std::string_view> words) {
  return std::any_of(words.begin(), words.end(), [&](std::string_view word) {
    return line.find(word) != std::string_view::npos;
  });
}

// "Node.js v20.20.2", "Bun v1.1.0": what a runtime prints after its own error report.
bool isBanner(std::string_view line) {
  for (std::string_view runtime : {"Node.js v", "Bun v", "Deno v"}) {
    if (line.starts_with(runtime) && line.size() > runtime.size() && line[runtime.size()] >= '0' &&
        line[runtime.size()] <= '9') {
      return true;
    }
  }
  return false;
}

bool isNoise(std::string_view raw) {
  std::string_view line = trimmed(raw);
  if (line.empty() || isBanner(line)) return true;
  bool indented = isSpace(raw.front());
  if (indented && (line.starts_with("at ") || line.starts_with("File \""))) return true;
  // A Go stack frame: a tab, then a source path.
  if (raw.front() == '\t' && line.front() == '/') return true;
  // `}`, `^`, `~~~^^^`: the frame of an error, never its words.
  return std::none_of(line.begin(), line.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           static_cast<unsigned char>(c) >= 0x80;
  });
}

std::vector<std::string_view> splitLines(std::string_view text, bool cutAtStart) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  if (cutAtStart) {
    // Only a fragment precedes the first newline; with no newline it is all there is.
    if (size_t newline = text.find('\n'); newline != std::string_view::npos) start = newline + 1;
  }
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The line that ends the last Python traceback: the first unindented line after it.
std::optional<size_t> tracebackEnd(const std::vector<std::string_view>& lines) {
  for (size_t i = lines.size(); i-- > 0;) {
    if (!trimmed(lines[i]).starts_with("Traceback (most recent call last)")) continue;
    for (size_t j = i + 1; j < lines.size(); ++j) {
      if (!lines[j].empty() && !isSpace(lines[j].front())) return j;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::string tellingStderrLine(std::string_view text, bool cutAtStart) {
  const std::vector<std::string_view> lines = splitLines(text, cutAtStart);
  std::optional<size_t> statement = tracebackEnd(lines);
  std::optional<size_t> failure;
  std::optional<size_t> plain;
  std::optional<size_t> any;
  for (size_t i = lines.size(); i-- > 0;) {
    if (statement && *statement >= i) break;
    std::string_view line = lines[i];
    if (!any && !trimmed(line).empty()) any = i;
    if (isNoise(line)) continue;
    if (containsAny(line, kErrorWords)) {
      statement = i;
      break;
    }
    if (!failure && containsAny(line, kFailureWords)) failure = i;
    if (!plain) plain = i;
  }
  // A traceback's end found above may also be the last non-empty line.
  std::optional<size_t> chosen = statement ? statement : failure ? failure : plain ? plain : any;
  return chosen ? std::string(trimmed(lines[*chosen])) : std::string();
}

}  // namespace kaja::core
