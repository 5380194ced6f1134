#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/manifest/kaja_config.h"
#include "core/manifest/secrets.h"
#include "core/paths.h"
#include "core/runner/runner_resolver.h"
#include "marketplace/catalog.h"

namespace kaja::cli {

/// How long a token kaja makes from `[sandbox] key_file` is good for.
inline constexpr std::int64_t kSandboxTokenTtlSeconds = 3600;

/// What most subcommands need: where files live, the merged catalog, the keys and kaja's
/// own settings (config.toml).
struct Context {
  core::Paths paths;
  marketplace::Catalog catalog;
  core::Secrets secrets;
  core::KajaConfig config;
  /// The workspace folder whose `.mcp.json` is read as a layer, or "" when there is none.
  std::string workspaceDir;

  /// Loads everything; a broken secrets or config file is an error, broken manifests are
  /// not (they are records in the catalog). Warns on stderr about a secrets file others can
  /// read.
  static core::Result<Context> load();

  /// Adds the servers of the workspace's `.mcp.json` (see workspace_layer.h) to the
  /// catalog, warning on stderr about what it cannot use.
  void loadWorkspace();

  /// Returns the folders where kaja keeps runners of its own (its bun), searched after PATH.
  [[nodiscard]] std::vector<std::string> toolDirs() const;

  /// Returns where this machine's abilities run: PATH and the tools folders, the
  /// `[stdio] allow` list when config.toml has one, and, with
  /// `[sandbox]` configured, the worker with a token read from token_file, or made from
  /// key_file afresh for each request (each good for kSandboxTokenTtlSeconds). Fails with
  /// the config file's line when the token cannot be had.
  [[nodiscard]] core::Result<core::RunnerContext> runners() const;
};

}  // namespace kaja::cli
