#pragma once
// What a server said about itself and its tools, kept on disk so that `kaja serve` can list
// a lazy ability's tools without starting its server (V9).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/host/host_types.h"
#include "core/mcp/types.h"

namespace kaja::core::gateway {

/// How long an entry is fresh.
inline constexpr std::chrono::seconds kMetadataTtl{std::chrono::hours(24 * 7)};

/// Returns the time now, in Unix seconds, as entries record it.
std::int64_t unixSeconds();

/// One ability's cached metadata.
struct CachedMetadata {
  std::vector<mcp::Tool> tools;
  mcp::ServerInfo server;       ///< name, version, protocolVersion, capabilities
  std::int64_t savedAt = 0;     ///< Unix seconds
  std::int64_t ttlSeconds = 0;  ///< how long after savedAt it is fresh
  /// Returns true once the entry has outlived its TTL; a stale entry is still served while
  /// the server is asked again.
  [[nodiscard]] bool staleAt(std::int64_t now) const { return now >= savedAt + ttlSeconds; }
};

/// The cache folder: one JSON file per ability, named by the ability and a hash of how its
/// server starts (argv, environment, URL and headers, values included), so that any change
/// there makes the old entry unreachable. Secrets enter the hash only; files are 0600.
class MetadataCache {
 public:
  /// `dir` "" keeps nothing and finds nothing.
  explicit MetadataCache(std::string dir) : dir_(std::move(dir)) {}

  /// Returns the hex SHA-256 of everything about `activation` that decides what its server
  /// is: the ability's name, its launch plan or remote URL and headers, and the protocol
  /// it is spoken to at when the manifest names one.
  static std::string keyOf(const Activation& activation);

  /// Returns the entry for `activation`, or nullopt when there is none or it is unreadable
  /// (a damaged file is ignored, never trusted in part).
  [[nodiscard]] std::optional<CachedMetadata> load(const Activation& activation) const;
  /// Stores what `activation`'s server reported, fresh for `ttlSeconds` (at most
  /// kMetadataTtl), replacing the ability's older entries.
  Result<void> save(const Activation& activation, const mcp::ServerInfo& server,
                    const std::vector<mcp::Tool>& tools,
                    std::int64_t ttlSeconds = kMetadataTtl.count()) const;
  /// Returns how long an entry stays fresh: the server's own time to live when it gave one,
  /// at most kMetadataTtl; else kMetadataTtl.
  static std::int64_t freshFor(std::optional<std::chrono::milliseconds> serverTtl);

  [[nodiscard]] bool enabled() const { return !dir_.empty(); }

  /// Returns the tool names last cached for `ability` under any configuration, for shell
  /// completion: only names made of letters, digits, '_', '-' and '.', sorted; none when the
  /// entry is missing or damaged.
  [[nodiscard]] std::vector<std::string> toolNames(const std::string& ability) const;

 private:
  [[nodiscard]] std::string fileOf(const Activation& activation) const;
  std::string dir_;
};

}  // namespace kaja::core::gateway
