// `kaja add` and `kaja add-json`: the user's own abilities from the command line.
#include <algorithm>
#include <cstdio>

#include "cli/ability_edit.h"
#include "cli/args.h"
#include "cli/command.h"
#include "cli/output.h"
#include "core/manifest/ability_loader.h"
#include "core/manifest/field_reader.h"
#include "personas/persona_resolver.h"

namespace kaja::cli {
namespace {

core::Result<std::pair<std::string, std::string>> splitEnv(const std::string& text) {
  auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    return core::fail(core::ErrorCode::kUsage,
                      "--env takes NAME=VALUE, like --env LOG_LEVEL=debug, not \"" +
                          oneLine(text.substr(0, text.find('='))) + "\".");
  }
  return std::make_pair(text.substr(0, equals), text.substr(equals + 1));
}

core::Result<std::pair<std::string, std::string>> splitHeader(const std::string& text) {
  auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0 || text.find_first_of(" \t", 0) < colon) {
    return core::fail(core::ErrorCode::kUsage,
                      "--header takes 'Name: value', like --header 'Authorization: Bearer "
                      "TOKEN'.");
  }
  auto start = text.find_first_not_of(" \t", colon + 1);
  return std::make_pair(text.substr(0, colon),
                        start == std::string::npos ? std::string() : text.substr(start));
}

// npm packages are pinned, as every shipped one is, so a run never picks up a new release.
core::Result<void> checkNpm(const std::string& package) {
  auto at = package.find('@', 1);
  if (at == std::string::npos || at + 1 == package.size()) {
    return core::fail(core::ErrorCode::kUsage,
                      "--npm takes a pinned package, like --npm " +
                          (package.empty() ? std::string("name") : oneLine(package)) +
                          "@1.2.3; `npm view " + oneLine(package) + " version` shows the latest.");
  }
  return {};
}

core::Result<void> fillRemote(core::AbilityDraft& draft, const std::string& url,
                              const ParsedArgs& parsed) {
  std::string transport = parsed.value("--transport").value_or("http");
  if (transport != "http" && transport != "sse") {
    return core::fail(core::ErrorCode::kUsage,
                      "--transport takes http or sse, not \"" + oneLine(transport) + "\".");
  }
  draft.transport = transport == "sse" ? core::Transport::kSse : core::Transport::kHttp;
  draft.url = url;
  for (const auto& [flag, value] : parsed.values) {
    if (flag == "--env") {
      return core::fail(core::ErrorCode::kUsage,
                        "--env is for servers kaja starts; a remote one takes --header.");
    }
    if (flag != "--header") continue;
    auto header = splitHeader(value);
    if (!header) return std::unexpected(header.error());
    draft.headers.push_back(std::move(*header));
  }
  return {};
}

// Builds the draft from `kaja add NAME …`: `command` is what followed "--".
core::Result<core::AbilityDraft> draftFrom(const ParsedArgs& parsed,
                                           std::span<const std::string> command) {
  const auto& words = parsed.positional;
  core::AbilityDraft draft;
  draft.name = words.empty() ? "" : words[0];
  draft.description = parsed.value("--description").value_or("");
  auto npm = parsed.value("--npm");
  if (words.size() == 2 && !npm && command.empty()) {
    if (!words[1].starts_with("http://") && !words[1].starts_with("https://")) {
      return core::fail(core::ErrorCode::kUsage,
                        "put the server's command after --, like `kaja add " + oneLine(words[0]) +
                            " -- " + oneLine(words[1]) + " ARGS…`, or give an http(s) URL.");
    }
    if (auto ok = fillRemote(draft, words[1], parsed); !ok) return std::unexpected(ok.error());
    return draft;
  }
  if (words.size() != 1 || (!npm && command.empty())) {
    return core::fail(core::ErrorCode::kUsage,
                      "usage: kaja add NAME -- COMMAND ARGS…, kaja add NAME URL or kaja add "
                      "NAME --npm PACKAGE@VERSION (see kaja add --help).");
  }
  if (parsed.value("--transport") || parsed.value("--header")) {
    return core::fail(core::ErrorCode::kUsage,
                      "--transport and --header are for a remote ability, given by its URL.");
  }
  if (npm) {
    if (auto ok = checkNpm(*npm); !ok) return std::unexpected(ok.error());
    draft.npm = *npm;
    draft.args.assign(command.begin(), command.end());
  } else {
    draft.command = command.front();
    draft.args.assign(command.begin() + 1, command.end());
  }
  for (const auto& [flag, value] : parsed.values) {
    if (flag != "--env") continue;
    auto env = splitEnv(value);
    if (!env) return std::unexpected(env.error());
    draft.env.push_back(std::move(*env));
  }
  return draft;
}

