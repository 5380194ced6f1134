#include "cli/context.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "cli/output.h"
#include "cli/workspace_layer.h"
#include "core/auth/ability_auth.h"
#include "marketplace/sync/store.h"
#include "personas/docker_mounts.h"
#include "sandbox/token.h"

namespace kaja::cli {
namespace {

std::string where(const core::SourceLocation& at) {
  return at.file + ":" + std::to_string(at.line);
}

// The token in `[sandbox] token_file`: the file's text without surrounding whitespace.
core::Result<std::string> readTokenFile(const core::SandboxSettings& settings) {
  const std::string& path = *settings.tokenFile;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return core::fail(core::ErrorCode::kInvalidConfig,
                      "cannot read the sandbox token_file " + path +
                          "; make it with `kaja sandbox token USER --key-file F > FILE`",
                      where(settings.credentialAt));
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string token = text.str();
  const auto first = token.find_first_not_of(" \t\r\n");
  const auto last = token.find_last_not_of(" \t\r\n");
  token = first == std::string::npos ? "" : token.substr(first, last - first + 1);
  const bool printable = std::all_of(token.begin(), token.end(), [](char c) {
    return static_cast<unsigned char>(c) > ' ' && static_cast<unsigned char>(c) < 0x7F;
  });
  if (token.empty() || !printable) {
    return core::fail(core::ErrorCode::kInvalidConfig,
                      "the sandbox token_file " + path +
                          " must hold one token (from `kaja sandbox token`) and nothing else",
                      where(settings.credentialAt));
  }
  return token;
}

// Makes tokens under the worker's key, as `kaja sandbox token` would, one per request.
core::Result<std::function<std::string()>> tokenMaker(const core::SandboxSettings& settings) {
  auto key = sandbox::readKeyFile(*settings.keyFile);
  if (!key) {
    core::Error error = key.error();
    error.code = core::ErrorCode::kInvalidConfig;
    error.context = where(settings.credentialAt);
    return std::unexpected(std::move(error));
  }
  // The user was checked when config.toml was read, so making a token cannot fail.
  return [key = std::move(*key), user = settings.user] {
    auto token = sandbox::makeToken(key, user, sandbox::unixNow() + kSandboxTokenTtlSeconds);
    return token ? *token : std::string();
  };
}

}  // namespace

core::Result<Context> Context::load() {
  auto paths = core::Paths::fromEnvironment();
  if (!paths) return std::unexpected(paths.error());
  if (auto problem = core::Secrets::permissionProblem(paths->secretsFile)) {
    printWarning(*problem);
  }
  auto secrets = core::Secrets::load(paths->secretsFile);
  if (!secrets) return std::unexpected(secrets.error());
  auto config = core::loadKajaConfig(paths->configFile, core::homeDir());
  if (!config) return std::unexpected(config.error());
  auto catalog = marketplace::sync::loadCatalog(*paths);
  if (!catalog) return std::unexpected(catalog.error());
  Context context{std::move(*paths), std::move(*catalog), std::move(*secrets), std::move(*config),
                  ""};
  context.loadWorkspace();
  // A key stored for one server is never sent to another (V6): not when a marketplace's
  // ability of the same name takes the place of the one it was given for, nor after a sync
  // or a rollback moved it.
  for (const auto& record : context.catalog.abilities()) {
    if (record.ability && context.secrets.withholdMoved(*record.ability)) {
      printWarning("the key stored for " + record.name + " was given for " +
                   oneLine(context.secrets.target(record.name).value_or("")) + ", and " +
                   record.name + " now reaches " + oneLine(core::keyTarget(*record.ability)) +
                   ", so kaja does not send it; `kaja key set " + record.name +
                   "` stores one for it");
    }
  }
  return context;
}

void Context::loadWorkspace() {
  EnvLookup env = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
  };
  std::error_code ec;
  auto dir = findWorkspace(std::filesystem::current_path(ec).string(), core::homeDir(), env);
  if (!dir) return;
  // A folder named by KAJA_WORKSPACE that is no folder, or has no .mcp.json, is a mistake to
  // say, not silence.
  if (const char* chosen = std::getenv("KAJA_WORKSPACE"); chosen != nullptr && *chosen != '\0') {
    namespace fs = std::filesystem;
    if (!fs::is_directory(*dir, ec)) {
      printWarning("KAJA_WORKSPACE names " + oneLine(*dir) +
                   ", which is not a folder; no workspace's servers are read");
      return;
    }
    if (!fs::exists(fs::symlink_status(fs::path(*dir) / ".mcp.json", ec))) {
      printWarning("KAJA_WORKSPACE names " + oneLine(*dir) +
                   ", which holds no .mcp.json; no workspace's servers are read");
      return;
    }
  }
  Workspace workspace = readWorkspace(*dir, env, enabledInWorkspace(paths, *dir));
  workspaceDir = workspace.dir;
  for (const auto& warning : workspace.warnings) printWarning(warning);
  std::vector<std::string> shadowed = catalog.addWorkspace(std::move(workspace.records));
  for (const auto& [name, key] : workspace.keys) {
    // A file's key never reaches an ability of the user's whose name it shares.
    if (std::find(shadowed.begin(), shadowed.end(), name) == shadowed.end()) {
      secrets.setTransient(name, key);
    }
  }
  for (const auto& name : shadowed) {
    printWarning("server \"" + name + "\" in " + oneLine(workspace.file) +
                 " is not used: an ability of that name exists already, and a workspace never "
                 "takes an ability's place; rename it in the file to use it");
  }
}

