#include "core/paths.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace kaja::core {
namespace {

std::string envOr(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

// XDG says a relative value must be ignored, so only an absolute one counts.
std::string xdgDir(const char* var, const std::string& home, const char* fallback) {
  std::string value = envOr(var);
  if (!value.empty() && value.front() == '/') return value;
  if (home.empty()) return {};
  return home + "/" + fallback;
}

std::string executableDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace

std::string homeDir() { return envOr("HOME"); }

std::string expandHome(const std::string& path, const std::string& home) {
  if (path == "~") return home;
  if (path.starts_with("~/")) return home + path.substr(1);
  return path;
}

std::string findShippedMarketplace() {
  if (std::string over = envOr("KAJA_SHIPPED_MARKETPLACE"); !over.empty()) return over;
  std::string exeDir = executableDir();
  if (!exeDir.empty()) {
    std::error_code ec;
    auto installed = std::filesystem::path(exeDir) / ".." / "share" / "kaja" / "marketplace";
    if (std::filesystem::is_directory(installed, ec)) {
      return std::filesystem::weakly_canonical(installed, ec).string();
    }
  }
  return KAJA_SOURCE_MARKETPLACE;
}

std::string findInstalledTools() {
  std::string exeDir = executableDir();
  if (exeDir.empty()) return {};
  std::error_code ec;
  auto tools = std::filesystem::path(exeDir) / ".." / "libexec" / "kaja";
  if (!std::filesystem::is_directory(tools, ec)) return {};
  return std::filesystem::weakly_canonical(tools, ec).string();
}

Result<Paths> Paths::fromEnvironment() {
  std::string home = homeDir();
  Paths paths;
  std::string config = xdgDir("XDG_CONFIG_HOME", home, ".config");
  std::string data = xdgDir("XDG_DATA_HOME", home, ".local/share");
  if (config.empty() || data.empty()) {
    return fail(ErrorCode::kInvalidConfig,
                "cannot tell where kaja's files live: set HOME or XDG_CONFIG_HOME and "
                "XDG_DATA_HOME to absolute paths");
  }
  paths.configDir = config + "/kaja";
  paths.dataDir = data + "/kaja";
  paths.userMarketplace = paths.configDir + "/marketplace";
  paths.shippedMarketplace = findShippedMarketplace();
  paths.secretsFile = paths.configDir + "/secrets.toml";
  paths.configFile = paths.configDir + "/config.toml";
  paths.backupsDir = paths.dataDir + "/backups";
  paths.toolsDir = paths.dataDir + "/tools";
  return paths;
}

}  // namespace kaja::core
