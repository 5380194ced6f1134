#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/manifest/ability.h"

namespace kaja::core {

/// What an OAuth sign-in left for one ability (T9): its tokens, and what refreshing them
/// needs. Stored in `[abilities.<name>.oauth]` of the secrets file; never printed.
struct OAuthRecord {
  std::string accessToken;
  std::string tokenType = "Bearer";
  std::string refreshToken;    ///< "" when the server gave none
  std::int64_t expiresAt = 0;  ///< Unix seconds; 0 when the server did not say
  std::string scope;           ///< what was asked for, space-separated
  std::string issuer;          ///< the authorization server that issued the tokens
  std::string tokenEndpoint;
  std::string resource;  ///< the RFC 8707 resource the tokens are for
  std::string clientId;
  std::string clientSecret;  ///< from dynamic registration; "" for a public client
  std::string authMethod;    ///< client_secret_basic, client_secret_post or none
  std::string redirectUri;   ///< the one registered, reused by the next sign-in
  std::string forUrl;        ///< the ability's url when they were given (V6)
};

/// The user's API keys, one per ability, from `secrets.toml` (K4):
///   [abilities.<name>]
///   api_key = "…"
/// No error, message or listing made here ever contains a key.
class Secrets {
 public:
  /// Reads `file`; a missing file is an empty set of keys.
  static Result<Secrets> load(const std::string& file);

  /// Returns the key for `ability`, if one is stored.
  [[nodiscard]] std::optional<std::string> key(const std::string& ability) const;
  /// Returns the names of the abilities a key is stored for, sorted.
  [[nodiscard]] std::vector<std::string> stored() const;
  /// Returns true when a key is stored for `ability`.
  [[nodiscard]] bool has(const std::string& ability) const { return keys_.contains(ability); }
  void set(const std::string& ability, std::string key);
  /// Sets the key of `ability` bound to what it reaches now (keyTarget): once the ability
  /// reaches something else, the key is withheld (see withholdMoved), so a key given for
  /// one server never goes to another (V6).
  void setFor(const Ability& ability, std::string key);
  /// Returns what the key of `ability` was stored for, or nullopt (a key stored before keys
  /// were bound, or by hand).
  [[nodiscard]] std::optional<std::string> target(const std::string& ability) const;
  /// Withholds, in this process only, the key of `ability` when it was stored for another
  /// target than the ability's now: key() no longer returns it, and save() still writes it.
  /// Returns true when it did.
  bool withholdMoved(const Ability& ability);
  /// Sets a key for this process only, which key() returns before a stored one and save()
  /// never writes: a workspace server's key expanded from the environment.
  void setTransient(const std::string& ability, std::string key);
  /// Returns true when `ability` has a key for this process only (setTransient).
  [[nodiscard]] bool hasTransient(const std::string& ability) const {
    return transient_.contains(ability);
  }
  /// Returns true when the stored key of `ability` is withheld (withholdMoved).
  [[nodiscard]] bool withheld(const std::string& ability) const {
    return withheld_.contains(ability);
  }
  /// Returns false when there was no key to remove.
  bool remove(const std::string& ability);
  /// Returns the OAuth tokens of `ability` when they were given for the url it has now;
  /// tokens given for another url are never returned (V6).
  [[nodiscard]] std::optional<OAuthRecord> oauth(const Ability& ability) const;
  /// Returns the stored OAuth record of the ability named `ability`, whatever url it was for.
  [[nodiscard]] std::optional<OAuthRecord> storedOAuth(const std::string& ability) const;
  void setOAuth(const std::string& ability, OAuthRecord record);
  /// Returns false when `ability` had no tokens.
  bool removeOAuth(const std::string& ability);
  /// Returns true when the file held OAuth tokens for `ability` that did not read (a wrong
  /// type, a control character): load() leaves them out, and save() drops them.
  [[nodiscard]] bool oauthUnreadable(const std::string& ability) const {
    return unreadableOAuth_.contains(ability);
  }
  /// Returns the names of the abilities with OAuth tokens, sorted.
  [[nodiscard]] std::vector<std::string> signedIn() const;
  /// Locks `file` against other kaja processes, loads it afresh, applies `change` and saves
  /// it, so a token refreshed by `kaja serve` and a key set in another terminal are both
  /// kept. Returns what `change` made of the file.
  static Result<Secrets> update(const std::string& file,
                                const std::function<void(Secrets&)>& change);

  /// Writes every key to `file` atomically: a new 0600 file in the same folder, fsync,
  /// rename over the old one, fsync of the folder. Creates the folder (0700) if needed.
  [[nodiscard]] Result<void> save(const std::string& file) const;

  /// Returns a warning with the fixing command when `file` can be read by group or
  /// others, else nullopt (also when the file does not exist).
  static std::optional<std::string> permissionProblem(const std::string& file);

  /// Returns an error when `key` cannot be stored: empty, or holding control characters.
  static Result<void> checkKey(const std::string& key);

 private:
  std::map<std::string, std::string> keys_;
  std::map<std::string, std::string> targets_;  ///< ability -> keyTarget when the key was set
  std::map<std::string, std::string> transient_;
  std::set<std::string> withheld_;
  std::map<std::string, OAuthRecord> oauth_;
  std::set<std::string> unreadableOAuth_;
};

/// Returns what a key of `ability` reaches: its url for a remote ability, else the program
/// (the package's name without its version, or the command with its arguments), so a new
/// version of the same package keeps the key and another server does not get it.
std::string keyTarget(const Ability& ability);

}  // namespace kaja::core
