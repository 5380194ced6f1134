#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/output.h"
#include "core/paths.h"

namespace kaja::cli {

int runConfig(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--json"});
  if (!parsed) return reportError(parsed.error());
  if (parsed->positional.size() != 1 || parsed->positional[0] != "paths") {
    printError("usage: kaja config paths [--json]");
    return kExitUsage;
  }
  auto paths = core::Paths::fromEnvironment();
  if (!paths) return reportError(paths.error());
  std::vector<std::pair<std::string, std::string>> entries = {
      {"config", paths->configDir},
      {"data", paths->dataDir},
      {"marketplace", paths->userMarketplace},
      {"shipped", paths->shippedMarketplace},
      {"secrets", paths->secretsFile},
      {"settings", paths->configFile},
      {"backups", paths->backupsDir},
      {"tools", paths->toolsDir},
  };
  if (parsed->has("--json")) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [name, path] : entries) out[name] = path;
    std::printf("%s\n", jsonText(out).c_str());
    return kExitOk;
  }
  for (const auto& [name, path] : entries) std::printf("%-12s %s\n", name.c_str(), path.c_str());
  return kExitOk;
}

}  // namespace kaja::cli
