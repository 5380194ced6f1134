#pragma once

#include <string>

#include "core/error.h"

namespace kaja::core {

/// Where kaja keeps its files. All paths are absolute.
struct Paths {
  std::string configDir;           ///< $XDG_CONFIG_HOME/kaja, default ~/.config/kaja
  std::string dataDir;             ///< $XDG_DATA_HOME/kaja, default ~/.local/share/kaja
  std::string userMarketplace;     ///< <configDir>/marketplace
  std::string shippedMarketplace;  ///< the marketplace that comes with kaja (lowest layer)
  std::string secretsFile;         ///< <configDir>/secrets.toml
  std::string configFile;          ///< <configDir>/config.toml: kaja's own settings
  std::string backupsDir;          ///< <dataDir>/backups
  std::string toolsDir;            ///< <dataDir>/tools: runners kaja manages itself

  /// Returns the paths for this process's environment. Fails only when neither the XDG
  /// variables nor HOME give an absolute directory.
  static Result<Paths> fromEnvironment();
};

/// Returns the shipped marketplace: $KAJA_SHIPPED_MARKETPLACE when set, else
/// <exe>/../share/kaja/marketplace when it exists, else the source tree's marketplace.
std::string findShippedMarketplace();

/// Returns <exe>/../libexec/kaja, where an installed kaja keeps the bun it manages, when it
/// exists; else "".
std::string findInstalledTools();

/// Returns `path` with a leading `~` or `~/` replaced by `home`; other paths unchanged.
std::string expandHome(const std::string& path, const std::string& home);

/// Returns $HOME, or an empty string when unset.
std::string homeDir();

}  // namespace kaja::core
