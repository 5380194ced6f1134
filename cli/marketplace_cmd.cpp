// `kaja marketplace add|sync|list|rollback|rm`: marketplaces a team shares as pinned or
// signed archives, synced into layers between the shipped abilities and the user's own.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/output.h"
#include "core/paths.h"
#include "core/util/quote.h"
#include "core/util/sys.h"
#include "marketplace/sync/fetch.h"
#include "marketplace/sync/store.h"
#include "marketplace/sync/sync.h"
#include "marketplace/sync/verify.h"
#include "personas/persona_resolver.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
namespace msync = marketplace::sync;

constexpr std::size_t kMaxKeyFileBytes = std::size_t{16} << 10;

json generationJson(const std::optional<msync::Generation>& generation) {
  if (!generation) return nullptr;
  return {{"sha256", generation->sha256},
          {"syncedAt", generation->syncedAt},
          {"abilities", generation->abilities},
          {"personas", generation->personas}};
}

std::string pinText(const msync::MarketplaceEntry& entry) {
  std::string out;
  if (entry.sha256) out = "sha256:" + entry.sha256->substr(0, 12) + "…";
  if (entry.publicKey) out += std::string(out.empty() ? "" : ", ") + "ed25519-signed";
  return out;
}

// Says that no marketplace is named `name`; returns the exit code for it.
int unknownMarketplace(const std::string& name) {
  printError("there is no marketplace named " + core::quoteForMessage(name) +
             "; `kaja marketplace list` shows them");
  return kExitUsage;
}

// Tells a person at a terminal which step a slow sync is at; scripts see only the result.
std::function<void(std::string_view)> progressFor(const msync::MarketplaceEntry& entry) {
  if (::isatty(STDERR_FILENO) == 0) return {};
  return [name = entry.name, source = entry.source](std::string_view step) {
    if (step == "fetch") {
      printNote(name + ": fetching " + oneLine(source));
    } else if (step == "unpack") {
      printNote(name + ": unpacking and checking every manifest");
    }
  };
}

// Returns the key given to --public-key: its text, or that of the file it names.
core::Result<msync::PublicKey> readPublicKey(const std::string& given) {
  std::error_code ec;
  std::string path = core::expandHome(given, core::homeDir());
  if (fs::is_regular_file(path, ec)) {
    auto text = core::readRegularFile(path, kMaxKeyFileBytes, core::quoteForMessage(path));
    if (!text) return std::unexpected(text.error());
    return msync::parsePublicKey(*text);
  }
  return msync::parsePublicKey(given);
}

// What the active persona is, in the words a warning shows: where it comes from and the
// folders it grants. Compared before and after a sync or a rollback, which may replace it.
struct PersonaView {
  std::string name;
  /// "the shipped marketplace", "marketplace team", "your own personas", or "" when no
  /// layer has it
  std::string from;
  std::string folders;   ///< "~/src (read-write), ~/docs (read-only)", or "none"
  std::string replaces;  ///< the layer whose persona of that name it takes the place of
  bool operator==(const PersonaView&) const = default;
};

// Reads the persona through the layers `list` makes, as it is in memory: the caller has
// it loaded already, before and after the change.
PersonaView activePersonaView(const core::Paths& paths, const msync::MarketplaceList& list) {
  PersonaView view;
  view.name = personas::activePersona(paths.configDir);
  auto record = marketplace::Catalog::loadOnePersona(msync::catalogLayers(paths, list), view.name);
  if (!record) return view;
  switch (record->layer) {
    case marketplace::LayerKind::kShipped:
      view.from = "the shipped marketplace";
      break;
    case marketplace::LayerKind::kUser:
      view.from = "your own personas";
      break;
    default:
      view.from = marketplace::describeLayer(record->layer, record->marketplace);
  }
  view.replaces = record->replaces;
  std::vector<std::string> folders;
  if (record->persona) {
    for (const auto& entry : record->persona->abilities) {
      for (const auto& root : entry.roots) {
        std::string text = root.path + (root.readOnly ? " (read-only)" : " (read-write)");
        if (std::find(folders.begin(), folders.end(), text) == folders.end()) {
          folders.push_back(std::move(text));
        }
      }
    }
  }
  view.folders = folders.empty() ? "none" : "";
  for (const auto& folder : folders) view.folders += (view.folders.empty() ? "" : ", ") + folder;
  return view;
}

