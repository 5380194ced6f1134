// A minimal MCP server on stdio for client_bench's floor: it answers initialize,
// tools/list, ping and tools/call echo, and nothing else, as cheaply as it can. It does
// not parse JSON: it scans each line for the top-level "id" and "method" members and for
// the echo tool's "message" string, which it copies back still escaped. That is exact
// for the compact lines kaja and the raw-pipe loop send (no nested "id" before the
// request's own), and it keeps the server's share of a round trip near zero, so the
// benchmark measures the client and the pipe.
//
// All answers to the lines of one read() go out in one write().

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>
#include <string_view>

namespace {

constexpr std::size_t kReadBytes = 64 * 1024;

/// Returns the raw text of the JSON value after `"key":` (a number, or a string with its
/// quotes), or an empty view when `line` has no such member.
std::string_view rawMember(std::string_view line, std::string_view quotedKey) {
  const auto at = line.find(quotedKey);
  if (at == std::string_view::npos) return {};
  std::size_t start = at + quotedKey.size();
  while (start < line.size() && (line[start] == ' ' || line[start] == ':')) ++start;
  if (start >= line.size()) return {};
  std::size_t end = start;
  if (line[start] == '"') {
    for (end = start + 1; end < line.size() && line[end] != '"'; ++end) {
      if (line[end] == '\\') ++end;
    }
    return end < line.size() ? line.substr(start, end + 1 - start) : std::string_view{};
  }
  while (end < line.size() && line[end] != ',' && line[end] != '}' && line[end] != ' ') ++end;
  return line.substr(start, end - start);
}

/// Returns the contents of a quoted raw value (still JSON-escaped).
std::string_view unquote(std::string_view quoted) {
  if (quoted.size() < 2 || quoted.front() != '"') return {};
  return quoted.substr(1, quoted.size() - 2);
}

/// Appends the answer to one request line to `out`; notifications get none.
void answer(std::string_view line, std::string& out) {
  const std::string_view id = rawMember(line, "\"id\"");
  if (id.empty()) return;
  const std::string_view method = unquote(rawMember(line, "\"method\""));
  out += R"({"jsonrpc":"2.0","id":)";
  out += id;
  if (method == "tools/call") {
    out += R"(,"result":{"content":[{"type":"text","text":"Echo: )";
    out += unquote(rawMember(line, "\"message\""));
    out += "\"}]}}\n";
  } else if (method == "initialize") {
    std::string_view version = unquote(rawMember(line, "\"protocolVersion\""));
    if (version.empty()) version = "2025-11-25";
    out += R"(,"result":{"protocolVersion":")";
    out += version;
    out += R"(","capabilities":{"tools":{}},"serverInfo":{"name":"kaja-bench-echo",)"
           R"("version":"1.0.0"}}})"
           "\n";
  } else if (method == "tools/list") {
    out += R"(,"result":{"tools":[{"name":"echo","description":"Echoes back the input string",)"
           R"("inputSchema":{"type":"object","properties":{"message":{"type":"string"}},)"
           R"("required":["message"]}}]}})"
           "\n";
  } else if (method == "ping") {
    out += ",\"result\":{}}\n";
  } else {
    out += R"(,"error":{"code":-32601,"message":"Method not found"}})"
           "\n";
  }
}

/// Writes all of `data` to stdout; returns false when stdout is gone.
bool writeAll(std::string_view data) {
  while (!data.empty()) {
    const ssize_t written = ::write(STDOUT_FILENO, data.data(), data.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

}  // namespace

int main() {
  std::string pending;  // bytes after the last newline of earlier reads
  std::string out;
  char buffer[kReadBytes];
  for (;;) {
    const ssize_t got = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return 0;
    std::string_view chunk(buffer, static_cast<std::size_t>(got));
    out.clear();
    for (auto newline = chunk.find('\n'); newline != std::string_view::npos;
         newline = chunk.find('\n')) {
      if (pending.empty()) {
        answer(chunk.substr(0, newline), out);
      } else {
        pending.append(chunk.substr(0, newline));
        answer(pending, out);
        pending.clear();
      }
      chunk.remove_prefix(newline + 1);
    }
    pending.append(chunk);
    if (!out.empty() && !writeAll(out)) return 0;
  }
}
