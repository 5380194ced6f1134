#include "cli/context.h"

#include "cli/output.h"

namespace kaja::cli {

core::Result<Context> Context::load() {
  auto paths = core::Paths::fromEnvironment();
  if (!paths) return std::unexpected(paths.error());
  if (auto problem = core::Secrets::permissionProblem(paths->secretsFile)) {
    printWarning(*problem);
  }
  auto secrets = core::Secrets::load(paths->secretsFile);
  if (!secrets) return std::unexpected(secrets.error());
  auto catalog = marketplace::Catalog::load({paths->shippedMarketplace, paths->userMarketplace});
  return Context{std::move(*paths), std::move(catalog), std::move(*secrets)};
}

std::vector<std::string> Context::toolDirs() const {
  return {paths.toolsDir + "/node_modules/.bin",
          paths.shippedMarketplace + "/runtime/node_modules/.bin"};
}

}  // namespace kaja::cli