// Warns when the step just taken changed the active persona: which folders its servers may
// now use is the one thing a marketplace changes that a person must not miss.
void warnIfActivePersonaChanged(const PersonaView& before, const PersonaView& after) {
  if (after.from.empty() || (before.from == after.from && before.folders == after.folders)) return;
  std::string what = "the active persona " + core::quoteForMessage(after.name);
  if (before.from == after.from) {
    what += " from " + after.from + " changed";
  } else {
    what += " now comes from " + after.from;
    if (!after.replaces.empty()) what += ", in place of the " + after.replaces + " one";
  }
  printWarning(what + "; its folders: " + oneLine(after.folders) +
               " (were: " + (before.from.empty() ? "none" : oneLine(before.folders)) +
               "); `kaja personas` shows it, `kaja persona use NAME` picks another");
}

// Moves a marketplace's pin in the saved list, before the copy it names goes live (so a
// step stopped after the save is finished by the next one); undo() puts the old pin back
// when the switch then fails.
class PinMove {
 public:
  PinMove(msync::MarketplaceList& list, msync::MarketplaceEntry& entry)
      : list_(list), entry_(entry), old_(entry.sha256) {}

  core::Result<void> to(const std::string& pin) {
    if (entry_.sha256 == pin) return {};
    entry_.sha256 = pin;
    if (auto saved = msync::saveMarketplaceList(list_); !saved) {
      entry_.sha256 = old_;
      return saved;
    }
    moved_ = true;
    return {};
  }

  void undo() {
    if (!std::exchange(moved_, false)) return;
    entry_.sha256 = old_;
    (void)msync::saveMarketplaceList(list_);
  }

  [[nodiscard]] bool moved() const { return moved_; }

 private:
  msync::MarketplaceList& list_;
  msync::MarketplaceEntry& entry_;
  std::optional<std::string> old_;
  bool moved_ = false;
};

void printSynced(const msync::MarketplaceEntry& entry, const msync::SyncReport& report,
                 bool asJson) {
  for (const auto& name : report.droppedKeys) {
    printWarning("the new copy of " + entry.name + " moves " + name +
                 " to another url, so its stored key was removed; `kaja key set " + name +
                 "` stores one for the new server");
  }
  if (asJson) {
    std::printf("%s\n", jsonText({{"name", entry.name},
                                  {"changed", !report.unchanged},
                                  {"live", generationJson(report.live)}})
                            .c_str());
    return;
  }
  if (report.unchanged) {
    printNote(entry.name + " is up to date (sha256 " + report.live.sha256.substr(0, 12) +
              "…); nothing changed");
    return;
  }
  printNote("synced " + entry.name + ": " + counted(report.live.abilities, "ability") + " and " +
            counted(report.live.personas, "persona") + " (sha256 " +
            report.live.sha256.substr(0, 12) + "…); `kaja abilities` lists them");
}

