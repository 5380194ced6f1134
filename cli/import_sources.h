#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"

// The files MCP clients keep their servers in, for `kaja import`: which files each client
// reads, and the server entries they hold, read with a bound and never written.

namespace kaja::cli {

/// The most a client's file may hold: ~/.claude.json keeps history and grows large, but
/// nothing a client writes comes near this.
inline constexpr size_t kMaxClientFileBytes = size_t{64} << 20;

/// One server entry as a client's file holds it.
// NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json members fool the check.
struct FoundServer {
  std::string name;      ///< the entry's key, as written (any text at all)
  nlohmann::json entry;  ///< its value, as written
  std::string file;      ///< the file's absolute path
  std::string from;      ///< the file as shown to people: "~/.claude.json", "./.mcp.json"
  std::string scope;     ///< "local", "project", "user" or "file"
  /// The project folder (the current one) for a project's own file: what a relative `cwd`
  /// and `${workspaceFolder}` mean. Empty for other files.
  std::string projectDir;
};

/// Returns the servers of `source`: "claude" (~/.claude.json's entry for the current folder,
/// ./.mcp.json, then ~/.claude.json's own), "claude-desktop", "cursor" (./.cursor/mcp.json,
/// then ~/.cursor/mcp.json), "vscode" (./.vscode/mcp.json, then the user's mcp.json), or any
/// other word as the path of one such file (its `mcpServers` or `servers`). The narrowest
/// scope comes first, as the clients prefer it. Fails with one sentence, and reads no
/// further, when a file is not a regular file, is larger than kMaxClientFileBytes, is not
/// JSON or holds its servers in another shape than an object; when none of a client's files
/// exists; and when a path given holds no servers object.
core::Result<std::vector<FoundServer>> findServers(const std::string& source);

/// Returns `path` as people read it: under the home folder as "~/…", under the current
/// folder as "./…", else unchanged.
std::string shownPath(const std::string& path);

}  // namespace kaja::cli
