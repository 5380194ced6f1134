#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/manifest/ability.h"
#include "core/manifest/persona.h"

namespace kaja::marketplace {

/// Where a layer of abilities and personas comes from, lowest first. Only the user's own
/// layer may relax a rule (V5): a synced marketplace's `approval = "never"` or
/// `trustedSandbox` does not count (see Catalog::load).
enum class LayerKind {
  kShipped,      ///< comes with kaja
  kMarketplace,  ///< synced with `kaja marketplace sync`
  kUser,         ///< the user's own folder
  kWorkspace,    ///< a workspace's `.mcp.json`, read live; off until enabled (V3)
};

/// One layer: a folder holding `abilities/<name>/mcp.toml` and `personas/<name>.toml`.
struct Layer {
  std::string dir;
  LayerKind kind = LayerKind::kUser;
  std::string name;  ///< the marketplace's name for kMarketplace, else ""
};

/// Returns "shipped", "user" or "marketplace NAME": where a record came from, for listings.
std::string describeLayer(LayerKind kind, const std::string& name);

/// Returns "shipped", "marketplace", "user" or "workspace": a record's source in the
/// listings' --json (the marketplace's own name goes in a field of its own).
std::string sourceName(LayerKind kind);

/// One ability folder as found on disk: loaded, or broken with the reason.
struct AbilityRecord {
  std::string name;
  std::string dir;
  bool shipped = false;
  LayerKind layer = LayerKind::kUser;
  std::string marketplace;               ///< the synced marketplace's name, for kMarketplace
  std::optional<core::Ability> ability;  ///< set when the manifest loaded
  core::Error error;                     ///< why it is broken, when `ability` is empty
  /// For kWorkspace: whether `kaja enable` turned it on in this workspace, for exactly the
  /// entry it has now.
  bool enabled = false;
  /// For kWorkspace: the SHA-256 of its `.mcp.json` entry, which an enable is kept for.
  std::string fingerprint;
  /// What kaja did not take from the manifest, one sentence each: a relaxation that only
  /// the user's own layer may make.
  std::vector<std::string> notes;
  /// For kWorkspace: values of secret-looking variables (`${GH_TOKEN}`) expanded into the
  /// entry, with the reference they came from, so listings show the reference instead.
  std::vector<std::pair<std::string, std::string>> expandedSecrets;
};

/// Returns `text` with every value in `record.expandedSecrets` put back as its `${NAME}`.
std::string maskExpandedSecrets(const AbilityRecord& record, std::string text);

/// Returns the file a record was read from: its `mcp.toml`, or the workspace's `.mcp.json`.
std::string manifestFile(const AbilityRecord& record);

/// Returns why `record` is off although nothing else stops it: a workspace's server that
/// `kaja enable` has not turned on here (V3); nullopt for every other record.
std::optional<std::string> offUntilEnabled(const AbilityRecord& record);

/// One persona file as found on disk.
struct PersonaRecord {
  std::string name;
  std::string file;
  bool shipped = false;
  LayerKind layer = LayerKind::kUser;
  std::string marketplace;  ///< the synced marketplace's name, for kMarketplace
  std::optional<core::Persona> persona;
  core::Error error;                  ///< why it is broken, when `persona` is empty
  std::vector<std::string> warnings;  ///< e.g. an ability it names that does not exist
  /// Where the persona of the same name that this one replaces came from ("shipped",
  /// "marketplace NAME"), or "" when it replaces none.
  std::string replaces;
};

/// Every ability and persona kaja knows, merged from its layers. A later layer's entry of
/// the same name replaces the whole earlier entry. Loading never fails as a whole: a broken
/// file becomes a broken record and everything else still loads.
class Catalog {
 public:
  /// Loads `layers` in order, lowest first (the shipped marketplace, then the user's).
  /// Each layer is a folder holding `abilities/<name>/mcp.toml` and `personas/<name>.toml`;
  /// a missing folder is an empty layer.
  static Catalog load(const std::vector<std::string>& layers, bool firstLayerShipped = true);
  /// Loads `layers` in order, lowest first. In a kMarketplace layer, `approval = "never"`
  /// becomes "writes" and `trustedSandbox` is dropped, each with a note on the record.
  static Catalog loadLayers(const std::vector<Layer>& layers);

  /// Loads only persona `name`, from the highest of `layers` that has it (with `replaces`
  /// set as a full load would), or nullopt. Cheap: no ability manifest is read.
  static std::optional<PersonaRecord> loadOnePersona(const std::vector<Layer>& layers,
                                                     const std::string& name);

  /// Adds the records of a workspace's `.mcp.json` (kWorkspace). One never takes the place
  /// of an ability of the same name, from any layer: it is dropped and its name returned,
  /// so a cloned project cannot shadow the user's abilities.
  std::vector<std::string> addWorkspace(std::vector<AbilityRecord> records);

  /// Returns the records sorted by name.
  [[nodiscard]] const std::vector<AbilityRecord>& abilities() const { return abilities_; }
  [[nodiscard]] const std::vector<PersonaRecord>& personas() const { return personas_; }

  /// Returns the loaded ability or nullptr when unknown or broken.
  [[nodiscard]] const core::Ability* findAbility(const std::string& name) const;
  /// Returns the record (loaded or broken) or nullptr when unknown.
  [[nodiscard]] const AbilityRecord* findAbilityRecord(const std::string& name) const;
  [[nodiscard]] const core::Persona* findPersona(const std::string& name) const;

 private:
  std::vector<AbilityRecord> abilities_;
  std::vector<PersonaRecord> personas_;
};

}  // namespace kaja::marketplace
