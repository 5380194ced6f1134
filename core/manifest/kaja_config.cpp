#include "core/manifest/kaja_config.h"

#include <filesystem>
#include <utility>

#include "core/manifest/cloud_eligibility.h"
#include "core/manifest/field_reader.h"
#include "core/paths.h"

namespace kaja::core {
namespace {

namespace fs = std::filesystem;

// Returns why `url` cannot be a worker's base URL, or "" when it can. The transport parses
// it fully later; this catches what would otherwise surface far from the config file.
std::string urlProblem(const std::string& url) {
  const bool https = url.starts_with("https://");
  if (!https && !url.starts_with("http://")) {
    return "must start with http:// or https://, like \"https://sandbox.example.com\".";
  }
  const std::string rest = url.substr(https ? 8 : 7);
  const std::string authority = rest.substr(0, rest.find('/'));
  if (authority.empty()) return "needs a host after the scheme, like \"http://127.0.0.1:8940\".";
  for (const char c : url) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7F) {
      return "must not hold spaces or control characters.";
    }
    if (c == '?' || c == '#') return "is the worker's base URL: no query or fragment.";
  }
  if (authority.find('@') != std::string::npos) {
    return "must not carry a user or password; the token goes in token_file or key_file.";
  }
  return "";
}

// A path as written (`~/x`, `/x`, or relative to the config file's folder), made absolute.
std::string absolutePath(const std::string& path, const std::string& home,
                         const std::string& configFile) {
  std::string expanded = expandHome(path, home);
  if (expanded.starts_with("/")) return expanded;
  return (fs::path(configFile).parent_path() / expanded).lexically_normal().string();
}

Result<SandboxSettings> readSandbox(const FieldReader& top, const TomlValue& value,
                                    const std::string& home) {
  if (value.type != TomlValue::Type::kTable) {
    return std::unexpected(top.errorAt(
        value, "sandbox",
        std::string("must be a table ([sandbox] with url, user and token_file or key_file), "
                    "not ") +
            describeType(value.type) + "."));
  }
  FieldReader table(value, top.file(), "sandbox");
  if (auto ok = table.onlyKeys({"url", "user", "token_file", "key_file", "shared"}); !ok) {
    return std::unexpected(ok.error());
  }
  SandboxSettings settings;
  settings.at = {top.file(), value.line};
  KAJA_READ(settings.url, table.string("url"));
  if (settings.url.empty()) {
    return std::unexpected(table.errorHere("needs url, the sandbox worker's base URL."));
  }
  if (std::string problem = urlProblem(settings.url); !problem.empty()) {
    return std::unexpected(table.errorAt(*table.get("url"), "url", problem));
  }
  while (settings.url.ends_with("/")) settings.url.pop_back();
  KAJA_READ(settings.user, table.string("user"));
  if (settings.user.empty()) {
    return std::unexpected(table.errorHere("needs user, the user id the worker knows you by."));
  }
  if (!validWorkerName(settings.user)) {
    return std::unexpected(
        table.errorAt(*table.get("user"), "user",
                      "must be 1 to 64 characters of a-z, 0-9, '.', '_' and '-', not \"" +
                          settings.user + "\"."));
  }
  KAJA_READ(settings.tokenFile, table.string("token_file"));
  KAJA_READ(settings.keyFile, table.string("key_file"));
  if (settings.tokenFile.has_value() == settings.keyFile.has_value()) {
    return std::unexpected(table.errorHere(
        "needs exactly one of token_file (a file holding a token from `kaja sandbox token`) "
        "and key_file (the worker's key, from which kaja makes its own tokens)."));
  }
  std::string_view key = settings.tokenFile ? "token_file" : "key_file";
  std::string& path = settings.tokenFile ? *settings.tokenFile : *settings.keyFile;
  settings.credentialAt = {top.file(), table.get(key)->line};
  if (path.empty()) {
    return std::unexpected(table.errorAt(*table.get(key), key, "must name a file."));
  }
  path = absolutePath(path, home, top.file());
  KAJA_READ(settings.shared, table.boolean("shared"));
  return settings;
}

Result<StdioAllowList> readStdio(const FieldReader& top, const TomlValue& value) {
  if (value.type != TomlValue::Type::kTable) {
    return std::unexpected(
        top.errorAt(value, "stdio",
                    std::string("must be a table ([stdio] with allow = [\"command line\"]), not ") +
                        describeType(value.type) + "."));
  }
  FieldReader table(value, top.file(), "stdio");
  if (auto ok = table.onlyKeys({"allow"}); !ok) return std::unexpected(ok.error());
  const TomlValue* allow = table.get("allow");
  if (allow == nullptr) {
    return std::unexpected(table.errorHere(
        "needs allow, the list of stdio command lines kaja may start, such as allow = "
        "[\"npx -y @scope/server@1.2.3 *\"]."));
  }
  if (allow->type != TomlValue::Type::kArray) {
    return std::unexpected(table.errorAt(
        *allow, "allow",
        std::string("must be an array of command lines, not ") + describeType(allow->type) + "."));
  }
  StdioAllowList list;
  list.whereToAdd = "allow under [stdio] in " + top.file();
  for (size_t i = 0; i < allow->items.size(); ++i) {
    const TomlValue& item = allow->items[i];
    const std::string key = "allow[" + std::to_string(i) + "]";
    // An array's items may sit on lines of their own; an item without one is the array's.
    const TomlValue& at = item.line > 0 ? item : *allow;
    if (item.type != TomlValue::Type::kString) {
      return std::unexpected(table.errorAt(
          at, key,
          std::string("must be a command line in a string, not ") + describeType(item.type) + "."));
    }
    auto rule = parseStdioAllowRule(item.text);
    if (!rule) return std::unexpected(table.errorAt(at, key, rule.error()));
    rule->at = {top.file(), at.line};
    list.rules.push_back(std::move(*rule));
  }
  return list;
}

}  // namespace

Result<KajaConfig> loadKajaConfig(const std::string& file, const std::string& home) {
  KajaConfig config;
  config.file = file;
  std::error_code ec;
  if (!fs::exists(file, ec)) return config;
  auto parsed = parseTomlFile(file);
  if (!parsed) return std::unexpected(parsed.error());
  FieldReader top(*parsed, file, "");
  if (auto ok = top.onlyKeys({"sandbox", "stdio"}); !ok) return std::unexpected(ok.error());
  if (const TomlValue* sandbox = top.get("sandbox")) {
    auto settings = readSandbox(top, *sandbox, home);
    if (!settings) return std::unexpected(settings.error());
    config.sandbox = std::move(*settings);
  }
  if (const TomlValue* stdio = top.get("stdio")) {
    auto list = readStdio(top, *stdio);
    if (!list) return std::unexpected(list.error());
    config.stdioAllow = std::move(*list);
  }
  return config;
}

}  // namespace kaja::core
