#include "core/manifest/ability_loader.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <utility>

#include "core/manifest/field_reader.h"

namespace kaja::core {
namespace {

constexpr std::array<std::string_view, 22> kTopKeys = {"description",
                                                       "transport",
                                                       "url",
                                                       "auth",
                                                       "oauth",
                                                       "tools",
                                                       "approval",
                                                       "readOnly",
                                                       "package",
                                                       "command",
                                                       "args",
                                                       "env",
                                                       "cwd",
                                                       "roots",
                                                       "pathArgs",
                                                       "localOnly",
                                                       "localOnlyArgs",
                                                       "trustedSandbox",
                                                       "toolDescriptions",
                                                       "lifecycle",
                                                       "idleTimeout",
                                                       "protocol"};
// A day: a server kept idle longer than that is better declared keep-alive.
constexpr std::int64_t kMaxIdleTimeoutSeconds = 86400;

Result<AuthSpec> readAuth(const FieldReader& top, const TomlValue& value) {
  if (value.type != TomlValue::Type::kTable) {
    return std::unexpected(top.errorAt(
        value, "auth",
        std::string("must be a table like { type = \"apiKey\", in = \"env\", name = \"KEY\" }, "
                    "not ") +
            describeType(value.type) + "."));
  }
  FieldReader auth(value, top.file(), "auth");
  if (auto ok = auth.onlyKeys({"type", "in", "name", "prefix", "keyless"}); !ok) {
    return std::unexpected(ok.error());
  }
  AuthSpec spec;
  std::string type;
  KAJA_READ(type, auth.choice("type", {"apiKey"}));
  if (type.empty()) return std::unexpected(auth.errorHere("needs type = \"apiKey\"."));
  std::string in;
  KAJA_READ(in, auth.choice("in", {"header", "env"}));
  if (in.empty()) {
    return std::unexpected(auth.errorHere("needs in = \"header\" or in = \"env\"."));
  }
  spec.in = in == "header" ? KeyPlacement::kHeader : KeyPlacement::kEnv;
  KAJA_READ(spec.name, auth.string("name"));
  if (spec.name.empty()) {
    return std::unexpected(auth.errorHere(
        "needs a name: the header (like \"Authorization\") or env var that carries the key."));
  }
  KAJA_READ(spec.prefix, auth.string("prefix"));
  KAJA_READ(spec.keyless, auth.boolean("keyless"));
  return spec;
}

bool isFolderPath(std::string_view path);

Result<OAuthSpec> readOAuth(const FieldReader& top, const TomlValue& value) {
  if (value.type != TomlValue::Type::kTable) {
    return std::unexpected(top.errorAt(
        value, "oauth",
        std::string("must be a table like { clientId = \"…\", clientSecretEnv = \"NAME\" }, "
                    "not ") +
            describeType(value.type) + "."));
  }
  FieldReader oauth(value, top.file(), "oauth");
  if (auto ok = oauth.onlyKeys({"grant", "clientId", "clientSecretEnv", "privateKeyFile",
                                "signingAlgorithm", "scopes", "clientMetadataUrl"});
      !ok) {
    return std::unexpected(ok.error());
  }
  OAuthSpec spec;
  KAJA_READ(spec.grant, oauth.choice("grant", {"authorization_code", "client_credentials"}));
  KAJA_READ(spec.privateKeyFile, oauth.string("privateKeyFile"));
  KAJA_READ(spec.signingAlgorithm, oauth.choice("signingAlgorithm", {"ES256", "RS256"}));
  KAJA_READ(spec.clientId, oauth.string("clientId"));
  KAJA_READ(spec.clientSecretEnv, oauth.string("clientSecretEnv"));
  KAJA_READ(spec.scopes, oauth.strings("scopes"));
  KAJA_READ(spec.clientMetadataUrl, oauth.string("clientMetadataUrl"));
  if (!spec.clientSecretEnv.empty() && spec.clientId.empty()) {
    return std::unexpected(oauth.errorHere(
        "has clientSecretEnv without clientId; the secret belongs to a client id."));
  }
  if (spec.grant == "client_credentials" &&
      (spec.clientId.empty() || (spec.clientSecretEnv.empty() && spec.privateKeyFile.empty()))) {
    return std::unexpected(oauth.errorHere(
        "with grant = \"client_credentials\" needs clientId and either clientSecretEnv or "
        "privateKeyFile."));
  }
  if (!spec.privateKeyFile.empty() && !isFolderPath(spec.privateKeyFile)) {
    return std::unexpected(
        oauth.errorHere("privateKeyFile must be an absolute path or one that starts with ~/."));
  }
  if (!spec.clientMetadataUrl.empty() && !spec.clientMetadataUrl.starts_with("https://")) {
    return std::unexpected(oauth.errorHere(
        "clientMetadataUrl must be an https URL: authorization servers fetch it from there."));
  }
  for (const auto& scope : spec.scopes) {
    if (scope.empty() || scope.find_first_of(" \t\r\n\"\\") != std::string::npos) {
      return std::unexpected(
          oauth.errorHere("scopes must be single words without spaces or quotes."));
    }
  }
  return spec;
}

Result<PackageSpec> readPackage(const FieldReader& top, const TomlValue& value) {
  if (value.type != TomlValue::Type::kTable) {
    return std::unexpected(
        top.errorAt(value, "package",
                    std::string("must be a table like { npm = \"name@1.2.3\" }, not ") +
                        describeType(value.type) + "."));
  }
  FieldReader package(value, top.file(), "package");
  if (auto ok = package.onlyKeys({"npm", "pypi", "docker"}); !ok) {
    return std::unexpected(ok.error());
  }
  PackageSpec spec;
  KAJA_READ(spec.npm, package.string("npm"));
  KAJA_READ(spec.pypi, package.string("pypi"));
  KAJA_READ(spec.docker, package.string("docker"));
  if (!spec.npm && !spec.pypi && !spec.docker) {
    return std::unexpected(package.errorHere("needs at least one of npm, pypi or docker."));
  }
  for (auto [key, text] : {std::pair{"npm", &spec.npm}, std::pair{"pypi", &spec.pypi},
                           std::pair{"docker", &spec.docker}}) {
    if (!*text) continue;
    const std::string& name = **text;
    // A leading '-' would be read as an option by bunx, uvx or docker.
    if (name.empty() || name.front() == '-' || name.find_first_of(" \t\n\r") != std::string::npos) {
      return std::unexpected(package.errorAt(
          *package.get(key), key,
          "must be a package name (like \"name@1.2.3\"), without spaces or a leading \"-\"."));
    }
  }
  return spec;
}

Result<std::vector<ReadOnlyRule>> readReadOnly(const FieldReader& top, const TomlValue& value) {
  const char* shape = "must be an array of tool names or { tool = \"…\", unless = [\"arg\"] }";
  if (value.type != TomlValue::Type::kArray) {
    return std::unexpected(top.errorAt(
        value, "readOnly", std::string(shape) + ", not " + describeType(value.type) + "."));
  }
  std::vector<ReadOnlyRule> rules;
  for (const auto& item : value.items) {
    if (item.type == TomlValue::Type::kString) {
      rules.push_back({item.text, {}});
      continue;
    }
    if (item.type != TomlValue::Type::kTable) {
      return std::unexpected(
          top.errorAt(item, "readOnly",
                      std::string(shape) + ", but it holds " + describeType(item.type) + "."));
    }
    FieldReader entry(item, top.file(), "readOnly");
    if (auto ok = entry.onlyKeys({"tool", "unless"}); !ok) return std::unexpected(ok.error());
    ReadOnlyRule rule;
    KAJA_READ(rule.tool, entry.string("tool"));
    KAJA_READ(rule.unless, entry.strings("unless"));
    if (rule.tool.empty()) return std::unexpected(entry.errorHere("entry needs a tool name."));
    rules.push_back(std::move(rule));
  }
  return rules;
}

bool hasDotDotSegment(std::string_view path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (path.substr(start, end - start) == "..") return true;
    start = end + 1;
  }
  return false;
}

// An absolute path or one under ~/, as a working folder must be: kaja's own working folder
// is no folder a manifest can rely on.
bool isFolderPath(std::string_view path) {
  if (!path.starts_with('/') && path != "~" && !path.starts_with("~/")) return false;
  return std::none_of(path.begin(), path.end(),
                      [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// Cross-field errors point at the line of the key that breaks the rule, or at line 1.
class RuleError {
 public:
  RuleError(const Ability& ability, const LineLookup& lineOf)
      : ability_(ability), lineOf_(lineOf) {}

  std::unexpected<Error> operator()(std::string_view key, std::string message) const {
    int line = lineOf_ ? lineOf_(key) : 0;
    return std::unexpected(Error{ErrorCode::kInvalidConfig,
                                 std::move(message),
                                 ability_.manifestPath + ":" + std::to_string(line > 0 ? line : 1),
                                 {}});
  }

 private:
  const Ability& ability_;
  const LineLookup& lineOf_;
};

}  // namespace

bool isReservedName(std::string_view name) { return name == "kaja"; }

bool isValidName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  // A leading dash would read as an option on every command line that names it.
  if (name.front() == '-') return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

bool isAbsoluteHttpUrl(std::string_view url) {
  size_t rest = 0;
  if (url.starts_with("https://")) {
    rest = 8;
  } else if (url.starts_with("http://")) {
    rest = 7;
  } else {
    return false;
  }
  std::string_view authority = url.substr(rest, url.find_first_of("/?#", rest) - rest);
  if (authority.empty() || authority.front() == ':' || authority.front() == '@') return false;
  return url.find_first_of(" \t\r\n") == std::string_view::npos;
}

Result<Ability> abilityFromToml(const TomlValue& root, const std::string& name,
                                const std::string& file) {
  FieldReader top(root, file, "");
  if (auto ok = top.onlyKeys(kTopKeys); !ok) return std::unexpected(ok.error());

  Ability ability;
  ability.name = name;
  ability.manifestPath = file;
  KAJA_READ(ability.description, top.string("description"));

  std::string transport = "stdio";
  KAJA_READ(transport, top.choice("transport", {"stdio", "http", "sse"}));
  ability.transport = transport == "http"  ? Transport::kHttp
                      : transport == "sse" ? Transport::kSse
                                           : Transport::kStdio;
  KAJA_READ(ability.url, top.string("url"));
  if (const TomlValue* auth = top.get("auth")) {
    auto spec = readAuth(top, *auth);
    if (!spec) return std::unexpected(spec.error());
    ability.auth = std::move(*spec);
  }
  if (const TomlValue* oauth = top.get("oauth")) {
    auto spec = readOAuth(top, *oauth);
    if (!spec) return std::unexpected(spec.error());
    ability.oauth = std::move(*spec);
  }
  KAJA_READ(ability.tools, top.strings("tools"));

  std::string approval = "writes";
  KAJA_READ(approval, top.choice("approval", {"never", "writes", "always"}));
  ability.approval = approval == "never"    ? ApprovalMode::kNever
                     : approval == "always" ? ApprovalMode::kAlways
                                            : ApprovalMode::kWrites;
  if (const TomlValue* readOnly = top.get("readOnly")) {
    auto rules = readReadOnly(top, *readOnly);
    if (!rules) return std::unexpected(rules.error());
    ability.readOnly = std::move(*rules);
  }
  if (const TomlValue* package = top.get("package")) {
    auto spec = readPackage(top, *package);
    if (!spec) return std::unexpected(spec.error());
    ability.package = std::move(*spec);
  }
  KAJA_READ(ability.command, top.string("command"));
  KAJA_READ(ability.args, top.strings("args"));
  KAJA_READ(ability.env, top.stringMap("env"));
  KAJA_READ(ability.cwd, top.string("cwd"));
  KAJA_READ(ability.roots, top.boolean("roots"));
  KAJA_READ(ability.pathArgs, top.strings("pathArgs"));
  KAJA_READ(ability.localOnly, top.boolean("localOnly"));
  KAJA_READ(ability.localOnlyArgs, top.strings("localOnlyArgs"));
  KAJA_READ(ability.trustedSandbox, top.boolean("trustedSandbox"));
  KAJA_READ(ability.toolDescriptions, top.stringMap("toolDescriptions"));
  std::string lifecycle = "lazy";
  KAJA_READ(lifecycle, top.choice("lifecycle", {"lazy", "eager", "keep-alive"}));
  ability.lifecycle = lifecycle == "eager"        ? Lifecycle::kEager
                      : lifecycle == "keep-alive" ? Lifecycle::kKeepAlive
                                                  : Lifecycle::kLazy;
  KAJA_READ(ability.protocol, top.choice("protocol", {"2025-11-25", "2026-07-28"}));
  std::int64_t idle = kDefaultIdleTimeoutSeconds;
  KAJA_READ(idle, top.integer("idleTimeout", 1, kMaxIdleTimeoutSeconds));
  ability.idleTimeoutSeconds = static_cast<int>(idle);
  if (ability.lifecycle == Lifecycle::kKeepAlive && top.get("idleTimeout") != nullptr) {
    return std::unexpected(top.errorAt(*top.get("idleTimeout"), "idleTimeout",
                                       "has no effect on a keep-alive server, which is never "
                                       "stopped for idleness; remove it or make the ability "
                                       "lazy or eager."));
  }

  auto lineOf = [&](std::string_view key) {
    const TomlValue* value = top.get(key);
    return value != nullptr ? value->line : 0;
  };
  if (auto ok = validate(ability, lineOf); !ok) return std::unexpected(ok.error());
  return ability;
}

Result<Ability> loadAbility(const std::string& dir) {
  std::filesystem::path folder(dir);
  std::string name = folder.filename().string();
  if (name.empty()) name = folder.parent_path().filename().string();
  std::string file = (folder / "mcp.toml").string();
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    return fail(ErrorCode::kInvalidConfig,
                "the ability folder has no mcp.toml; add one or remove the folder", dir);
  }
  if (ec && status.type() != std::filesystem::file_type::not_found) {
    return fail(ErrorCode::kIo, "cannot read " + file + ": " + ec.message(), dir);
  }
  if (status.type() != std::filesystem::file_type::regular) {
    // A FIFO would block the reader, a device would be read for ever.
    return fail(ErrorCode::kInvalidConfig,
                "mcp.toml is " +
                    std::string(status.type() == std::filesystem::file_type::directory
                                    ? "a folder"
                                    : "not a regular file (a FIFO, socket or device)") +
                    ", not a file kaja reads; replace it with the ability's manifest",
                dir);
  }
  auto root = parseTomlFile(file);
  if (!root) return std::unexpected(root.error());
  return abilityFromToml(*root, name, file);
}

Result<void> validate(const Ability& ability, const LineLookup& lineOf) {
  RuleError error(ability, lineOf);
  if (!isValidName(ability.name)) {
    return error("", "the folder name \"" + ability.name +
                         "\" is not a valid ability name: use 1-64 of A-Z, a-z, 0-9, - and _, not "
                         "starting with -.");
  }
  if (isReservedName(ability.name)) {
    // kaja offers its own tools (list_backups, restore_backup) under this name; a server of
    // the same name would list a second copy beside them, in the model's view.
    return error("", "\"" + ability.name +
                         "\" is the name of kaja's own tools, so no ability may take it; give the "
                         "folder another name.");
  }
  if (ability.transport == Transport::kStdio) {
    if (!ability.package && !ability.command) {
      return error("transport",
                   "a stdio ability needs \"package\" (npm, pypi or docker) or \"command\".");
    }
    if (ability.package && ability.command) {
      return error("command", "\"command\" cannot be used together with \"package\"; keep one.");
    }
    if (ability.url) {
      return error("url",
                   "\"url\" only applies to http and sse abilities; remove it or set "
                   "transport = \"http\".");
    }
    if (ability.command && ability.command->empty()) {
      return error("command", "\"command\" must not be empty.");
    }
    if (ability.command && hasDotDotSegment(*ability.command)) {
      return error("command",
                   "\"command\" must not contain \"..\"; give a program name on PATH or an "
                   "absolute path.");
    }
    if (ability.oauth) {
      return error("oauth",
                   "\"oauth\" only applies to http and sse abilities; a stdio server takes a key "
                   "with auth = { type = \"apiKey\", in = \"env\", … }.");
    }
    if (ability.auth && ability.auth->in == KeyPlacement::kHeader) {
      return error("auth",
                   "\"auth\" with in = \"header\" needs an http or sse ability; a stdio server "
                   "takes its key with in = \"env\".");
    }
    if (ability.cwd && !isFolderPath(*ability.cwd)) {
      return error("cwd",
                   "\"cwd\" must be an absolute path or one that starts with ~/, without control "
                   "characters.");
    }
    return {};
  }
  std::string transport = toString(ability.transport);
  if (!ability.url || !isAbsoluteHttpUrl(*ability.url)) {
    return error(ability.url ? "url" : "transport",
                 "\"url\" must be an absolute http:// or https:// URL for a " + transport +
                     " ability" + (ability.url ? ", not \"" + *ability.url + "\"." : "."));
  }
  for (auto [key, set] :
       {std::pair{"package", ability.package.has_value()},
        std::pair{"command", ability.command.has_value()}, std::pair{"args", !ability.args.empty()},
        std::pair{"env", !ability.env.empty()}, std::pair{"cwd", ability.cwd.has_value()},
        std::pair{"roots", ability.roots}}) {
    if (set) {
      return error(key, "\"" + std::string(key) + "\" only applies to stdio abilities, not to a " +
                            transport + " one.");
    }
  }
  if (ability.auth && ability.auth->in == KeyPlacement::kEnv) {
    return error("auth",
                 "\"auth\" with in = \"env\" needs a stdio ability; a remote server takes its "
                 "key with in = \"header\".");
  }
  return {};
}

const char* toString(Transport transport) {
  switch (transport) {
    case Transport::kStdio:
      return "stdio";
    case Transport::kHttp:
      return "http";
    case Transport::kSse:
      return "sse";
  }
  return "stdio";
}

const char* toString(ApprovalMode mode) {
  switch (mode) {
    case ApprovalMode::kNever:
      return "never";
    case ApprovalMode::kWrites:
      return "writes";
    case ApprovalMode::kAlways:
      return "always";
  }
  return "writes";
}

const char* toString(Lifecycle lifecycle) {
  switch (lifecycle) {
    case Lifecycle::kLazy:
      return "lazy";
    case Lifecycle::kEager:
      return "eager";
    case Lifecycle::kKeepAlive:
      return "keep-alive";
  }
  return "lazy";
}

}  // namespace kaja::core
