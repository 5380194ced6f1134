#include "core/manifest/secrets.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/manifest/field_reader.h"
#include "core/manifest/toml_value.h"
#include "core/util/quote.h"
#include "core/util/sys.h"

namespace kaja::core {
namespace {

// toml++'s messages can quote the text around a syntax error, which may be a key, so a
// broken secrets file is reported by line only.
Result<TomlValue> parseSecretsFile(const std::string& file) {
  auto root = parseTomlFile(file);
  if (root) return root;
  Error err = root.error();
  err.message = err.code == ErrorCode::kIo
                    ? "cannot read the secrets file; check its owner and mode"
                    : "the secrets file is not valid TOML; fix that line or remove the key with "
                      "`kaja key rm NAME` and set it again";
  err.detail.clear();
  return std::unexpected(err);
}

// True when `key` holds a C0 or C1 control character or DEL: sent in an HTTP header, a CR or
// LF would start a header of its own.
bool hasControlCharacter(std::string_view key) {
  for (size_t i = 0; i < key.size(); ++i) {
    auto c = static_cast<unsigned char>(key[i]);
    if (c < 0x20 || c == 0x7f) return true;
    // U+0080–U+009F are C2 80 – C2 9F in UTF-8.
    if (c == 0xC2 && i + 1 < key.size() && static_cast<unsigned char>(key[i + 1]) <= 0x9F &&
        static_cast<unsigned char>(key[i + 1]) >= 0x80) {
      return true;
    }
  }
  return false;
}

// The fields of an [abilities.<name>.oauth] section, in the order they are written.
struct OAuthField {
  const char* key;
  std::string OAuthRecord::*member;
};
constexpr OAuthField kOAuthFields[] = {
    {"access_token", &OAuthRecord::accessToken},
    {"token_type", &OAuthRecord::tokenType},
    {"refresh_token", &OAuthRecord::refreshToken},
    {"scope", &OAuthRecord::scope},
    {"issuer", &OAuthRecord::issuer},
    {"token_endpoint", &OAuthRecord::tokenEndpoint},
    {"resource", &OAuthRecord::resource},
    {"client_id", &OAuthRecord::clientId},
    {"client_secret", &OAuthRecord::clientSecret},
    {"auth_method", &OAuthRecord::authMethod},
    {"redirect_uri", &OAuthRecord::redirectUri},
    {"for", &OAuthRecord::forUrl},
};

Result<OAuthRecord> readOAuth(const TomlValue& section, const std::string& file,
                              const std::string& where, const std::string& ability) {
  FieldReader reader(section, file, where);
  if (section.type != TomlValue::Type::kTable) {
    return std::unexpected(reader.errorAt(section, where, "must be a section."));
  }
  std::vector<std::string_view> keys{"expires_at"};
  for (const auto& field : kOAuthFields) keys.emplace_back(field.key);
  if (auto ok = reader.onlyKeys(std::span<const std::string_view>(keys)); !ok) {
    return std::unexpected(ok.error());
  }
  OAuthRecord record;
  for (const auto& field : kOAuthFields) {
    const TomlValue* value = reader.get(field.key);
    if (value == nullptr) continue;
    if (value->type != TomlValue::Type::kString) {
      return std::unexpected(reader.errorAt(*value, field.key, "must be a string."));
    }
    if (hasControlCharacter(value->text)) {
      return fail(ErrorCode::kInvalidConfig,
                  "the OAuth tokens of ability " + quoteForMessage(ability) +
                      " hold a control character; sign in again with `kaja login " +
                      escapeForMessage(ability) + "`",
                  file + ":" + std::to_string(value->line));
    }
    record.*field.member = value->text;
  }
  if (const TomlValue* expires = reader.get("expires_at"); expires != nullptr) {
    if (expires->type != TomlValue::Type::kInteger) {
      return std::unexpected(reader.errorAt(*expires, "expires_at", "must be an integer."));
    }
    record.expiresAt = expires->integer;
  }
  return record;
}

TomlValue stringValue(const std::string& text) {
  TomlValue value;
  value.type = TomlValue::Type::kString;
  value.text = text;
  return value;
}

}  // namespace

Result<Secrets> Secrets::load(const std::string& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return Secrets{};
  auto root = parseSecretsFile(file);
  if (!root) return std::unexpected(root.error());
  FieldReader top(*root, file, "");
  if (auto ok = top.onlyKeys({"abilities"}); !ok) return std::unexpected(ok.error());
  Secrets secrets;
  const TomlValue* abilities = top.get("abilities");
  if (abilities == nullptr) return secrets;
  if (abilities->type != TomlValue::Type::kTable) {
    return std::unexpected(
        top.errorAt(*abilities, "abilities", "must be a table of [abilities.<name>] sections."));
  }
  for (const auto& [name, section] : abilities->fields) {
    std::string where = "abilities." + name;
    if (section.type != TomlValue::Type::kTable) {
      return std::unexpected(top.errorAt(section, where,
                                         "must be a section with an api_key, not " +
                                             std::string(describeType(section.type)) + "."));
    }
    FieldReader reader(section, file, where);
    if (auto ok = reader.onlyKeys({"api_key", "for", "oauth"}); !ok) {
      return std::unexpected(ok.error());
    }
    if (const TomlValue* oauth = reader.get("oauth"); oauth != nullptr) {
      // Tokens that do not read are as good as none: the ability signs in again, and every
      // other key and token in the file still works.
      if (auto record = readOAuth(*oauth, file, where + ".oauth", name)) {
        secrets.oauth_[name] = std::move(*record);
      } else {
        secrets.unreadableOAuth_.insert(name);
      }
    }
    if (const TomlValue* target = reader.get("for"); target != nullptr) {
      if (target->type != TomlValue::Type::kString) {
        return std::unexpected(reader.errorAt(*target, "for", "must be a string."));
      }
      secrets.targets_[name] = target->text;
    }
    const TomlValue* key = reader.get("api_key");
    if (key == nullptr) continue;
    if (key->type != TomlValue::Type::kString) {
      return std::unexpected(reader.errorAt(*key, "api_key", "must be a string."));
    }
    if (hasControlCharacter(key->text)) {
      // The key itself is never shown, not even in part.
      return fail(ErrorCode::kInvalidConfig,
                  "the api_key of ability " + quoteForMessage(name) +
                      " holds a control character (a line break, tab or NUL?), which could "
                      "inject an HTTP header; set the key again with `kaja key set " +
                      escapeForMessage(name) + "`",
                  file + ":" + std::to_string(key->line));
    }
    secrets.keys_[name] = key->text;
  }
  return secrets;
}

std::optional<std::string> Secrets::key(const std::string& ability) const {
  if (auto held = transient_.find(ability); held != transient_.end()) return held->second;
  if (withheld_.contains(ability)) return std::nullopt;
  auto it = keys_.find(ability);
  if (it == keys_.end()) return std::nullopt;
  return it->second;
}

void Secrets::set(const std::string& ability, std::string key) {
  withheld_.erase(ability);
  targets_.erase(ability);
  keys_[ability] = std::move(key);
}

void Secrets::setTransient(const std::string& ability, std::string key) {
  transient_[ability] = std::move(key);
}

bool Secrets::remove(const std::string& ability) {
  targets_.erase(ability);
  return keys_.erase(ability) > 0;
}

void Secrets::setFor(const Ability& ability, std::string key) {
  withheld_.erase(ability.name);
  keys_[ability.name] = std::move(key);
  targets_[ability.name] = keyTarget(ability);
}

std::optional<std::string> Secrets::target(const std::string& ability) const {
  auto it = targets_.find(ability);
  if (it == targets_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Secrets::stored() const {
  std::vector<std::string> names;
  names.reserve(keys_.size());
  for (const auto& [name, key] : keys_) names.push_back(name);
  return names;
}

bool Secrets::withholdMoved(const Ability& ability) {
  auto it = targets_.find(ability.name);
  if (it == targets_.end() || !keys_.contains(ability.name) || it->second == keyTarget(ability)) {
    return false;
  }
  // A key stored before arguments counted names the program alone: it still counts for
  // that program, as it did when it was given.
  if (!ability.isRemote() && !ability.package &&
      it->second == "command:" + ability.command.value_or("")) {
    return false;
  }
  // Kept in the file (a sync may move it back; `kaja key set` replaces it), only not sent.
  withheld_.insert(ability.name);
  return true;
}

std::string keyTarget(const Ability& ability) {
  if (ability.isRemote()) return ability.url.value_or("");
  auto unversioned = [](const std::string& spec) {
    // "@scope/name@1.2.3" and "name@1.2.3": the last '@' after the first character.
    size_t at = spec.rfind('@');
    return at == std::string::npos || at == 0 ? spec : spec.substr(0, at);
  };
  if (ability.package) {
    if (ability.package->npm) return "npm:" + unversioned(*ability.package->npm);
    if (ability.package->pypi) return "pypi:" + unversioned(*ability.package->pypi);
    if (ability.package->docker) {
      const std::string& image = *ability.package->docker;
      size_t colon = image.rfind(':');
      bool tag = colon != std::string::npos && image.find('/', colon) == std::string::npos;
      return "docker:" + (tag ? image.substr(0, colon) : image);
    }
  }
  // The program and its arguments: `node server.js` and `node other.js` are two servers.
  // Each argument is quoted, so no two argument lists read the same.
  std::string target = "command:" + ability.command.value_or("");
  for (const auto& arg : ability.args) target += " " + quoteForMessage(arg);
  return target;
}

Result<void> Secrets::checkKey(const std::string& key) {
  if (key.empty()) return fail(ErrorCode::kUsage, "the key is empty; nothing was saved");
  if (hasControlCharacter(key)) {
    return fail(ErrorCode::kUsage,
                "the key holds a control character (a stray newline or tab?); nothing was "
                "saved");
  }
  return {};
}

Result<void> Secrets::save(const std::string& file) const {
  TomlValue root;
  TomlValue abilities;
  std::set<std::string> names;
  for (const auto& [name, key] : keys_) names.insert(name);
  for (const auto& [name, record] : oauth_) names.insert(name);
  for (const auto& name : names) {
    TomlValue section;
    if (auto key = keys_.find(name); key != keys_.end()) {
      section.fields.emplace_back("api_key", stringValue(key->second));
      if (auto target = targets_.find(name); target != targets_.end()) {
        section.fields.emplace_back("for", stringValue(target->second));
      }
    }
    if (auto record = oauth_.find(name); record != oauth_.end()) {
      TomlValue oauth;
      for (const auto& field : kOAuthFields) {
        const std::string& text = record->second.*field.member;
        if (!text.empty()) oauth.fields.emplace_back(field.key, stringValue(text));
      }
      TomlValue expires;
      expires.type = TomlValue::Type::kInteger;
      expires.integer = record->second.expiresAt;
      oauth.fields.emplace_back("expires_at", std::move(expires));
      section.fields.emplace_back("oauth", std::move(oauth));
    }
    abilities.fields.emplace_back(name, std::move(section));
  }
  root.fields.emplace_back("abilities", std::move(abilities));
  std::string text =
      "# kaja's API keys and sign-in tokens, one section per ability. Keep this file mode "
      "0600.\n" +
      formatToml(root);
  return writeFileAtomically(file, text, 0600);
}

std::optional<OAuthRecord> Secrets::oauth(const Ability& ability) const {
  auto record = storedOAuth(ability.name);
  if (!record || record->forUrl != ability.url.value_or("")) return std::nullopt;
  return record;
}

std::optional<OAuthRecord> Secrets::storedOAuth(const std::string& ability) const {
  auto it = oauth_.find(ability);
  if (it == oauth_.end()) return std::nullopt;
  return it->second;
}

void Secrets::setOAuth(const std::string& ability, OAuthRecord record) {
  oauth_[ability] = std::move(record);
}

bool Secrets::removeOAuth(const std::string& ability) { return oauth_.erase(ability) > 0; }

std::vector<std::string> Secrets::signedIn() const {
  std::vector<std::string> names;
  names.reserve(oauth_.size());
  for (const auto& [name, record] : oauth_) names.push_back(name);
  return names;
}

Result<Secrets> Secrets::update(const std::string& file,
                                const std::function<void(Secrets&)>& change) {
  const std::string dir = std::filesystem::path(file).parent_path().string();
  if (!dir.empty()) {
    if (auto made = makeDirectories(dir, 0700); !made) return std::unexpected(made.error());
  }
  auto lock = lockExclusive(file + ".lock");
  if (!lock) return std::unexpected(lock.error());
  auto secrets = load(file);
  if (!secrets) return std::unexpected(secrets.error());
  change(*secrets);
  if (auto saved = secrets->save(file); !saved) return std::unexpected(saved.error());
  return secrets;
}

std::optional<std::string> Secrets::permissionProblem(const std::string& file) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0) return std::nullopt;
  if ((info.st_mode & 077) == 0) return std::nullopt;
  return file + " can be read by other users; run: chmod 600 '" + file + "'";
}

}  // namespace kaja::core