std::vector<std::string> Context::toolDirs() const {
  std::vector<std::string> dirs = {paths.toolsDir + "/node_modules/.bin",
                                   paths.shippedMarketplace + "/runtime/node_modules/.bin"};
  // An installed kaja (cmake --install, the Debian package) keeps its bun here.
  if (std::string installed = core::findInstalledTools(); !installed.empty()) {
    dirs.push_back(installed);
  }
  return dirs;
}

core::Result<core::RunnerContext> Context::runners() const {
  core::RunnerContext runners = core::RunnerContext::fromProcess(toolDirs());
  runners.stdioAllow = config.stdioAllow;
  // Sign-in tokens, read afresh for each plan: `kaja login` in another terminal counts at
  // the next connection of a running gateway.
  runners.remoteAuth = [secretsFile = paths.secretsFile](const core::Ability& ability,
                                                         core::RemotePlan& plan) {
    auto secrets = core::Secrets::load(secretsFile);
    if (!secrets) return;
    if (auto record = secrets->oauth(ability)) {
      core::auth::attachTokens(ability, *record, secretsFile, plan);
    } else if (ability.oauth && ability.oauth->grant == "client_credentials") {
      // No person needed: the first 401 gets the tokens.
      core::auth::attachTokens(ability, std::nullopt, secretsFile, plan);
    } else if (ability.oauth) {
      plan.credentialsHint = "it asks for a sign-in; run `kaja login " + ability.name + "`";
    }
  };
  for (const auto& record : catalog.abilities()) {
    if (!record.ability || !record.ability->package || !record.ability->package->docker) continue;
    auto plan = personas::planDockerMounts(catalog, core::homeDir(), record.name);
    for (const auto& mount : plan.mounts) {
      runners.dockerVolumes[record.name].push_back(personas::volumeOf(mount));
    }
  }
  if (!config.sandbox) return runners;
  const core::SandboxSettings& settings = *config.sandbox;
  core::SandboxTarget target{settings.url, settings.user, "", settings.shared, config.file, {}};
  if (settings.tokenFile) {
    auto token = readTokenFile(settings);
    if (!token) return std::unexpected(token.error());
    target.token = std::move(*token);
  } else {
    auto maker = tokenMaker(settings);
    if (!maker) return std::unexpected(maker.error());
    target.token = (*maker)();
    target.freshToken = std::move(*maker);
  }
  runners.sandbox = std::move(target);
  return runners;
}

}  // namespace kaja::cli
