// `kaja get NAME` and `kaja remove NAME`: one ability in full, and taking the user's own
// away.
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "cli/ability_edit.h"
#include "cli/args.h"
#include "cli/command.h"
#include "cli/output.h"
#include "core/manifest/ability_loader.h"
#include "core/util/sys.h"

namespace kaja::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Returns the record for `name`, or prints why there is none (with a did-you-mean).
const marketplace::AbilityRecord* findOrSay(const Context& context, const std::string& name) {
  const marketplace::AbilityRecord* record = context.catalog.findAbilityRecord(name);
  if (record == nullptr) {
    printError("there is no ability named \"" + name + "\"; `kaja abilities` lists them." +
               nearestAbility(context, name));
  }
  return record;
}

bool shippedExists(const Context& context, const std::string& name) {
  std::error_code ec;
  return fs::exists(context.paths.shippedMarketplace + "/abilities/" + name + "/mcp.toml", ec);
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : ", ") + word;
  return out;
}

}  // namespace

int runGet(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--json"});
  if (!parsed) return reportError(parsed.error());
  if (parsed->positional.size() != 1) {
    printError("usage: kaja get NAME [--json].");
    return kExitUsage;
  }
  auto context = Context::load();
  if (!context) return reportError(context.error());
  const std::string& name = parsed->positional[0];
  const marketplace::AbilityRecord* record = findOrSay(*context, name);
  if (record == nullptr) return kExitUsage;
  using marketplace::LayerKind;
  const std::string file = marketplace::manifestFile(*record);
  json out = {{"name", name},
              {"source", marketplace::sourceName(record->layer)},
              {"marketplace", record->marketplace.empty() ? json() : json(record->marketplace)},
              {"manifest", file},
              {"overridesShipped", !record->shipped && shippedExists(*context, name)},
              {"text", core::readTextFile(file).value_or("")},
              {"personas", personasListing(*context, name)},
              {"runner", nullptr},
              {"runs", nullptr},
              {"reason", nullptr}};
  if (!record->ability) {
    out["state"] = "broken";
    out["reason"] = record->error.describe();
  } else {
    auto runners = context->runners();
    if (!runners) return reportError(runners.error());
    const core::Ability& ability = *record->ability;
    core::Resolution resolution =
        core::resolveAbility(ability, *runners, context->secrets.key(name));
    out["state"] = core::toString(resolution.state);
    if (!resolution.reason.empty()) out["reason"] = resolution.reason;
    if (auto off = marketplace::offUntilEnabled(*record);
        off && resolution.state == core::AbilityState::kOn) {
      out["state"] = "off";
      out["reason"] = *off;
    }
    if (resolution.runner) out["runner"] = core::toString(*resolution.runner);
    if (std::string runs = marketplace::maskExpandedSecrets(*record, resolution.runs());
        !runs.empty()) {
      out["runs"] = runs;
    }
    out["transport"] = core::toString(ability.transport);
    out["keyStored"] = ability.auth ? json(context->secrets.has(name)) : json();
  }
  if (parsed->has("--json")) {
    std::printf("%s\n", jsonText(out).c_str());
    return kExitOk;
  }
  auto text = [&](const char* key) {
    return out[key].is_string() ? oneLine(out[key].get<std::string>()) : std::string("-");
  };
  const std::string from = record->layer == LayerKind::kShipped ? "shipped with kaja"
                           : record->layer == LayerKind::kMarketplace
                               ? "from marketplace " + record->marketplace
                           : record->layer == LayerKind::kWorkspace ? "from this workspace"
                                                                    : "your own";
  std::printf("%s (%s%s)\n", oneLine(name).c_str(), oneLine(from).c_str(),
              out["overridesShipped"] ? ", in place of the shipped one" : "");
  std::printf("manifest: %s\nstate:    %s\n", oneLine(file).c_str(), text("state").c_str());
  if (out["reason"].is_string()) std::printf("why:      %s\n", text("reason").c_str());
  std::printf("runner:   %s\nruns:     %s\n", text("runner").c_str(), text("runs").c_str());
  if (out.contains("keyStored") && out["keyStored"].is_boolean()) {
    std::printf("key:      %s\n", out["keyStored"] ? "stored" : "not stored");
  }
  std::string listing = joined(out["personas"]);
  std::printf("personas: %s\n\n", listing.empty() ? "none" : oneLine(listing).c_str());
  std::fputs(safeText(out["text"].get<std::string>()).c_str(), stdout);
  return kExitOk;
}

int runRemove(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {});
  if (!parsed) return reportError(parsed.error());
  if (parsed->positional.size() != 1) {
    printError("usage: kaja remove NAME.");
    return kExitUsage;
  }
  const std::string& name = parsed->positional[0];
  if (!core::isValidName(name)) {
    printError("\"" + name + "\" is not a valid ability name: use 1-64 of A-Z, a-z, 0-9, - and _.");
    return kExitUsage;
  }
  auto context = Context::load();
  if (!context) return reportError(context.error());
  const marketplace::AbilityRecord* record = findOrSay(*context, name);
  if (record == nullptr) return kExitUsage;
  std::vector<std::string> listing = personasListing(*context, name);
  if (record->shipped) {
    printError("\"" + name + "\" is shipped with kaja and cannot be removed; " +
               (listing.empty() ? std::string("no persona lists it, so it is not in use.")
                                : "to turn it off, remove it from the persona: `kaja persona "
                                  "remove " +
                                      listing.front() + " " + name + "`."));
    return kExitUsage;
  }
  // Renamed to a hidden name first, so no reader ever sees half a folder.
  std::random_device random;
  const std::string gone = context->paths.userMarketplace + "/abilities/." + name + ".removed-" +
                           std::to_string(random());
  std::error_code ec;
  fs::rename(record->dir, gone, ec);
  if (ec) {
    printError("cannot remove " + record->dir + ": " + ec.message() + ".");
    return kExitFailed;
  }
  fs::remove_all(gone, ec);
  printNote("removed " + name + " (" + record->dir + ")");
  if (shippedExists(*context, name)) {
    printNote("the shipped " + name + " is in use again");
  } else {
    for (const auto& persona : listing) {
      printWarning("persona " + persona + " still lists " + name + "; `kaja persona remove " +
                   persona + " " + name + "` takes it out");
    }
  }
  if (context->secrets.has(name)) {
    printNote("its key stays in " + context->paths.secretsFile + "; `kaja key rm " + name +
              "` removes it");
  }
  return kExitOk;
}

}  // namespace kaja::cli
