#include "cli/import_sources.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "cli/ability_edit.h"
#include "cli/output.h"
#include "core/paths.h"
#include "core/util/sys.h"
#include "core/util/unique_fd.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// One servers object a client reads: `keys` lead to it from the file's top ("projects" is
// followed by one of `projectKeys`); empty `keys` means "mcpServers" or "servers", whichever
// the file has.
struct Table {
  std::string file;
  std::vector<std::string> keys;
  std::string scope;
  std::string projectDir;  ///< see FoundServer
  std::vector<std::string> projectKeys;
};

// The current folder as the kernel has it, and as the shell spelled it when that differs:
// Claude Code keys ~/.claude.json's projects by the path it was started in.
std::vector<std::string> currentFolders() {
  std::error_code ec;
  std::vector<std::string> out = {fs::current_path(ec).string()};
  const char* pwd = std::getenv("PWD");
  if (pwd != nullptr && pwd[0] == '/' && out[0] != pwd && fs::equivalent(pwd, out[0], ec)) {
    out.emplace_back(pwd);
  }
  return out;
}

// $XDG_CONFIG_HOME when absolute, else ~/.config: where Electron apps (Claude Desktop, VS
// Code) keep their settings on Linux.
std::string configHome(const std::string& home) {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && xdg[0] == '/') return xdg;
  return home + "/.config";
}

core::Result<std::vector<Table>> tablesOf(const std::string& source) {
  const std::string home = core::homeDir();
  const std::vector<std::string> here = currentFolders();
  const std::string& cwd = here.front();
  const bool named =
      source == "claude" || source == "claude-desktop" || source == "cursor" || source == "vscode";
  if (named && home.empty()) {
    return core::fail(core::ErrorCode::kUsage, "HOME is not set, so kaja cannot find " + source +
                                                   "'s files; set HOME or give the file's path.");
  }
  if (source == "claude") {
    return std::vector<Table>{
        {home + "/.claude.json", {"projects", "", "mcpServers"}, "local", cwd, here},
        {cwd + "/.mcp.json", {"mcpServers"}, "project", cwd, {}},
        {home + "/.claude.json", {"mcpServers"}, "user", "", {}}};
  }
  if (source == "claude-desktop") {
    return std::vector<Table>{
        {configHome(home) + "/Claude/claude_desktop_config.json", {"mcpServers"}, "user", "", {}}};
  }
  if (source == "cursor") {
    return std::vector<Table>{{cwd + "/.cursor/mcp.json", {"mcpServers"}, "project", cwd, {}},
                              {home + "/.cursor/mcp.json", {"mcpServers"}, "user", "", {}}};
  }
  if (source == "vscode") {
    return std::vector<Table>{
        {cwd + "/.vscode/mcp.json", {"servers"}, "project", cwd, {}},
        {configHome(home) + "/Code/User/mcp.json", {"servers"}, "user", "", {}}};
  }
  if (source.empty()) {
    return core::fail(core::ErrorCode::kUsage,
                      "give claude, claude-desktop, cursor, vscode or a file's path.");
  }
  return std::vector<Table>{{fs::absolute(source).lexically_normal().string(), {}, "file"}};
}

// Returns the file's text, or nullopt when it does not exist. Only a regular file is read,
// so that a FIFO or a link to /dev/zero neither blocks nor runs without end.
core::Result<std::optional<std::string>> readClientFile(const std::string& path) {
  const std::string shown = oneLine(shownPath(path));
  auto text = core::readRegularFile(path, kMaxClientFileBytes, shown);
  if (text) return std::optional<std::string>(std::move(*text));
  if (text.error().code == core::ErrorCode::kNotFound) return std::nullopt;
  core::Error error = text.error();
  if (error.code == core::ErrorCode::kUsage) {
    error.message += error.message.ends_with("MiB") ? ", more than any client's file holds"
                                                    : " (a client's file is plain JSON)";
  }
  error.message += "; nothing was written.";
  return std::unexpected(std::move(error));
}

core::Result<void> notAnObject(const std::string& shown, const std::string& where,
                               const json& value) {
  return core::fail(core::ErrorCode::kUsage, where + " in " + shown + " is " + value.type_name() +
                                                 ", not an object of servers; nothing was "
                                                 "written.");
}

