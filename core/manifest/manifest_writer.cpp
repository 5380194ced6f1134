#include "core/manifest/manifest_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <random>

#include "core/manifest/ability_loader.h"
#include "core/manifest/persona_loader.h"
#include "core/manifest/secrets.h"
#include "core/manifest/toml_value.h"
#include "core/util/sys.h"

namespace kaja::core {
namespace fs = std::filesystem;
namespace {

TomlValue stringValue(const std::string& text) {
  TomlValue value;
  value.type = TomlValue::Type::kString;
  value.text = text;
  return value;
}

TomlValue boolValue(bool flag) {
  TomlValue value;
  value.type = TomlValue::Type::kBoolean;
  value.boolean = flag;
  return value;
}

TomlValue stringArray(const std::vector<std::string>& texts) {
  TomlValue value;
  value.type = TomlValue::Type::kArray;
  for (const auto& text : texts) value.items.push_back(stringValue(text));
  return value;
}

void put(TomlValue& table, std::string key, TomlValue value) {
  table.fields.push_back({std::move(key), std::move(value)});
}

std::string upper(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

std::string randomSuffix() {
  std::random_device random;
  return std::to_string(random()) + std::to_string(random());
}

// Creates `path` (which must not exist) holding `text`, fsynced.
Result<void> writeNewFile(const std::string& path, std::string_view text, mode_t mode) {
  int fd = retryOnEintr(
      [&] { return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode); });
  if (fd < 0) return fail(ErrorCode::kIo, syscallMessage("open", path, errno));
  size_t written = 0;
  while (written < text.size()) {
    ssize_t n =
        retryOnEintr([&] { return ::write(fd, text.data() + written, text.size() - written); });
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return fail(ErrorCode::kIo, syscallMessage("write", path, err));
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    return fail(ErrorCode::kIo, syscallMessage("fsync", path, err));
  }
  if (::close(fd) != 0) return fail(ErrorCode::kIo, syscallMessage("close", path, errno));
  return {};
}

void syncFolder(const std::string& dir) {
  int fd = retryOnEintr([&] { return ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

// Removes what a write staged unless it was renamed into place.
class Staged {
 public:
  explicit Staged(std::string path) : path_(std::move(path)) {}
  Staged(const Staged&) = delete;
  Staged& operator=(const Staged&) = delete;
  ~Staged() {
    if (path_.empty()) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  void keep() { path_.clear(); }

 private:
  std::string path_;
};

TomlValue personaEntry(const PersonaEntry& entry) {
  if (!entry.tools && entry.roots.empty()) return stringValue(entry.ability);
  TomlValue table;
  put(table, "name", stringValue(entry.ability));
  if (entry.tools) put(table, "tools", stringArray(*entry.tools));
  if (!entry.roots.empty()) {
    TomlValue roots;
    roots.type = TomlValue::Type::kArray;
    for (const auto& root : entry.roots) {
      if (!root.readOnly && !root.backup) {
        roots.items.push_back(stringValue(root.path));
        continue;
      }
      TomlValue item;
      put(item, "path", stringValue(root.path));
      if (root.readOnly) put(item, "readOnly", boolValue(true));
      if (root.backup) put(item, "backup", boolValue(true));
      roots.items.push_back(std::move(item));
    }
    put(table, "roots", std::move(roots));
  }
  return table;
}

// Takes a key out of a header value: an Authorization scheme ("Bearer ") stays in front.
std::pair<std::string, std::string> splitHeaderKey(const std::string& name,
                                                   const std::string& value) {
  if (upper(name) != "AUTHORIZATION") return {"", value};
  auto space = value.find(' ');
  if (space == std::string::npos || space == 0) return {"", value};
  auto start = value.find_first_not_of(' ', space);
  if (start == std::string::npos) return {"", value};
  return {value.substr(0, start), value.substr(start)};
}

}  // namespace

bool looksSecret(std::string_view name) {
  std::string big = upper(name);
  if (big == "AUTHORIZATION" || big == "PROXY-AUTHORIZATION") return true;
  for (std::string_view part : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"}) {
    if (big.find(part) != std::string::npos) return true;
  }
  return false;
}

Result<AbilityPlan> planAbility(const AbilityDraft& draft) {
  AbilityPlan plan;
  Ability& ability = plan.ability;
  ability.name = draft.name;
  ability.description = draft.description;
  ability.transport = draft.transport;
  ability.url = draft.url;
  if (draft.npm) ability.package = PackageSpec{draft.npm, std::nullopt, std::nullopt};
  ability.command = draft.command;
  ability.args = draft.args;
  ability.cwd = draft.cwd;
  auto takeKey = [&](const std::string& name, KeyPlacement in, std::string prefix,
                     std::string key) -> Result<void> {
    if (ability.auth && ability.auth->name != name) {
      return fail(ErrorCode::kUsage, "kaja keeps one key per ability and \"" + name +
                                         "\" would be a second one after \"" + ability.auth->name +
                                         "\"; give only one secret value and leave the other out.");
    }
    ability.auth = AuthSpec{in, name, std::move(prefix), false};
    // A reference such as ${GITHUB_TOKEN} (as Claude Code's files hold) is no key: the
    // ability waits for one from `kaja key set`.
    if (key.find("${") != std::string::npos) {
      plan.keyReference = key;
      return {};
    }
    if (auto ok = Secrets::checkKey(key); !ok) {
      return fail(ErrorCode::kUsage, "the value of \"" + name +
                                         "\" cannot be stored as a key: it is empty or holds a "
                                         "control character (a stray newline?).");
    }
    plan.key = std::move(key);
    return {};
  };
  for (const auto& [name, value] : draft.env) {
    if (!looksSecret(name)) {
      ability.env[name] = value;
      continue;
    }
    if (auto ok = takeKey(name, KeyPlacement::kEnv, "", value); !ok) {
      return std::unexpected(ok.error());
    }
  }
  for (const auto& [name, value] : draft.headers) {
    if (!looksSecret(name)) {
      return fail(ErrorCode::kUsage,
                  "the header \"" + name +
                      "\" is not a key, and a kaja manifest sends no header but its key's "
                      "(Authorization or a *Key*/*Token* header); leave it out.");
    }
    auto [prefix, key] = splitHeaderKey(name, value);
    if (auto ok = takeKey(name, KeyPlacement::kHeader, prefix, key); !ok) {
      return std::unexpected(ok.error());
    }
  }
  return plan;
}

std::string formatAbility(const Ability& ability) {
  TomlValue root;
  if (!ability.description.empty()) put(root, "description", stringValue(ability.description));
  put(root, "transport", stringValue(toString(ability.transport)));
  if (ability.url) put(root, "url", stringValue(*ability.url));
  if (ability.auth) {
    TomlValue auth;
    put(auth, "type", stringValue("apiKey"));
    put(auth, "in", stringValue(ability.auth->in == KeyPlacement::kHeader ? "header" : "env"));
    put(auth, "name", stringValue(ability.auth->name));
    if (!ability.auth->prefix.empty()) put(auth, "prefix", stringValue(ability.auth->prefix));
    if (ability.auth->keyless) put(auth, "keyless", boolValue(true));
    put(root, "auth", std::move(auth));
  }
  if (ability.oauth) {
    TomlValue oauth;
    const OAuthSpec& spec = *ability.oauth;
    if (spec.grant != "authorization_code") put(oauth, "grant", stringValue(spec.grant));
    if (!spec.clientId.empty()) put(oauth, "clientId", stringValue(spec.clientId));
    if (!spec.privateKeyFile.empty())
      put(oauth, "privateKeyFile", stringValue(spec.privateKeyFile));
    if (spec.signingAlgorithm != "ES256") {
      put(oauth, "signingAlgorithm", stringValue(spec.signingAlgorithm));
    }
    if (!spec.clientSecretEnv.empty()) {
      put(oauth, "clientSecretEnv", stringValue(spec.clientSecretEnv));
    }
    if (!spec.scopes.empty()) put(oauth, "scopes", stringArray(spec.scopes));
    if (!spec.clientMetadataUrl.empty()) {
      put(oauth, "clientMetadataUrl", stringValue(spec.clientMetadataUrl));
    }
    put(root, "oauth", std::move(oauth));
  }
  if (ability.tools) put(root, "tools", stringArray(*ability.tools));
  if (ability.approval != ApprovalMode::kWrites) {
    put(root, "approval", stringValue(toString(ability.approval)));
  }
  if (ability.package) {
    TomlValue package;
    if (ability.package->npm) put(package, "npm", stringValue(*ability.package->npm));
    if (ability.package->pypi) put(package, "pypi", stringValue(*ability.package->pypi));
    if (ability.package->docker) put(package, "docker", stringValue(*ability.package->docker));
    put(root, "package", std::move(package));
  }
  if (ability.command) put(root, "command", stringValue(*ability.command));
  if (!ability.args.empty()) put(root, "args", stringArray(ability.args));
  if (ability.cwd) put(root, "cwd", stringValue(*ability.cwd));
  if (ability.roots) put(root, "roots", boolValue(true));
  if (!ability.env.empty()) {
    TomlValue env;
    for (const auto& [name, value] : ability.env) put(env, name, stringValue(value));
    put(root, "env", std::move(env));
  }
  std::string head = "# " + ability.name + ": written by `kaja add`";
  if (ability.auth)
    head += "; its key is in kaja's secrets file (`kaja key set " + ability.name + "`)";
  return head + ".\n" + formatToml(root);
}

std::string formatPersona(const Persona& persona) {
  std::string out;
  if (!persona.description.empty()) {
    out += "description = " + formatTomlInline(stringValue(persona.description)) + "\n\n";
  }
  if (persona.abilities.empty()) return out + "abilities = []\n";
  out += "abilities = [\n";
  for (const auto& entry : persona.abilities) {
    TomlValue value = personaEntry(entry);
    if (entry.roots.empty()) {
      out += "  " + formatTomlInline(value) + ",\n";
      continue;
    }
    // One folder a line, as the shipped personas are written (an array may span lines,
    // even inside an inline table).
    TomlValue roots = std::move(value.fields.back().value);
    value.fields.pop_back();
    std::string head = formatTomlInline(value);
    out += "  " + head.substr(0, head.size() - 2) + ", roots = [\n";
    for (const auto& root : roots.items) out += "    " + formatTomlInline(root) + ",\n";
    out += "  ] },\n";
  }
  return out + "]\n";
}

Result<Ability> writeAbilityManifest(const std::string& abilitiesDir, const std::string& name,
                                     std::string_view text, bool replace,
                                     const BeforeRename& beforeRename) {
  if (!isValidName(name)) {
    return fail(ErrorCode::kUsage, "\"" + name +
                                       "\" is not a valid ability name: use 1-64 of A-Z, a-z, "
                                       "0-9, - and _.");
  }
  const std::string folder = abilitiesDir + "/" + name;
  const std::string file = folder + "/mcp.toml";
  std::error_code ec;
  const bool exists = fs::exists(fs::symlink_status(folder, ec));
  if (exists && !replace) {
    return fail(ErrorCode::kUsage, "an ability named \"" + name + "\" already exists in " + folder +
                                       "; give --force to replace its manifest.");
  }
  // Checked by the loader before anything touches the disk, with errors naming the file it
  // becomes.
  auto root = parseTomlText(text, file);
  if (!root) return std::unexpected(root.error());
  auto ability = abilityFromToml(*root, name, file);
  if (!ability) return std::unexpected(ability.error());
  if (auto made = makeDirectories(abilitiesDir, 0700); !made) return std::unexpected(made.error());
  // A new ability is staged as a hidden folder (the catalog skips those) and renamed whole.
  const std::string stage = exists ? folder : abilitiesDir + "/." + name + ".new-" + randomSuffix();
  if (!exists && ::mkdir(stage.c_str(), 0755) != 0) {
    return fail(ErrorCode::kIo, syscallMessage("mkdir", stage, errno));
  }
  const std::string temp =
      exists ? folder + "/.mcp.toml.tmp-" + randomSuffix() : stage + "/mcp.toml";
  Staged staged(exists ? temp : stage);
  if (auto written = writeNewFile(temp, text, 0644); !written) {
    return std::unexpected(written.error());
  }
  if (beforeRename) {
    if (auto ok = beforeRename(); !ok) return std::unexpected(ok.error());
  }
  const std::string& from = exists ? temp : stage;
  const std::string& to = exists ? file : folder;
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return fail(ErrorCode::kIo, syscallMessage("rename", to, errno));
  }
  staged.keep();
  syncFolder(exists ? folder : abilitiesDir);
  return ability;
}

Result<Persona> writePersonaFile(const std::string& file, std::string_view text) {
  fs::path path(file);
  const std::string dir = path.parent_path().string();
  const std::string name = path.stem().string();
  auto root = parseTomlText(text, file);
  if (!root) return std::unexpected(root.error());
  auto persona = personaFromToml(*root, name, file);
  if (!persona) return std::unexpected(persona.error());
  if (auto made = makeDirectories(dir, 0700); !made) return std::unexpected(made.error());
  const std::string temp = dir + "/." + path.filename().string() + ".tmp-" + randomSuffix();
  Staged staged(temp);
  if (auto written = writeNewFile(temp, text, 0644); !written) {
    return std::unexpected(written.error());
  }
  if (::rename(temp.c_str(), file.c_str()) != 0) {
    return fail(ErrorCode::kIo, syscallMessage("rename", file, errno));
  }
  staged.keep();
  syncFolder(dir);
  return persona;
}

}  // namespace kaja::core