int add(const core::Paths& paths, const ParsedArgs& parsed) {
  if (parsed.positional.size() != 3) {
    printError("kaja marketplace add takes NAME and SOURCE (an https URL or an archive's path)");
    return kExitUsage;
  }
  auto lock = msync::ListLock::take(paths);
  if (!lock) return reportError(lock.error());
  auto list = msync::loadMarketplaceList(paths);
  if (!list) return reportError(list.error());
  msync::MarketplaceEntry entry;
  entry.name = parsed.positional[1];
  if (!msync::isValidMarketplaceName(entry.name)) {
    printError(core::quoteForMessage(entry.name) +
               " cannot name a marketplace; use 1 to 64 letters, digits, '-' or '_' (not "
               "shipped, user, workspace or kaja)");
    return kExitUsage;
  }
  if (list->find(entry.name) != nullptr) {
    printError("a marketplace named " + entry.name + " exists already; `kaja marketplace sync " +
               entry.name + "` updates it, or `kaja marketplace rm " + entry.name +
               "` removes it first");
    return kExitUsage;
  }
  std::error_code ec;
  auto source =
      msync::normaliseSource(parsed.positional[2], core::homeDir(), fs::current_path(ec).string());
  if (!source) return reportError(source.error());
  entry.source = *source;
  if (auto pin = parsed.value("--sha256")) {
    auto parsedPin = msync::parseSha256(*pin);
    if (!parsedPin) return reportError(parsedPin.error());
    entry.sha256 = *parsedPin;
  }
  if (auto key = parsed.value("--public-key")) {
    auto parsedKey = readPublicKey(*key);
    if (!parsedKey) return reportError(parsedKey.error());
    entry.publicKey = msync::publicKeyText(*parsedKey);
  }
  if (auto signature = parsed.value("--signature")) {
    if (!entry.publicKey) {
      printError("--signature names where the signature is, so it needs --public-key too");
      return kExitUsage;
    }
    auto where = msync::normaliseSource(*signature, core::homeDir(), fs::current_path(ec).string());
    if (!where) return reportError(where.error());
    entry.signature = *where;
  }
  if (!entry.sha256 && !entry.publicKey) {
    // Say what the archive's hash is, so the person can compare it with what its publisher
    // announced; kaja never takes it on trust by itself.
    auto bytes = msync::fetchSource(entry.source);
    std::string found = bytes ? "; the archive there now has SHA-256 " + msync::sha256Hex(*bytes) +
                                    ", which you may pin once its publisher confirms it"
                              : "";
    printError("kaja syncs no marketplace unpinned: give --sha256 HEX or --public-key KEY" + found);
    return kExitUsage;
  }
  const PersonaView personaBefore = activePersonaView(paths, *list);
  msync::SyncOptions options;
  options.onStep = progressFor(entry);
  auto report = msync::syncMarketplace(paths, entry, options);
  if (!report) {
    // Nothing is kept of a marketplace that never synced.
    (void)msync::removeMarketplaceData(paths, entry.name);
    core::Error error = report.error();
    const std::string kept = "; the marketplace is as it was.";
    if (error.message.ends_with(kept)) {
      error.message.replace(error.message.size() - kept.size(), kept.size(),
                            "; nothing was added.");
    }
    return reportError(error);
  }
  list->entries.push_back(entry);
  if (auto saved = msync::saveMarketplaceList(*list); !saved) {
    (void)msync::removeMarketplaceData(paths, entry.name);
    return reportError(saved.error());
  }
  printSynced(entry, *report, parsed.has("--json"));
  warnIfActivePersonaChanged(personaBefore, activePersonaView(paths, *list));
  return kExitOk;
}

