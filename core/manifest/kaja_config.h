#pragma once

#include <optional>
#include <string>

#include "core/error.h"
#include "core/manifest/ability.h"
#include "core/manifest/stdio_allow_list.h"

// kaja's own settings, `<configDir>/config.toml`. Today it holds two tables:
//
//   [sandbox]                        # run eligible stdio abilities in a sandbox worker (K20)
//   url = "https://sandbox.example"  # the worker's base URL, http or https
//   user = "alice"                   # the user id the worker knows ([a-z0-9._-], 1 to 64)
//   token_file = "~/.config/kaja/sandbox.token"  # a file holding a token, or instead
//   key_file = "/etc/kaja/worker.key"            # the worker's key: kaja makes its tokens
//   shared = false                   # a shared worker: trustedSandbox abilities stay local
//
//   [stdio]                          # the operator's allow-list (U5, stdio_allow_list.h)
//   allow = ["npx -y @scope/server@1.2.3 *", "/usr/bin/my-server --flag"]

namespace kaja::core {

/// The `[sandbox]` table: which worker runs the abilities the cloud may run, as whom.
struct SandboxSettings {
  std::string url;   ///< http(s)://host[:port][/path], without a trailing '/'
  std::string user;  ///< validWorkerName
  /// Exactly one of these is set, as an absolute path (`~` expanded; a relative path is
  /// taken from the config file's folder).
  std::optional<std::string> tokenFile;
  std::optional<std::string> keyFile;
  bool shared = false;
  SourceLocation at;            ///< the [sandbox] table
  SourceLocation credentialAt;  ///< the token_file or key_file line
};

/// A parsed, validated config.toml. Immutable once loaded.
struct KajaConfig {
  std::string file;  ///< where it was read from (it may not exist)
  std::optional<SandboxSettings> sandbox;
  /// `[stdio] allow`: when set, the only stdio command lines kaja starts (`allow = []`
  /// starts none); unset allows every one.
  std::optional<StdioAllowList> stdioAllow;
};

/// Reads `file`; a missing file is the default config. Every mistake (a syntax error, an
/// unknown key, with the nearest known one suggested, a wrong type or value) is a
/// kInvalidConfig error whose context is file:line. `home` expands a leading `~`.
Result<KajaConfig> loadKajaConfig(const std::string& file, const std::string& home);

}  // namespace kaja::core
