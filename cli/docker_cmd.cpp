// `kaja docker mounts`: the `docker run -v` arguments that give kaja in a container the same
// folders its personas name, each at its own path (K25).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "personas/docker_mounts.h"

namespace kaja::cli {
namespace {}  // namespace

int runDocker(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--json"});
  if (!parsed) return reportError(parsed.error());
  if (parsed->positional.size() != 1 || parsed->positional[0] != "mounts") {
    printError("usage: kaja docker mounts [--json]");
    return kExitUsage;
  }
  auto context = Context::load();
  if (!context) return reportError(context.error());
  const auto plan = personas::planDockerMounts(context->catalog, core::homeDir());
  const int status = plan.refused.empty() ? kExitOk : kExitFailed;
  if (parsed->has("--json")) {
    nlohmann::json mounts = nlohmann::json::array();
    nlohmann::json argv = nlohmann::json::array();
    for (const auto& mount : plan.mounts) {
      mounts.push_back({{"path", mount.path},
                        {"readOnly", mount.readOnly},
                        {"personas", mount.personas},
                        {"abilities", mount.abilities},
                        {"source", mount.source},
                        {"volume", personas::volumeOf(mount)}});
      argv.push_back("-v");
      argv.push_back(personas::volumeOf(mount));
    }
    nlohmann::json out = {{"mounts", std::move(mounts)},
                          {"args", std::move(argv)},
                          {"warnings", plan.warnings},
                          {"refused", plan.refused}};
    std::printf("%s\n", jsonText(out).c_str());
    return status;
  }
  for (const auto& warning : plan.warnings) printWarning(warning);
  for (const auto& refusal : plan.refused) printError(refusal);
  for (const auto& mount : plan.mounts) {
    // No quoting: every path that a shell would split or expand was refused above.
    std::printf("-v %s\n", personas::volumeOf(mount).c_str());
  }
  return status;
}

}  // namespace kaja::cli