int syncAll(const core::Paths& paths, const ParsedArgs& parsed) {
  if (parsed.positional.size() > 2) {
    printError("kaja marketplace sync takes at most one NAME");
    return kExitUsage;
  }
  auto lock = msync::ListLock::take(paths);
  if (!lock) return reportError(lock.error());
  auto list = msync::loadMarketplaceList(paths);
  if (!list) return reportError(list.error());
  std::vector<msync::MarketplaceEntry*> chosen;
  if (parsed.positional.size() == 2) {
    msync::MarketplaceEntry* entry = list->find(parsed.positional[1]);
    if (entry == nullptr) return unknownMarketplace(parsed.positional[1]);
    chosen.push_back(entry);
  } else {
    if (parsed.value("--sha256")) {
      printError("--sha256 pins one archive, so name the marketplace it is for");
      return kExitUsage;
    }
    for (auto& entry : list->entries) chosen.push_back(&entry);
    if (chosen.empty()) {
      printNote(
          "no marketplace is added yet; `kaja marketplace add NAME SOURCE --sha256 HEX` "
          "adds one");
      return kExitOk;
    }
  }
  msync::SyncOptions options;
  if (auto pin = parsed.value("--sha256")) {
    auto parsedPin = msync::parseSha256(*pin);
    if (!parsedPin) return reportError(parsedPin.error());
    options.sha256 = *parsedPin;
  }
  const PersonaView personaBefore = activePersonaView(paths, *list);
  int exit = kExitOk;
  json results = json::array();
  for (msync::MarketplaceEntry* entry : chosen) {
    options.onStep = progressFor(*entry);
    // The new pin is saved before the new copy goes live, never after: a sync killed
    // between the two leaves a pin the next sync honours, not a stale one it refuses.
    PinMove pin(*list, *entry);
    options.beforeSwitch = [&]() -> core::Result<void> {
      return options.sha256 ? pin.to(*options.sha256) : core::Result<void>();
    };
    auto report = msync::syncMarketplace(paths, *entry, options);
    // The switch itself failed: the old copy is live, so the old pin goes back too.
    if (!report) pin.undo();
    if (!report) {
      if (parsed.has("--json")) {
        results.push_back({{"name", entry->name}, {"error", report.error().message}});
      } else {
        printError(report.error());
      }
      exit = exit == kExitOk ? exitCodeFor(report.error()) : exit;
      continue;
    }
    if (pin.moved() && !parsed.has("--json")) {
      printNote(entry->name + " is pinned to the new SHA-256 now");
    }
    if (parsed.has("--json")) {
      results.push_back({{"name", entry->name},
                         {"changed", !report->unchanged},
                         {"live", generationJson(report->live)},
                         {"droppedKeys", report->droppedKeys}});
    } else {
      printSynced(*entry, *report, false);
    }
  }
  if (parsed.has("--json")) std::printf("%s\n", jsonText(results).c_str());
  warnIfActivePersonaChanged(personaBefore, activePersonaView(paths, *list));
  return exit;
}

int listAll(const core::Paths& paths, const ParsedArgs& parsed) {
  auto list = msync::loadMarketplaceList(paths);
  if (!list) return reportError(list.error());
  if (parsed.has("--json")) {
    json out = json::array();
    for (const auto& entry : list->entries) {
      msync::MarketplaceState state = msync::marketplaceState(paths, entry.name);
      out.push_back({{"name", entry.name},
                     {"source", entry.source},
                     {"sha256", entry.sha256 ? json(*entry.sha256) : json()},
                     {"signed", entry.publicKey.has_value()},
                     {"live", generationJson(state.live)},
                     {"previous", generationJson(state.previous)}});
    }
    std::printf("%s\n", jsonText(out).c_str());
    return kExitOk;
  }
  if (list->entries.empty()) {
    printNote(
        "no marketplace is added yet; `kaja marketplace add NAME SOURCE --sha256 HEX` "
        "adds one");
    return kExitOk;
  }
  Table table({"NAME", "ABILITIES", "PERSONAS", "SYNCED", "PIN", "SOURCE"});
  for (const auto& entry : list->entries) {
    msync::MarketplaceState state = msync::marketplaceState(paths, entry.name);
    table.addRow({entry.name, state.live ? std::to_string(state.live->abilities) : "-",
                  state.live ? std::to_string(state.live->personas) : "-",
                  state.live ? state.live->syncedAt : "never", pinText(entry),
                  oneLine(entry.source)});
  }
  std::fputs(table.render(terminalWidth(), useColour(stdout)).c_str(), stdout);
  return kExitOk;
}

