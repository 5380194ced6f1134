#pragma once

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"

namespace kaja::core {

/// The niceness a server that is expected to start cheaply gets while a costlier one
/// starts beside it.
constexpr int kYieldingNiceness = 10;

/// How much CPU each stdio ability needed to connect on earlier runs, kept in a small JSON
/// file so a later run can give the costliest the CPU first. Node servers started together
/// share the cores evenly, so the costliest, which decides when a run ends, is slowed by
/// servers that would have finished well before it anyway. CPU rather than wall time is
/// kept because it barely changes with what else is starting, or at what priority.
class ConnectCosts {
 public:
  /// Reads `file`; a missing or unreadable file gives an empty record, since it only
  /// speeds things up.
  static ConnectCosts load(const std::string& file);
  /// Adds what was record()ed since load() to `file`, keeping every other entry as the file
  /// has it now (another run may have saved since): under an flock on `file`.lock, reads the
  /// file, merges, and writes it atomically with mode 0600. Creates its folder.
  [[nodiscard]] Result<void> save(const std::string& file) const;

  /// Remembers that `ability` used `cpu` to connect; a negative time is ignored.
  void record(const std::string& ability, std::chrono::milliseconds cpu);
  /// Returns the remembered CPU time, or -1 ms when there is none.
  [[nodiscard]] std::chrono::milliseconds last(const std::string& ability) const;

  /// Returns a niceness for each of `abilities`, started together: 0 for the costliest
  /// remembered and for any never measured, kYieldingNiceness for the rest. The scheduler
  /// still gives idle cores to the others, so no CPU time is lost; the costliest just gets
  /// its share first.
  [[nodiscard]] std::vector<int> niceness(const std::vector<std::string>& abilities) const;

 private:
  std::map<std::string, long> ms_;
  std::set<std::string> recorded_;  ///< measured by this run, as opposed to loaded
};

}  // namespace kaja::core
