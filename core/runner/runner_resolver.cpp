#include "core/runner/runner_resolver.h"

#include <cstdlib>

#include "core/manifest/cloud_eligibility.h"
#include "core/paths.h"
#include "core/runner/docker_probe.h"

namespace kaja::core {
namespace {

// "name@1.2.3" → {"name", "1.2.3"}; a scoped npm name keeps its leading '@'.
std::pair<std::string, std::string> splitVersion(const std::string& spec) {
  size_t at = spec.rfind('@');
  if (at == std::string::npos || at == 0) return {spec, ""};
  return {spec.substr(0, at), spec.substr(at + 1)};
}

struct Candidate {
  RunnerKind runner;
  std::vector<std::string> argv;
  std::vector<EnvVar> extraEnv;  ///< only for the docker client
};

std::optional<Candidate> npmCandidate(const std::string& spec, const RunnerContext& context) {
  // Without Node.js, bunx must run the package's scripts on bun itself.
  bool haveNode = context.finder.find("node").has_value();
  std::vector<std::string> bunArgs;
  if (auto bunx = context.finder.find("bunx")) {
    bunArgs = {*bunx};
  } else if (auto bun = context.finder.find("bun")) {
    bunArgs = {*bun, "x"};
  }
  if (!bunArgs.empty()) {
    if (!haveNode) bunArgs.push_back("--bun");
    bunArgs.push_back(spec);
    return Candidate{RunnerKind::kBunx, bunArgs, {}};
  }
  if (auto npx = context.finder.find("npx"); npx && haveNode) {
    return Candidate{RunnerKind::kNpx, {*npx, "-y", spec}, {}};
  }
  return std::nullopt;
}

std::optional<Candidate> pypiCandidate(const std::string& spec, const RunnerContext& context) {
  auto [name, version] = splitVersion(spec);
  if (auto uvx = context.finder.find("uvx")) {
    return Candidate{RunnerKind::kUvx, {*uvx, spec}, {}};
  }
  if (auto pipx = context.finder.find("pipx")) {
    std::string pin = version.empty() ? name : name + "==" + version;
    return Candidate{RunnerKind::kPipx, {*pipx, "run", "--spec", pin, name}, {}};
  }
  return std::nullopt;
}

// Docker's -e NAME copies the value from the client's own environment, so values never
// appear on the command line; the caller adds the names once the env is known.
std::optional<Candidate> dockerCandidate(const RunnerContext& context, std::string& whyNot) {
  auto docker = context.finder.find("docker");
  if (!docker) return std::nullopt;
  bool answers = context.dockerAnswers ? context.dockerAnswers(*docker)
                                       : dockerEngineAnswers(*docker, context.dockerEnv);
  if (!answers) {
    whyNot = "docker is installed but no Docker engine answers";
    return std::nullopt;
  }
  return Candidate{RunnerKind::kDocker, {*docker, "run", "-i", "--rm"}, context.dockerEnv};
}

std::string installHint(const PackageSpec& package, const std::string& dockerWhyNot) {
  std::vector<std::string> options;
  if (package.npm) options.push_back("bun or Node.js (for bunx or npx)");
  if (package.pypi) options.push_back("uv (for uvx) or pipx");
  if (package.docker) {
    options.push_back(dockerWhyNot.empty() ? "Docker" : "a running Docker engine");
  }
  std::string out = "nothing here can start it";
  if (!dockerWhyNot.empty()) out += " (" + dockerWhyNot + ")";
  out += "; install ";
  for (size_t i = 0; i < options.size(); ++i) {
    if (i > 0) out += i + 1 == options.size() ? ", or " : ", ";
    out += options[i];
  }
  return out;
}

void resolveRemote(const Ability& ability, const RunnerContext& context,
                   const std::optional<std::string>& key, Resolution& out) {
  RemotePlan plan;
  plan.url = ability.url.value_or("");
  plan.sse = ability.transport == Transport::kSse;
  if (ability.auth && key) {
    plan.headers.emplace_back(ability.auth->name, ability.auth->prefix + *key);
  }
  if (context.remoteAuth) context.remoteAuth(ability, plan);
  out.runner = RunnerKind::kRemote;
  out.remote = std::move(plan);
}

// Why `ability` stays here although a sandbox is configured, or nullopt when it goes there.
std::optional<std::string> notInSandbox(const Ability& ability, const SandboxTarget& sandbox,
                                        const std::optional<std::string>& key) {
  if (auto why = cloudRefusal(ability, sandbox.shared)) return why;
  // A keyless server still takes the user's key when there is one; the worker never gets
  // it (K23).
  if (ability.auth && key) {
    return "ability " + ability.name +
           " has your key, and a stdio server with a key stays on your machine";
  }
  if (!validWorkerName(ability.name)) {
    return "ability " + ability.name +
           "'s name is not one a sandbox worker serves (1 to 64 of a-z, 0-9, '.', '_', '-')";
  }
  return std::nullopt;
}

// The worker serves each (user, ability) at its own Streamable HTTP endpoint.
void resolveSandboxed(const Ability& ability, const SandboxTarget& sandbox, Resolution& out) {
  RemotePlan plan;
  plan.url = sandbox.url + "/users/" + sandbox.user + "/abilities/" + ability.name + "/mcp";
  plan.headers.emplace_back("Authorization", "Bearer " + sandbox.token);
  if (sandbox.freshToken) {
    plan.freshHeaders = [mint = sandbox.freshToken] {
      return std::vector<std::pair<std::string, std::string>>{
          {"Authorization", "Bearer " + mint()}};
    };
  }
  plan.via = "the sandbox at " + sandbox.url;
  plan.credentialsHint = "the sandbox did not accept kaja's token for user \"" + sandbox.user +
                         "\"; check token_file or key_file under [sandbox] in " +
                         sandbox.configFile;
  out.runner = RunnerKind::kSandbox;
  out.remote = std::move(plan);
  out.connectLimit = kSandboxConnectLimit;
}

bool resolveStdio(const Ability& ability, const RunnerContext& context,
                  const std::optional<std::string>& key, Resolution& out) {
  std::optional<Candidate> chosen;
  std::string dockerWhyNot;
  if (ability.command) {
    auto program = context.finder.find(*ability.command);
    if (!program) {
      out.reason = "\"" + *ability.command +
                   "\" is not installed (not found on PATH); install "
                   "it or fix \"command\" in " +
                   ability.manifestPath;
      return false;
    }
    chosen = Candidate{RunnerKind::kCommand, {*program}, {}};
  } else if (ability.package) {
    const PackageSpec& package = *ability.package;
    if (package.npm) chosen = npmCandidate(*package.npm, context);
    if (!chosen && package.pypi) chosen = pypiCandidate(*package.pypi, context);
    if (!chosen && package.docker) chosen = dockerCandidate(context, dockerWhyNot);
    if (!chosen) {
      out.reason = installHint(package, dockerWhyNot);
      return false;
    }
  }

  // The key's variable is named by the manifest, so it obeys the same rule as `env`.
  const bool keyByEnv = ability.auth && ability.auth->in == KeyPlacement::kEnv;
  std::vector<EnvVar> extra;
  if (keyByEnv && key) extra.push_back({ability.auth->name, *key, true});
  ChildEnv env = buildChildEnv(context.host, ability.env, ability.name, extra);
  out.warnings = std::move(env.warnings);

  LaunchPlan plan;
  plan.argv = std::move(chosen->argv);
  if (chosen->runner == RunnerKind::kDocker) {
    // Only the ability's own variables and its key cross into the container, by name.
    // `-e A=B` would set A inside, so a name with '=' never gets here (abilityMaySet).
    for (const auto& [name, value] : ability.env) {
      if (abilityMaySet(name)) {
        plan.argv.push_back("-e");
        plan.argv.push_back(name);
      }
    }
    if (keyByEnv && abilityMaySet(ability.auth->name)) {
      plan.argv.push_back("-e");
      plan.argv.push_back(ability.auth->name);
    }
    // The folders personas give it, at their own paths, so its roots mean the same inside.
    if (auto volumes = context.dockerVolumes.find(ability.name);
        volumes != context.dockerVolumes.end()) {
      for (const auto& volume : volumes->second) {
        plan.argv.push_back("-v");
        plan.argv.push_back(volume);
      }
    }
    plan.argv.push_back(*ability.package->docker);
    for (auto& var : chosen->extraEnv) env.vars.push_back(var);
  }
  for (const auto& arg : ability.args) plan.argv.push_back(arg);
  // The rule is matched against what would really be executed (bunx or npx as found, the
  // absolute program, every argument), not the manifest's words: a manifest cannot then
  // reach an allowed line's meaning by another program or runner, and the operator allows
  // exactly the lines kaja names in its refusals.
  if (context.stdioAllow && !context.stdioAllow->allows(plan.argv, [&](const std::string& name) {
        return context.finder.find(name);
      })) {
    out.state = AbilityState::kRefused;
    out.runner = chosen->runner;
    out.reason = context.stdioAllow->refusal(ability.name, plan.argv);
    return false;
  }
  for (const auto& [name, value] : ability.env) {
    if (abilityMaySet(name)) plan.shownEnv.push_back(name);
  }
  if (keyByEnv && abilityMaySet(ability.auth->name)) plan.shownEnv.push_back(ability.auth->name);
  plan.env = std::move(env.vars);
  if (ability.cwd) plan.workingDir = expandHome(*ability.cwd, context.host.get("HOME"));
  out.runner = chosen->runner;
  out.launch = std::move(plan);
  return true;
}

}  // namespace

const char* toString(AbilityState state) {
  switch (state) {
    case AbilityState::kOn:
      return "on";
    case AbilityState::kOff:
      return "off";
    case AbilityState::kLeftOut:
      return "left-out";
    case AbilityState::kRefused:
      return "refused";
  }
  return "left-out";
}

RunnerContext RunnerContext::fromProcess(const std::vector<std::string>& toolDirs) {
  const char* path = std::getenv("PATH");
  RunnerContext context{
      ExecutableFinder(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin", toolDirs),
      HostEnv::fromProcess(),
      {},
      {}};
  for (const char* name : {"DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_CERT_PATH",
                           "DOCKER_TLS_VERIFY"}) {
    if (const char* value = std::getenv(name)) context.dockerEnv.push_back({name, value, false});
  }
  return context;
}

std::string Resolution::runs(bool shortProgram) const {
  if (remote) return remote->url;
  return launch ? launch->display(shortProgram) : std::string();
}

Resolution resolveAbility(const Ability& ability, const RunnerContext& context,
                          const std::optional<std::string>& key) {
  Resolution out;
  if (context.sandbox) {
    if (auto why = notInSandbox(ability, *context.sandbox, key)) {
      out.notInSandbox = std::move(*why);
    } else {
      resolveSandboxed(ability, *context.sandbox, out);
      out.state = AbilityState::kOn;
      return out;
    }
  }
  if (ability.isRemote()) {
    resolveRemote(ability, context, key, out);
  } else if (!resolveStdio(ability, context, key, out)) {
    return out;  // left out (the default state) or refused, as resolveStdio set it
  }
  if (ability.needsKey() && !key) {
    out.state = AbilityState::kOff;
    out.reason = "needs an API key; add one with `kaja key set " + ability.name + "`";
    return out;
  }
  out.state = AbilityState::kOn;
  return out;
}

bool runsInSandbox(const Ability& ability, const RunnerContext& context,
                   const std::optional<std::string>& key) {
  return context.sandbox && !notInSandbox(ability, *context.sandbox, key);
}

}  // namespace kaja::core