int rollback(const core::Paths& paths, const ParsedArgs& parsed) {
  if (parsed.positional.size() != 2) {
    printError("kaja marketplace rollback takes the NAME of one marketplace");
    return kExitUsage;
  }
  auto lock = msync::ListLock::take(paths);
  if (!lock) return reportError(lock.error());
  auto list = msync::loadMarketplaceList(paths);
  if (!list) return reportError(list.error());
  const std::string& name = parsed.positional[1];
  msync::MarketplaceEntry* entry = list->find(name);
  if (entry == nullptr) return unknownMarketplace(name);
  // A pinned marketplace's pin follows the copy that goes live, saved first, so the next
  // sync keeps the older copy instead of quietly undoing the rollback.
  PinMove pin(*list, *entry);
  auto movePin = [&](const msync::Generation& next) -> core::Result<void> {
    return entry->sha256 ? pin.to(next.sha256) : core::Result<void>();
  };
  const PersonaView personaBefore = activePersonaView(paths, *list);
  auto state = msync::rollbackMarketplace(paths, name, movePin);
  if (!state) {
    pin.undo();
    return reportError(state.error());
  }
  warnIfActivePersonaChanged(personaBefore, activePersonaView(paths, *list));
  if (parsed.has("--json")) {
    std::printf("%s\n", jsonText({{"name", name},
                                  {"live", generationJson(state->live)},
                                  {"previous", generationJson(state->previous)}})
                            .c_str());
    return kExitOk;
  }
  // gen-N numbers grow with each sync, so they say which of the two copies is the newer.
  auto number = [](const std::optional<msync::Generation>& generation) {
    return generation ? std::strtol(generation->folder.c_str() + 4, nullptr, 10) : 0L;
  };
  const bool forward = number(state->live) > number(state->previous);
  printNote(name +
            (forward ? " is at the newer copy again, synced " : " is back at the copy synced ") +
            state->live->syncedAt + " (sha256 " + state->live->sha256.substr(0, 12) +
            "…); another rollback returns to the " + (forward ? "older" : "newer") + " one");
  if (pin.moved()) {
    printNote(name + " is pinned to that copy's SHA-256 now, so `kaja marketplace sync` keeps " +
              "it until you sync with --sha256 NEW");
  } else if (!entry->sha256) {
    printNote(name + " is signed, not pinned: the next `kaja marketplace sync` takes the " +
              "newest signed archive again");
  }
  return kExitOk;
}

int removeOne(const core::Paths& paths, const ParsedArgs& parsed) {
  if (parsed.positional.size() != 2) {
    printError("kaja marketplace rm takes the NAME of one marketplace");
    return kExitUsage;
  }
  auto lock = msync::ListLock::take(paths);
  if (!lock) return reportError(lock.error());
  auto list = msync::loadMarketplaceList(paths);
  if (!list) return reportError(list.error());
  const std::string& name = parsed.positional[1];
  const msync::MarketplaceEntry* entry = list->find(name);
  if (entry == nullptr) return unknownMarketplace(name);
  const PersonaView personaBefore = activePersonaView(paths, *list);
  list->entries.erase(list->entries.begin() + (entry - list->entries.data()));
  // The list first: a marketplace it no longer names is never read, whatever is left.
  if (auto saved = msync::saveMarketplaceList(*list); !saved) return reportError(saved.error());
  if (auto removed = msync::removeMarketplaceData(paths, name); !removed) {
    printWarning(removed.error().message);
  }
  printNote("removed marketplace " + name + " and its synced copies");
  warnIfActivePersonaChanged(personaBefore, activePersonaView(paths, *list));
  return kExitOk;
}

}  // namespace

int runMarketplace(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--json"}, {"--sha256", "--public-key", "--signature"});
  if (!parsed) return reportError(parsed.error());
  if (parsed->positional.empty()) {
    printError(
        "kaja marketplace needs add, sync, list, rollback or rm; `kaja marketplace "
        "--help` says more");
    return kExitUsage;
  }
  auto paths = core::Paths::fromEnvironment();
  if (!paths) return reportError(paths.error());
  const std::string& verb = parsed->positional[0];
  bool pinning = parsed->value("--sha256").has_value();
  bool signing = parsed->value("--public-key") || parsed->value("--signature");
  if (signing && verb != "add") {
    printError("--public-key and --signature are given to kaja marketplace add");
    return kExitUsage;
  }
  if (pinning && verb != "add" && verb != "sync") {
    printError("--sha256 is given to kaja marketplace add or sync");
    return kExitUsage;
  }
  if (verb == "add") return add(*paths, *parsed);
  if (verb == "sync") return syncAll(*paths, *parsed);
  if (verb == "list") return listAll(*paths, *parsed);
  if (verb == "rollback") return rollback(*paths, *parsed);
  if (verb == "rm" || verb == "remove") return removeOne(*paths, *parsed);
  printError("kaja marketplace has no " + core::quoteForMessage(verb) +
             "; it takes add, sync, list, rollback or rm");
  return kExitUsage;
}

}  // namespace kaja::cli
