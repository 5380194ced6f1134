#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/paths.h"
#include "marketplace/catalog.h"

namespace kaja::marketplace::sync {

/// One synced marketplace as `<configDir>/marketplaces.toml` lists it.
struct MarketplaceEntry {
  std::string name;
  std::string source;                 ///< an https URL or an absolute file path (normaliseSource)
  std::optional<std::string> sha256;  ///< the pin, 64 lower-case hex digits
  std::optional<std::string> publicKey;  ///< base64 of an Ed25519 key, when signed
  std::optional<std::string> signature;  ///< where the signature is; default source + ".sig"

  /// Returns where the signature of the archive is fetched from.
  [[nodiscard]] std::string signatureSource() const {
    return signature ? *signature : source + ".sig";
  }
};

/// The list of synced marketplaces, in the order they were added (a later one wins).
struct MarketplaceList {
  std::string file;
  std::vector<MarketplaceEntry> entries;

  [[nodiscard]] const MarketplaceEntry* find(const std::string& name) const;
  [[nodiscard]] MarketplaceEntry* find(const std::string& name);
};

/// Reads `<configDir>/marketplaces.toml`; a missing file is an empty list. Every mistake is
/// kInvalidConfig naming the file and line.
core::Result<MarketplaceList> loadMarketplaceList(const core::Paths& paths);

/// Holds an exclusive lock on the list while it lives, so two commands that change it (two
/// `kaja marketplace add` at once) take turns instead of losing each other's entry. Take it
/// before loading the list that is to be changed.
class ListLock {
 public:
  static core::Result<ListLock> take(const core::Paths& paths);

 private:
  int fd_ = -1;

 public:
  ListLock() = default;
  ListLock(ListLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  ListLock& operator=(ListLock&&) = delete;
  ListLock(const ListLock&) = delete;
  ~ListLock();
};

/// Writes the list back (atomically, 0600 as the other config files).
core::Result<void> saveMarketplaceList(const MarketplaceList& list);

/// Returns true when `name` may name a marketplace: an ability name that is not "shipped",
/// "user", "workspace" or "kaja".
bool isValidMarketplaceName(const std::string& name);

/// Returns `<dataDir>/marketplaces/<name>`, where its synced copies live.
std::string marketplaceDir(const core::Paths& paths, const std::string& name);

/// Returns the folder the catalog reads for `name` (`<marketplaceDir>/live`, a link to the
/// synced copy), whether or not it was synced yet.
std::string liveDir(const core::Paths& paths, const std::string& name);

/// Returns every layer kaja reads, lowest first: the shipped marketplace, the synced ones in
/// the order added, and the user's own folder.
std::vector<Layer> catalogLayers(const core::Paths& paths, const MarketplaceList& list);

/// Loads the catalog of every layer, reading the marketplace list; a broken list is an
/// error, as a broken config.toml is.
core::Result<Catalog> loadCatalog(const core::Paths& paths);

}  // namespace kaja::marketplace::sync
