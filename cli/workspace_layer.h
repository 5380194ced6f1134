#pragma once

// A workspace's `.mcp.json` (Claude Code's project file) read live as a layer (S1, V2, V3):
// its servers become abilities marked workspace, off until `kaja enable NAME` turns them on
// for that folder. What is on is kept in kaja's data folder, keyed by the workspace's path,
// never in the workspace's own files.
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/paths.h"
#include "marketplace/catalog.h"

namespace kaja::cli {

/// The most servers one workspace file may bring (V7).
inline constexpr std::size_t kMaxWorkspaceServers = 32;
/// At most this many tools of one workspace server are offered (V7); the rest are left out.
inline constexpr std::size_t kMaxWorkspaceTools = 64;

/// Returns the environment variable `name`, or nullopt when it is unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

/// Returns `text` with `${VAR}` and `${VAR:-default}` replaced as Claude Code replaces them:
/// VAR's value, else the default, else a kUsage error naming VAR. Anything else (`$VAR`, a
/// `${` without its `}`) is kept as written.
core::Result<std::string> expandVariables(const std::string& text, const EnvLookup& env);

/// A workspace file as read.
struct Workspace {
  std::string dir;   ///< the workspace folder, canonical
  std::string file;  ///< <dir>/.mcp.json
  std::vector<marketplace::AbilityRecord> records;
  std::vector<std::string> warnings;  ///< one sentence each: what was skipped and why
  /// The keys its servers' env or headers carry, by server, for this process only; the
  /// caller gives them only to servers the catalog took (never to an ability whose name a
  /// server of the file shares).
  std::map<std::string, std::string> keys;
};

/// Returns the folder whose `.mcp.json` applies to `cwd`: $KAJA_WORKSPACE when set ("" or
/// "none" turns workspaces off), else the nearest of `cwd` and the folders above it that
/// holds one, stopping below `home` and at `/`; nullopt when none does.
std::optional<std::string> findWorkspace(const std::string& cwd, const std::string& home,
                                         const EnvLookup& env);

/// Reads `<dir>/.mcp.json`. A file that cannot be used (not JSON, no object of servers) is
/// one warning and no records; a server that cannot be used (a bad field, an unset
/// variable, `..` in its command) is a broken record. `enabled` maps the servers turned on
/// to the fingerprint of the entry they were turned on for: a server whose entry changed
/// since (a pull that swapped its command) is off again, with a note saying so.
Workspace readWorkspace(const std::string& dir, const EnvLookup& env,
                        const std::map<std::string, std::string>& enabled);

/// Returns the servers `kaja enable` turned on in workspace `dir`, each with the
/// fingerprint of its entry then.
std::map<std::string, std::string> enabledInWorkspace(const core::Paths& paths,
                                                      const std::string& dir);

/// Turns server `name` on (for the entry of `fingerprint`) or off in workspace `dir`, in
/// `<dataDir>/workspaces.json`.
core::Result<void> setEnabledInWorkspace(const core::Paths& paths, const std::string& dir,
                                         const std::string& name, const std::string& fingerprint,
                                         bool on);

}  // namespace kaja::cli
