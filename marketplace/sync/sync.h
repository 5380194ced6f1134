#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/paths.h"
#include "marketplace/sync/archive.h"
#include "marketplace/sync/fetch.h"
#include "marketplace/sync/store.h"

namespace kaja::marketplace::sync {

/// One synced copy of a marketplace, as its `gen-N.json` records it.
struct Generation {
  std::string folder;    ///< "gen-N"
  std::string sha256;    ///< of the archive it came from
  std::string syncedAt;  ///< UTC, ISO 8601
  std::string source;
  std::size_t abilities = 0;
  std::size_t personas = 0;
};

/// What a marketplace's folder holds now.
struct MarketplaceState {
  std::optional<Generation> live;      ///< what the catalog reads; unset before a first sync
  std::optional<Generation> previous;  ///< what `rollback` would go back to
};

/// How a sync runs. `sha256`, when set, is a new pin that replaces the entry's for this sync
/// (the caller saves it into the list in `beforeSwitch`).
struct SyncOptions {
  std::optional<std::string> sha256;
  /// Called once the archive is verified and every manifest in it loaded, just before the
  /// new copy goes live (or when it is live already), so the caller can save a new pin
  /// first: a sync stopped after that is finished by the next one. An error ends the sync
  /// with the marketplace unchanged.
  std::function<core::Result<void>()> beforeSwitch;
  FetchLimits fetch;
  UnpackLimits unpack;
  /// Called as each step begins ("fetch", "verify", "unpack", "load", "switch").
  std::function<void(std::string_view step)> onStep;
};

/// What a sync did.
struct SyncReport {
  Generation live;
  bool unchanged = false;  ///< the archive was the one already live; nothing moved
  UnpackStats unpacked;
  /// Abilities whose `url` the new copy changed, and whose stored key was removed so it is
  /// never sent to the new address (V6).
  std::vector<std::string> droppedKeys;
};

/// Syncs `entry`: fetches the archive, checks its pin and its signature (each that the
/// entry or `options` sets; at least one must be), unpacks it into a new folder, finds the
/// layer (at the archive's root or under its one top folder), loads every ability and
/// persona in it, and only then makes it live with one rename, keeping the copy that was
/// live for rollback. A failure at any step leaves the marketplace as it was; the error
/// names the marketplace and the step ("… failed at verify: …"). An ability whose `url`
/// changed loses its stored key (in `paths.secretsFile`) once the new copy is live.
core::Result<SyncReport> syncMarketplace(const core::Paths& paths, const MarketplaceEntry& entry,
                                         const SyncOptions& options = {});

/// Swaps the live copy with the previous one. kNotFound when there is none. `beforeSwitch`,
/// when set, is called with the copy about to go live (to move the pin to it first); its
/// error ends the rollback with nothing changed.
core::Result<MarketplaceState> rollbackMarketplace(
    const core::Paths& paths, const std::string& name,
    const std::function<core::Result<void>(const Generation& next)>& beforeSwitch = {});

/// Returns what `name`'s folder holds.
MarketplaceState marketplaceState(const core::Paths& paths, const std::string& name);

/// Removes `name`'s synced copies. Its entry in the list is the caller's to remove.
core::Result<void> removeMarketplaceData(const core::Paths& paths, const std::string& name);

}  // namespace kaja::marketplace::sync
