#include "core/host/start_priority.h"

#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/util/sys.h"
#include "core/util/unique_fd.h"

namespace kaja::core {

ConnectCosts ConnectCosts::load(const std::string& file) {
  ConnectCosts times;
  auto text = readTextFile(file);
  if (!text) return times;
  auto parsed = nlohmann::json::parse(*text, nullptr, false);
  if (!parsed.is_object()) return times;
  for (const auto& [name, value] : parsed.items()) {
    if (value.is_number_integer() && value.get<long>() >= 0) times.ms_[name] = value.get<long>();
  }
  return times;
}

Result<void> ConnectCosts::save(const std::string& file) const {
  std::string dir = std::filesystem::path(file).parent_path().string();
  if (auto made = makeDirectories(dir, 0700); !made) return made;
  // Two doctors at once each load, measure and save: under the lock each save reads what
  // the other saved since its load and adds its own measurements, instead of writing over
  // them. The kernel drops the lock however kaja ends.
  auto lock = lockExclusive(file + ".lock");
  if (!lock) return std::unexpected(lock.error());
  ConnectCosts merged = load(file);
  for (const auto& name : recorded_) merged.ms_[name] = ms_.at(name);
  return writeFileAtomically(file, nlohmann::json(merged.ms_).dump(1) + "\n", 0600);
}

void ConnectCosts::record(const std::string& ability, std::chrono::milliseconds cpu) {
  if (cpu.count() < 0) return;
  ms_[ability] = cpu.count();
  recorded_.insert(ability);
}

std::chrono::milliseconds ConnectCosts::last(const std::string& ability) const {
  auto found = ms_.find(ability);
  return std::chrono::milliseconds(found == ms_.end() ? -1 : found->second);
}

std::vector<int> ConnectCosts::niceness(const std::vector<std::string>& abilities) const {
  long slowest = 0;
  for (const auto& name : abilities) slowest = std::max(slowest, last(name).count());
  std::vector<int> result;
  result.reserve(abilities.size());
  for (const auto& name : abilities) {
    long ms = last(name).count();
    bool quick = ms >= 0 && ms < slowest;
    result.push_back(quick ? kYieldingNiceness : 0);
  }
  return result;
}

}  // namespace kaja::core
