#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/manifest/secrets.h"
#include "core/paths.h"
#include "core/runner/runner_resolver.h"
#include "marketplace/catalog.h"

namespace kaja::cli {

/// What most subcommands need: where files live, the merged catalog and the keys.
struct Context {
  core::Paths paths;
  marketplace::Catalog catalog;
  core::Secrets secrets;

  /// Loads everything; a broken secrets file is an error, broken manifests are not (they
  /// are records in the catalog). Warns on stderr about a secrets file others can read.
  static core::Result<Context> load();

  /// Returns the folders where kaja keeps runners of its own (its bun), searched after PATH.
  [[nodiscard]] std::vector<std::string> toolDirs() const;
};

}  // namespace kaja::cli
