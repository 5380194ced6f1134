#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/manifest/ability.h"
#include "core/manifest/persona.h"

namespace kaja::core {

/// A new ability as a command line describes it (`kaja add`, `kaja add-json`), before it
/// becomes a manifest. Values are kept exactly as given.
struct AbilityDraft {
  std::string name;
  std::string description;
  Transport transport = Transport::kStdio;
  std::optional<std::string> url;
  std::optional<std::string> npm;  ///< "name@version"
  std::optional<std::string> command;
  std::vector<std::string> args;
  std::optional<std::string> cwd;                            ///< the server's working folder
  std::vector<std::pair<std::string, std::string>> env;      ///< in the order given
  std::vector<std::pair<std::string, std::string>> headers;  ///< in the order given
};

/// A draft split into what goes in the manifest and the one key that goes to the secrets
/// file (referenced from the manifest's `auth` table).
struct AbilityPlan {
  Ability ability;
  std::optional<std::string> key;
  /// Set instead of `key` when the secret value was a `${VAR}` reference: the manifest
  /// names the key, which the user stores with `kaja key set`.
  std::optional<std::string> keyReference;
};

/// Returns true when an env var or header of this name carries a secret: its name holds
/// KEY, TOKEN, SECRET, PASSWORD, PASSWD or CREDENTIAL (any case), or it is the
/// Authorization header.
bool looksSecret(std::string_view name);

/// Splits `draft`: a secret-looking env var becomes `auth = { in = "env" }` and a
/// secret-looking header `auth = { in = "header" }` (an Authorization scheme such as
/// "Bearer " becomes the prefix), each with its value as the key (unless the value is a
/// `${VAR}` reference, which is no key: see keyReference). Fails with one sentence
/// for a second secret (a manifest references one key) and for a header that is not a key
/// (a manifest sends no other header).
Result<AbilityPlan> planAbility(const AbilityDraft& draft);

/// Returns `ability` as mcp.toml text: the fields a command line can set (description,
/// transport, url, auth, package, command, args, cwd, env, approval when not "writes"), every
/// string quoted and escaped.
std::string formatAbility(const Ability& ability);

/// Returns `persona` as persona TOML: description and one `abilities` entry a line.
/// Comments of a file it replaces are not kept.
std::string formatPersona(const Persona& persona);

/// Runs after the new file has passed the loader and before it is renamed into place;
/// an error stops the write and leaves every file as it was.
using BeforeRename = std::function<Result<void>()>;

/// Puts `text` at `<abilitiesDir>/<name>/mcp.toml` only if the ability loader accepts it:
/// writes it to a temporary file in that folder (a new hidden folder next to it when the
/// ability is new), loads that with the loader (errors name the final path and line),
/// then renames it into place. Refuses an existing folder unless `replace`. Returns the
/// loaded ability.
Result<Ability> writeAbilityManifest(const std::string& abilitiesDir, const std::string& name,
                                     std::string_view text, bool replace,
                                     const BeforeRename& beforeRename = {});

/// Puts `text` at `file` (`<personas>/<name>.toml`) only if the persona loader accepts it,
/// in the same way as writeAbilityManifest. Creates the folder when missing.
Result<Persona> writePersonaFile(const std::string& file, std::string_view text);

}  // namespace kaja::core