void reportInstalled(const Context& context, const core::Ability& ability, bool keyStored) {
  printNote("added " + ability.name + " (" + ability.manifestPath + ")");
  if (keyStored) {
    printNote("its key (" + ability.auth->name + ") is in " + context.paths.secretsFile +
              ", not in the manifest");
  }
  auto runners = context.runners();
  if (!runners) return;
  core::Resolution resolution = core::resolveAbility(
      ability, *runners, keyStored ? std::optional<std::string>("set") : std::nullopt);
  if (resolution.state == core::AbilityState::kOn) {
    std::fprintf(stderr, "kaja: it runs: %s\n", oneLine(resolution.runs()).c_str());
  } else {
    printWarning(ability.name + " is " + core::toString(resolution.state) + ": " +
                 resolution.reason);
  }
  printNote("turn it on in the active persona with `kaja enable " + ability.name + "`");
}

}  // namespace

std::string nearestAbility(const Context& context, const std::string& name) {
  std::vector<std::string_view> names;
  for (const auto& record : context.catalog.abilities()) names.push_back(record.name);
  std::string near = core::nearestWord(name, std::span(names.data(), names.size()));
  return near.empty() ? "" : " Did you mean \"" + near + "\"?";
}

std::vector<std::string> personasListing(const Context& context, const std::string& ability) {
  std::string active = personas::activePersona(context.paths.configDir);
  std::vector<std::string> out;
  for (const auto& record : context.catalog.personas()) {
    if (!record.persona) continue;
    for (const auto& entry : record.persona->abilities) {
      if (entry.ability != ability) continue;
      out.insert(record.name == active ? out.begin() : out.end(), record.name);
    }
  }
  return out;
}

int installDraft(const core::AbilityDraft& draft, bool force) {
  if (!core::isValidName(draft.name)) {
    printError("\"" + draft.name +
               "\" is not a valid ability name: use 1-64 of A-Z, a-z, 0-9, - and _.");
    return kExitUsage;
  }
  auto context = Context::load();
  if (!context) return reportError(context.error());
  const marketplace::AbilityRecord* existing = context->catalog.findAbilityRecord(draft.name);
  if (existing != nullptr && existing->layer == marketplace::LayerKind::kWorkspace) {
    existing = nullptr;  // the workspace's server: an ability of the user's own takes its name
  }
  if (existing != nullptr && !force) {
    printError("an ability named \"" + draft.name + "\" already exists (" +
               (existing->shipped ? "shipped with kaja" : "your own") + ", in " + existing->dir +
               "); give --force to replace it" +
               (existing->shipped ? " with your own, which then takes its place." : "."));
    return kExitUsage;
  }
  auto plan = core::planAbility(draft);
  if (!plan) return reportError(plan.error());
  std::string text = core::formatAbility(plan->ability);
  core::Secrets& secrets = context->secrets;
  const std::string& secretsFile = context->paths.secretsFile;
  auto saveKey = [&]() -> core::Result<void> {
    if (!plan->key) return {};
    secrets.setFor(plan->ability, *plan->key);
    return secrets.save(secretsFile);
  };
  auto written = core::writeAbilityManifest(context->paths.userMarketplace + "/abilities",
                                            draft.name, text, force, saveKey);
  if (!written) return reportError(written.error());
  reportInstalled(*context, *written, plan->key.has_value());
  if (plan->keyReference) {
    printWarning(draft.name + "'s key was given as " + *plan->keyReference +
                 ", which kaja does not expand; store the key itself with `kaja key set " +
                 draft.name + "`");
  }
  return kExitOk;
}

int runAdd(std::span<const std::string> args) {
  auto dashes = std::find(args.begin(), args.end(), std::string("--"));
  std::span<const std::string> own(args.begin(), dashes);
  std::span<const std::string> command;
  if (dashes != args.end()) command = std::span<const std::string>(dashes + 1, args.end());
  auto parsed =
      parseArgs(own, {"--force"}, {"--env", "--header", "--transport", "--npm", "--description"});
  if (!parsed) return reportError(parsed.error());
  if (dashes != args.end() && command.empty()) {
    printError(
        "nothing follows --; give the server's command, like `kaja add NAME -- node "
        "server.js`.");
    return kExitUsage;
  }
  auto draft = draftFrom(*parsed, command);
  if (!draft) return reportError(draft.error());
  return installDraft(*draft, parsed->has("--force"));
}

}  // namespace kaja::cli
