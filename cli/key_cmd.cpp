#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "cli/prompt.h"
#include "core/manifest/ability_loader.h"

namespace kaja::cli {
namespace {

int keySet(Context& context, const std::string& name) {
  const marketplace::AbilityRecord* record = context.catalog.findAbilityRecord(name);
  if (record == nullptr) {
    printError("there is no ability named \"" + name + "\"; `kaja abilities` lists them");
    return kExitUsage;
  }
  if (record->ability && !record->ability->auth) {
    printWarning(name +
                 " declares no auth in its manifest, so the key will not be used until "
                 "it does");
  }
  std::string key = readKey("API key for " + name + ": ");
  if (auto ok = core::Secrets::checkKey(key); !ok) {
    printError(ok.error());
    return kExitUsage;
  }
  // Under the file's lock, on what is in it now: a token another kaja refreshed meanwhile
  // is kept.
  auto saved = core::Secrets::update(context.paths.secretsFile, [&](core::Secrets& secrets) {
    if (record->ability) {
      secrets.setFor(*record->ability, std::move(key));
    } else {
      secrets.set(name, std::move(key));
    }
  });
  if (!saved) {
    printError(saved.error());
    return kExitFailed;
  }
  printNote("saved the key for " + name + " in " + context.paths.secretsFile);
  return kExitOk;
}

int keyRemove(Context& context, const std::string& name) {
  if (!context.secrets.has(name)) {
    printNote("no key was stored for " + name + "; nothing to remove");
    return kExitOk;
  }
  auto saved = core::Secrets::update(context.paths.secretsFile,
                                     [&](core::Secrets& secrets) { secrets.remove(name); });
  if (!saved) {
    printError(saved.error());
    return kExitFailed;
  }
  printNote("removed the key for " + name);
  return kExitOk;
}

int keyList(const Context& context, bool asJson) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& record : context.catalog.abilities()) {
    if (!record.ability || !record.ability->auth) continue;
    bool stored = context.secrets.has(record.name);
    bool keyless = record.ability->auth->keyless;
    // A workspace server's key comes from the environment its `.mcp.json` names, and a
    // stored key given for the server an ability reached before is not sent to this one.
    bool fromWorkspace = context.secrets.hasTransient(record.name);
    bool withheld = stored && context.secrets.withheld(record.name);
    if (asJson) {
      out.push_back({{"name", record.name},
                     {"stored", stored},
                     {"keyless", keyless},
                     {"fromWorkspace", fromWorkspace},
                     {"withheld", withheld}});
      continue;
    }
    std::string state = fromWorkspace ? "key from this workspace's .mcp.json or the environment "
                                        "it names (not stored)"
                        : withheld    ? "key stored for the server it reached before, so not sent "
                                        "(`kaja key set " +
                                         record.name + "` stores one for this one)"
                        : stored  ? "key stored"
                        : keyless ? "no key (works without one; a key may raise limits)"
                                  : "no key (off until you add one)";
    std::printf("%-24s %s\n", record.name.c_str(), oneLine(state).c_str());
  }
  if (asJson) std::printf("%s\n", jsonText(out).c_str());
  return kExitOk;
}

}  // namespace

int runKey(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--json"});
  if (!parsed) return reportError(parsed.error());
  const auto& words = parsed->positional;
  bool list = words.size() == 1 && words[0] == "list";
  bool change = words.size() == 2 && (words[0] == "set" || words[0] == "rm");
  if (!list && !change) {
    printError("usage: kaja key set NAME | kaja key rm NAME | kaja key list [--json]");
    return kExitUsage;
  }
  if (change && !core::isValidName(words[1])) {
    printError("\"" + words[1] + "\" is not an ability name (letters, digits, - and _)");
    return kExitUsage;
  }
  auto context = Context::load();
  if (!context) return reportError(context.error());
  if (list) return keyList(*context, parsed->has("--json"));
  return words[0] == "set" ? keySet(*context, words[1]) : keyRemove(*context, words[1]);
}

}  // namespace kaja::cli
