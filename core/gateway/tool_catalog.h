#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/mcp/types.h"
#include "core/policy/call_pipeline.h"
#include "core/policy/tool_filter.h"

namespace kaja::core::gateway {

/// How the catalog names the tools it offers.
enum class NameStyle {
  kCli,       ///< mcp__<ability>__<tool>, as `kaja tools` shows them (S2)
  kPrefixed,  ///< <ability>__<tool>: no server can shadow another's tool
  kBare,      ///< the server's own names; two abilities with one name are an error
};

/// Tool names a client accepts: at most this long, of [A-Za-z0-9_.-].
inline constexpr std::size_t kMaxToolNameLength = 64;

/// Returns `ability` and `tool` joined in `style` (not kBare), shortened to
/// kMaxToolNameLength with a stable hash suffix when longer, and with any character a client
/// would refuse replaced (and the hash added then too, so two names never merge). An ability
/// whose name holds "__" gets the hash of the pair always, so it cannot take another's name.
std::string exposedName(NameStyle style, const std::string& ability, const std::string& tool);

/// One tool the persona offers, under the name a client sees.
struct CatalogTool {
  std::string name;     ///< what the client calls it
  std::string ability;  ///< policy::kKajaAbility for kaja's own tools
  mcp::Tool tool;       ///< as the server listed it, under its own name
  bool readOnly = false;
};

/// A tool left out of the catalog, with the rule that dropped it.
struct DroppedEntry {
  std::string ability;
  policy::DroppedTool tool;
};

/// Settings for a catalog.
struct CatalogSettings {
  std::string persona;
  std::string home;
  policy::PipelineOptions pipeline;
  NameStyle names = NameStyle::kPrefixed;
};

/// The persona's tool list, owned in one place for `kaja tools`, `kaja call` and
/// `kaja serve`: which tools each ability offers after the filter step, the names a client
/// sees, kaja's own backup tools, and the routing of a call to them or through the
/// CallPipeline to a server. Not thread-safe: one owner, one thread.
class ToolCatalog {
 public:
  /// `scopes` has one entry per ability the persona gives (its tools come with setTools()).
  ToolCatalog(CatalogSettings settings, std::vector<policy::CallScope> scopes);

  /// Records what `ability` listed (at connect, or after list_changed) and filters it.
  void setTools(const std::string& ability, const std::vector<mcp::Tool>& listed);
  /// Forgets `ability`'s tools (it disconnected or failed).
  void clearTools(const std::string& ability);

  /// Returns every offered tool, abilities in persona order, kaja's own tools last.
  [[nodiscard]] const std::vector<CatalogTool>& list() const;
  /// Returns the tools the filter step left out.
  [[nodiscard]] std::vector<DroppedEntry> dropped() const;
  /// Returns an error naming both abilities when kBare names collide.
  [[nodiscard]] Result<void> checkNames() const;
  /// Returns true when the persona offers kaja's own backup tools.
  [[nodiscard]] bool offersBackupTools() const { return backupTools_; }
  /// Returns the scope of `ability`, or null when the persona does not give it.
  [[nodiscard]] const policy::CallScope* scope(const std::string& ability) const;

  /// Where a call to a client-visible name goes.
  struct Route {
    std::string ability;
    std::string tool;
  };
  /// Returns the route of `name`, or a kNotFound error that names what exists.
  [[nodiscard]] Result<Route> route(const std::string& name) const;

  /// Runs `tool` of `ability` (kKajaAbility for kaja's own) through every rule: kaja's own
  /// tools directly, any other through the pipeline, which sends it with `send`. `done` runs
  /// once; `approvals`, `audit` (may be null) and the catalog must outlive it.
  void call(const std::string& ability, const std::string& tool, mcp::Json arguments,
            policy::ApprovalSession& approvals, policy::AuditLog* audit,
            policy::AsyncCallFunction send, std::function<void(policy::CallOutcome)> done);

 private:
  struct Entry {
    std::shared_ptr<const policy::CallScope> scope;
    std::shared_ptr<const policy::FilteredTools> filtered;  ///< null until listed
  };
  [[nodiscard]] const Entry* find(const std::string& ability) const;

  CatalogSettings settings_;
  mutable std::optional<std::vector<CatalogTool>> listed_;  ///< list(), until tools change
  mutable std::map<std::string, Route> routes_;             ///< by client-visible name
  mutable std::map<std::string, std::string> ambiguous_;    ///< a name two abilities offer
  std::vector<std::pair<std::string, Entry>> abilities_;    ///< in persona order
  bool backupTools_ = false;
};

}  // namespace kaja::core::gateway