// Appends the servers of `table` in `root` (a parsed file) to `out`.
core::Result<void> collect(const Table& table, const json& root, std::vector<FoundServer>& out) {
  const std::string shown = shownPath(table.file);
  if (!root.is_object()) {
    return core::fail(core::ErrorCode::kUsage,
                      oneLine(shown) + " holds JSON " + root.type_name() +
                          ", not an object with \"mcpServers\" or \"servers\"; nothing was "
                          "written.");
  }
  std::vector<std::pair<std::string, const json*>> found;
  if (table.keys.empty()) {
    for (const char* key : {"mcpServers", "servers"}) {
      if (root.contains(key)) found.emplace_back(key, &root.at(key));
    }
    if (found.empty()) {
      return core::fail(core::ErrorCode::kUsage,
                        oneLine(shown) +
                            " has no \"mcpServers\" object (or \"servers\", as VS Code writes "
                            "it), so it lists no servers; nothing was written.");
    }
  } else {
    const json* at = &root;
    std::string where;
    for (const auto& key : table.keys) {
      const json* next = nullptr;
      if (at->is_object() && key.empty()) {
        for (const auto& candidate : table.projectKeys) {
          if (at->contains(candidate)) next = &at->at(candidate);
        }
      } else if (at->is_object() && at->contains(key)) {
        next = &at->at(key);
      }
      if (next == nullptr) return {};
      where += (where.empty() ? "" : ".") + (key.empty() ? std::string("<this folder>") : key);
      at = next;
    }
    found.emplace_back(where, at);
  }
  for (const auto& [where, servers] : found) {
    if (!servers->is_object()) return notAnObject(oneLine(shown), "\"" + where + "\"", *servers);
    for (const auto& [name, entry] : servers->items()) {
      out.push_back({name, entry, table.file, shown, table.scope, table.projectDir});
    }
  }
  return {};
}

}  // namespace

std::string shownPath(const std::string& path) {
  const std::string home = core::homeDir();
  std::error_code ec;
  const std::string cwd = fs::current_path(ec).string();
  if (!cwd.empty() && cwd != "/" && path.starts_with(cwd + "/")) {
    return "." + path.substr(cwd.size());
  }
  if (!home.empty() && home != "/" && path.starts_with(home + "/")) {
    return "~" + path.substr(home.size());
  }
  return path;
}

core::Result<std::vector<FoundServer>> findServers(const std::string& source) {
  auto tables = tablesOf(source);
  if (!tables) return std::unexpected(tables.error());
  std::map<std::string, std::optional<json>> files;
  std::set<std::pair<std::string, std::vector<std::string>>> read;
  std::vector<std::string> looked;
  std::vector<FoundServer> out;
  bool any = false;
  for (const auto& table : *tables) {
    std::error_code ec;
    const std::string key = fs::weakly_canonical(table.file, ec).string();
    // In the home folder, a project's file is the user's own: it is read once, as the project's.
    if (!read.emplace(key, table.keys).second) continue;
    if (!files.contains(key)) {
      looked.push_back(shownPath(table.file));
      auto text = readClientFile(table.file);
      if (!text) return std::unexpected(text.error());
      if (!*text) {
        files[key] = std::nullopt;
      } else {
        auto parsed = parseClientJson(std::move(**text), "the JSON in " + oneLine(looked.back()));
        if (!parsed) return std::unexpected(parsed.error());
        files[key] = std::move(*parsed);
      }
    }
    if (!files[key]) continue;
    any = true;
    if (auto ok = collect(table, *files[key], out); !ok) return std::unexpected(ok.error());
  }
  if (!any) {
    std::string list;
    for (size_t i = 0; i < looked.size(); ++i) {
      list += (i == 0 ? "" : i + 1 == looked.size() ? " nor " : ", ") + oneLine(looked[i]);
    }
    if (tables->size() == 1 && tables->front().scope == "file") {
      return core::fail(core::ErrorCode::kNotFound,
                        list + " does not exist; give the path of a client's file.");
    }
    const std::map<std::string, std::string> clients = {{"claude", "Claude Code"},
                                                        {"claude-desktop", "Claude Desktop"},
                                                        {"cursor", "Cursor"},
                                                        {"vscode", "VS Code"}};
    return core::fail(
        core::ErrorCode::kNotFound,
        "found no " + clients.at(source) + " file: " + (looked.size() > 1 ? "neither " : "") +
            list + (looked.size() > 1 ? " exists" : " does not exist") + "; nothing was written.");
  }
  return out;
}

}  // namespace kaja::cli
