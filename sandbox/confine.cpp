// How one stdio server is confined: the bubblewrap command line.
#include "sandbox/confine.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "sandbox/egress_proxy.h"
#include "sandbox/mounts.h"

namespace kaja::sandbox {
namespace {

using core::EnvVar;
using core::ErrorCode;

/// Variables glibc drops for setuid programs because they steer what gets loaded; kaja keeps
/// them away from the steps that run outside the sandbox (`kaja sandbox enter`, bwrap).
constexpr std::string_view kLoaderVariables[] = {
    "GCONV_PATH",   "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES",      "LOCALDOMAIN", "LOCPATH",
    "MALLOC_TRACE", "NIS_PATH",    "NLSPATH",        "RESOLV_HOST_CONF", "RES_OPTIONS"};

bool steersLoader(std::string_view name) {
  return name.starts_with("LD_") ||
         std::ranges::find(kLoaderVariables, name) != std::end(kLoaderVariables);
}

bool isExecutable(const std::string& path) {
  return path.starts_with('/') && ::access(path.c_str(), X_OK) == 0;
}

/// Splits the server's environment: what the outer steps may carry (returned) and, as
/// --setenv arguments for bwrap, what only the server may see.
std::vector<EnvVar> outerEnvironment(const core::LaunchPlan& server, const Confinement& where,
                                     std::vector<std::string>& setenv) {
  std::vector<EnvVar> env;
  for (const EnvVar& var : server.env) {
    if (steersLoader(var.name)) {
      setenv.insert(setenv.end(), {"--setenv", var.name, var.value});
    } else {
      env.push_back(var);
    }
  }
  core::setEnvVar(env, "HOME", where.insideHome);
  core::setEnvVar(env, "TMPDIR", kInsideTmp);
  if (!where.egressSocket.empty()) {
    for (const auto& [name, value] : egressProxyEnvironment(where.proxyPort)) {
      core::setEnvVar(env, name, value);
    }
  }
  return env;
}

core::Result<void> checkConfinement(const core::LaunchPlan& server, const Confinement& where) {
  if (server.argv.empty() || !server.argv.front().starts_with('/')) {
    return core::fail(ErrorCode::kInvalidConfig,
                      "the server to confine needs an absolute program path");
  }
  if (where.runAs && (where.runAs->uid == 0 || where.runAs->gid == 0)) {
    return core::fail(ErrorCode::kInvalidConfig,
                      "a sandboxed server must not run as root; give it an unprivileged user");
  }
  const bool needsKaja =
      !where.cgroups.empty() || !where.egressSocket.empty() || where.runAs.has_value();
  if (needsKaja && !isExecutable(where.kaja)) {
    return core::fail(
        ErrorCode::kInvalidConfig,
        "the sandbox needs the absolute path of the kaja program, not \"" + where.kaja + "\"");
  }
  if (!where.egressSocket.empty() && !where.egressSocket.starts_with('/')) {
    return core::fail(ErrorCode::kInvalidConfig,
                      "the egress socket path \"" + where.egressSocket + "\" must be absolute");
  }
  if (!where.egressSocket.empty() && where.proxyPort == 0) {
    return core::fail(ErrorCode::kInvalidConfig, "the sandbox proxy port must not be 0");
  }
  return {};
}

}  // namespace

core::Result<std::string> findBwrap(const Confinement& where) {
  if (!where.bwrap.empty()) {
    if (isExecutable(where.bwrap)) return where.bwrap;
    return core::fail(ErrorCode::kSpawn, "bubblewrap was not found at " + where.bwrap +
                                             "; install Debian's bubblewrap package or fix "
                                             "the path");
  }
  std::vector<std::string> candidates = {"/usr/bin/bwrap", "/usr/local/bin/bwrap"};
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest = path;
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const auto dir = rest.substr(0, colon);
      if (dir.starts_with('/')) candidates.push_back(std::string(dir) + "/bwrap");
      rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    }
  }
  for (const auto& candidate : candidates) {
    if (isExecutable(candidate)) return candidate;
  }
  return core::fail(ErrorCode::kSpawn,
                    "bubblewrap (bwrap) is not installed, so kaja cannot confine stdio servers; "
                    "install Debian's bubblewrap package");
}

core::Result<core::LaunchPlan> confine(const core::LaunchPlan& server, const Confinement& where) {
  if (auto checked = checkConfinement(server, where); !checked) {
    return std::unexpected(checked.error());
  }
  auto bwrap = findBwrap(where);
  if (!bwrap) return std::unexpected(bwrap.error());
  auto mounts = mountArgs(where, server.argv.front());
  if (!mounts) return std::unexpected(mounts.error());

  core::LaunchPlan plan;
  plan.niceness = server.niceness;
  plan.shownEnv = server.shownEnv;
  std::vector<std::string> setenv;
  plan.env = outerEnvironment(server, where, setenv);

  auto& argv = plan.argv;
  if (!where.cgroups.empty() || where.runAs) {
    argv.insert(argv.end(), {where.kaja, "sandbox", "enter"});
    for (const auto& dir : where.cgroups) argv.insert(argv.end(), {"--cgroup", dir});
    if (where.runAs) {
      argv.insert(argv.end(), {"--user", std::to_string(where.runAs->uid) + ":" +
                                             std::to_string(where.runAs->gid)});
    }
    argv.emplace_back("--");
  }
  argv.insert(argv.end(), {*bwrap, "--unshare-all", "--die-with-parent", "--new-session",
                           "--cap-drop", "ALL", "--hostname", "kaja-sandbox"});
  if (!where.nestedUserNamespaces) argv.insert(argv.end(), {"--unshare-user", "--disable-userns"});
  argv.insert(argv.end(), mounts->begin(), mounts->end());
  argv.insert(argv.end(), setenv.begin(), setenv.end());
  const std::string& chdir = server.workingDir.empty() ? where.insideHome : server.workingDir;
  argv.insert(argv.end(), {"--chdir", chdir, "--"});
  if (!where.egressSocket.empty()) {
    argv.insert(argv.end(), {where.kaja, "sandbox", "bridge", "--listen",
                             "127.0.0.1:" + std::to_string(where.proxyPort), "--socket",
                             kInsideEgressSocket, "--"});
  }
  argv.insert(argv.end(), server.argv.begin(), server.argv.end());
  return plan;
}

}  // namespace kaja::sandbox
