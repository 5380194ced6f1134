#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/error.h"

namespace kaja::core {

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
  /// Returns true when a key is stored for `ability`.
  [[nodiscard]] bool has(const std::string& ability) const { return keys_.contains(ability); }
  void set(const std::string& ability, std::string key);
  /// Sets a key for this process only, which key() returns before a stored one and save()
  /// never writes: a workspace server's key expanded from the environment.
  void setTransient(const std::string& ability, std::string key);
  /// Returns false when there was no key to remove.
  bool remove(const std::string& ability);

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
  std::map<std::string, std::string> transient_;
};

}  // namespace kaja::core
