#pragma once

// Finding servers to add (T2, T3): the official MCP registry's search, and npm's search when
// the registry cannot answer. Everything a hit holds is the server's own word, unchecked.
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace kaja::marketplace::sync {

/// The official MCP registry, searched unless the user names another.
inline constexpr std::string_view kDefaultRegistryUrl = "https://registry.modelcontextprotocol.io";
/// The npm registry, searched when the MCP registry cannot answer.
inline constexpr std::string_view kDefaultNpmRegistryUrl = "https://registry.npmjs.org";

/// One way a hit can run, as its listing says.
struct HitRunner {
  std::string kind;        ///< "npm", "pypi", "oci", another registry's type, or "remote"
  std::string identifier;  ///< the package, image or (for "remote") the URL
  std::string version;     ///< "" when none is given
  std::string transport;   ///< "stdio", "streamable-http", "sse", or ""
};

/// One server a search found. Every string is third-party text as it arrived: flatten it
/// before it reaches a terminal or a model.
struct ServerHit {
  std::string fullName;  ///< "io.github.acme/spotify-mcp", or an npm package's name
  std::string name;      ///< the short name kaja would give it (shortServerName)
  std::string description;
  std::string version;
  std::string status;     ///< the registry's "active", "deprecated"…; "" when not said
  bool verified = false;  ///< listed by the MCP registry (false for npm's search)
  std::vector<HitRunner> runners;
  std::vector<std::string> secrets;  ///< env vars and headers it marks as secret
  /// Why the description must not be shown (a prompt injection, or too long); "" when it
  /// may be.
  std::string withheld;
  std::vector<std::string> findings;  ///< the injection patterns it matched, when withheld
};

/// Where and how findServers searches.
struct FindOptions {
  std::string registryUrl{kDefaultRegistryUrl};  ///< without a trailing '/'
  std::string npmRegistryUrl{kDefaultNpmRegistryUrl};
  std::size_t limit = 20;                         ///< hits kept, at most
  std::size_t maxBodyBytes = 4ULL * 1024 * 1024;  ///< each answer, at most
  std::chrono::milliseconds timeout{15000};       ///< each request, body included
  /// Returns true when a short name is taken (an ability kaja knows); reserved names are
  /// taken anyway.
  std::function<bool(const std::string&)> isTaken;
};

/// What findServers found.
struct FindReport {
  std::vector<ServerHit> hits;
  /// Set when the MCP registry failed and the hits come from npm: why it failed.
  std::optional<core::Error> registryError;
  std::size_t leftOut = 0;  ///< hits dropped because their name carried a prompt injection
};

/// Checks WORD for kaja find: one token of letters and digits. kUsage with one sentence
/// naming the tokens otherwise.
core::Result<std::string> checkSearchWord(std::string_view word);

/// Checks a registry URL as the user gave it: https, or http to this machine's loopback.
/// Returns it without a trailing '/'; kUsage naming `flag` otherwise.
core::Result<std::string> checkRegistryUrl(std::string_view url, std::string_view flag);

/// Returns true when `word` equals (ASCII case-insensitively) one token of `text`, the
/// tokens being its runs of letters and digits (every byte from 0x80 counts as a letter).
bool hasToken(std::string_view text, std::string_view word);

/// Returns the short name of `fullName` (T3): what follows its last '/', lower-cased, every
/// character outside [a-z0-9_-] made '-', dashes trimmed, at most 64 characters ("server"
/// when nothing is left). When that is reserved (kaja, shipped, user, workspace) or
/// `isTaken` says so, '-' and the first 6 hex digits of the SHA-256 of `fullName` are put
/// after it, so the name is the same on every run.
std::string shortServerName(std::string_view fullName,
                            const std::function<bool(const std::string&)>& isTaken = {});

/// Reads a registry's `/v0/servers` answer, in either shape the registry has used (entries
/// `{server: {...}, _meta: {...}}`, or the server's fields at the top with camelCase or
/// snake_case keys). Deleted servers and versions that are not the latest are skipped, and
/// a name is kept once. kProtocol when the answer is no such JSON.
core::Result<std::vector<ServerHit>> parseRegistryAnswer(std::string_view body);

/// Reads npm's `/-/v1/search` answer; each hit is unverified. kProtocol when malformed.
core::Result<std::vector<ServerHit>> parseNpmAnswer(std::string_view body);

/// Searches the MCP registry for `word` (checked with checkSearchWord) and, when the
/// registry is unreachable, answers an HTTP error or sends something malformed or too
/// large, npm's search instead. Keeps the hits that carry `word` as a token of their name
/// or description (npm's only when "mcp" is a token of their name, description or
/// keywords, as npm holds much besides servers), names them (shortServerName, with a
/// suffix for names several hits share), and scans names and descriptions for prompt
/// injection. Fails only when both searches fail, with one sentence naming both failures:
/// kConnect when neither could be reached (or the address guard refused both), kProtocol
/// when either answered wrongly.
core::Result<FindReport> findServers(const std::string& word, const FindOptions& options);

}  // namespace kaja::marketplace::sync
