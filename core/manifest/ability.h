#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kaja::core {

/// How kaja talks to a server.
enum class Transport { kStdio, kHttp, kSse };

/// When kaja asks a person before a call (K11).
enum class ApprovalMode { kNever, kWrites, kAlways };

/// When kaja's gateway runs an ability's server (V4).
enum class Lifecycle {
  kLazy,       ///< started on first use, stopped after idleTimeout without use
  kEager,      ///< started with the gateway, stopped after idleTimeout, started again on use
  kKeepAlive,  ///< started with the gateway, never stopped for idleness, restarted on exit
};

/// Where an API key goes (K1 `auth.in`).
enum class KeyPlacement { kHeader, kEnv };

/// Returns the manifest spelling: "stdio", "http" or "sse".
const char* toString(Transport transport);
/// Returns the manifest spelling: "never", "writes" or "always".
const char* toString(ApprovalMode mode);
/// Returns the manifest spelling: "lazy", "eager" or "keep-alive".
const char* toString(Lifecycle lifecycle);

/// How long a lazy or eager server may sit unused before the gateway stops it (V4).
inline constexpr int kDefaultIdleTimeoutSeconds = 600;

/// `auth = { type = "apiKey", in = …, name = …, prefix = …, keyless = … }`.
struct AuthSpec {
  KeyPlacement in = KeyPlacement::kEnv;
  std::string name;      ///< header name or env var name
  std::string prefix;    ///< put before the key in a header, e.g. "Bearer "
  bool keyless = false;  ///< the server also works without a key
};

/// `oauth = { clientId = …, clientSecretEnv = …, scopes = […], clientMetadataUrl = … }`: how
/// kaja signs in to a remote server that wants OAuth (T5). Every field is optional; without
/// a clientId kaja uses a Client ID Metadata Document (clientMetadataUrl) or registers
/// itself. The secret is named, never written here: the environment variable holding it.
struct OAuthSpec {
  /// "authorization_code" (a person signs in, the default) or "client_credentials" (kaja
  /// gets tokens itself with the client's secret or private key, SEP-1046).
  std::string grant = "authorization_code";
  std::string clientId;
  std::string clientSecretEnv;
  /// For client_credentials with private_key_jwt: a PEM private key file (absolute or ~/)
  /// and its algorithm, ES256 or RS256.
  std::string privateKeyFile;
  std::string signingAlgorithm = "ES256";
  std::vector<std::string> scopes;  ///< asked for on top of what the server asks for
  std::string clientMetadataUrl;
};

/// `package = { npm = …, pypi = …, docker = … }`: each is "name@version" (npm, pypi) or an
/// image reference (docker). At least one is set when the table is present.
struct PackageSpec {
  std::optional<std::string> npm;
  std::optional<std::string> pypi;
  std::optional<std::string> docker;
};

/// One `readOnly` entry (K12): the tool is a read unless one of `unless` is present.
struct ReadOnlyRule {
  std::string tool;
  std::vector<std::string> unless;
};

/// Where a value in a manifest came from, for errors that point at it.
struct SourceLocation {
  std::string file;
  int line = 0;
};

/// A parsed, validated `mcp.toml` (K1). Immutable once the loader returns it.
struct Ability {
  std::string name;  ///< the folder name
  std::string manifestPath;
  bool shipped = false;  ///< from the shipped marketplace rather than the user's
  std::string description;
  Transport transport = Transport::kStdio;
  std::optional<std::string> url;
  std::optional<AuthSpec> auth;
  std::optional<OAuthSpec> oauth;
  std::optional<std::vector<std::string>> tools;  ///< allow-list; unset means all tools
  ApprovalMode approval = ApprovalMode::kWrites;
  std::vector<ReadOnlyRule> readOnly;
  std::optional<PackageSpec> package;
  std::optional<std::string> command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  /// The folder a stdio server starts in: an absolute path or one under `~/`; unset means
  /// kaja's own working folder.
  std::optional<std::string> cwd;
  bool roots = false;
  std::vector<std::string> pathArgs;
  bool localOnly = false;
  std::vector<std::string> localOnlyArgs;
  bool trustedSandbox = false;
  std::map<std::string, std::string> toolDescriptions;
  /// At most this many of the server's tools are offered, the first in the server's own
  /// order; unset means no limit. Not a manifest key: kaja sets it for a workspace's server
  /// (V7: 64), which a cloned project could otherwise flood a persona with.
  std::optional<std::size_t> maxTools;
  Lifecycle lifecycle = Lifecycle::kLazy;
  int idleTimeoutSeconds = kDefaultIdleTimeoutSeconds;  ///< `idleTimeout`, in seconds
  /// `protocol`: the MCP version kaja speaks to the server, "2025-11-25" (initialize and a
  /// session) or "2026-07-28" (server/discover, stateless, with a fallback to initialize);
  /// empty leaves it to kaja (2026-07-28 first, falling back to initialize).
  std::string protocol;

  /// Returns true when the ability needs a key to be on (auth present and not keyless).
  [[nodiscard]] bool needsKey() const { return auth.has_value() && !auth->keyless; }
  /// Returns true for http and sse abilities.
  [[nodiscard]] bool isRemote() const { return transport != Transport::kStdio; }
  /// Returns true when the ability may only run on the user's own machine (K17): it is
  /// marked so, works on the user's folders, or starts in one of them (`cwd`).
  [[nodiscard]] bool isLocalOnly() const { return localOnly || roots || cwd.has_value(); }
};

}  // namespace kaja::core
