#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/doctor_checks.h"
#include "cli/output.h"
#include "cli/prompt.h"
#include "core/auth/preflight.h"
#include "core/host/host.h"
#include "core/host/start_priority.h"
#include "core/mcp/types.h"
#include "core/process/temp_folder.h"
#include "personas/persona_resolver.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
namespace mcp = core::mcp;

/// The most warnings about one server doctor shows (a server may cause hundreds).
constexpr std::size_t kWarningsPerAbility = 10;
/// A persona that offers more tools than this gets a warning (S5).
constexpr size_t kManyTools = 40;
/// A doctor folder nobody holds and nobody touched for this long was left by a killed run.
constexpr std::chrono::seconds kStaleFolderAge{60};

struct DoctorRow {
  std::string name;
  std::string state;  ///< ok, failed, off, left-out, refused
  std::string transport;
  std::string runner;
  std::string runs;
  size_t tools = 0;    ///< what the server listed
  size_t offered = 0;  ///< after the ability's own allow-list
  size_t schemaChars = 0;
  long ms = -1;
  long cpuMs = -1;   ///< CPU the server used to connect
  int niceness = 0;  ///< started at lower CPU priority, so `ms` is longer than alone
  std::string error;
  std::string hint;
  std::string stderrTail;
  std::vector<std::string> offeredNames;
  bool needsKey = false;           ///< off for want of a key: doctor may offer to add one
  std::string access;              ///< a remote server that refused kaja: "oauth" or "key" (T5)
  std::vector<std::string> notes;  ///< the host's notes on its connect (ConnectReport::notes)
};

// Each persona's folders for `ability`, merged, so doctor checks the server with every
// folder some persona would give it.
std::vector<mcp::Root> rootsFromPersonas(const Context& context, const std::string& ability,
                                         std::vector<std::string>& missing) {
  std::set<std::string> seen;
  std::vector<mcp::Root> roots;
  for (const auto& record : context.catalog.personas()) {
    if (!record.persona) continue;
    for (const auto& entry : record.persona->abilities) {
      if (entry.ability != ability) continue;
      for (const auto& root : entry.roots) {
        auto folder = personas::resolveFolder(root.path, core::homeDir());
        if (!folder) {
          missing.push_back(root.path);
        } else if (seen.insert(*folder).second) {
          roots.push_back({mcp::fileUri(*folder), ""});
        }
      }
    }
  }
  return roots;
}

size_t schemaSize(const mcp::Tool& tool) {
  return tool.name.size() + tool.description.size() +
         tool.inputSchema.dump(-1, ' ', false, json::error_handler_t::replace).size();
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : ", ") + word;
  return out;
}

// Why the program of a user's own ability cannot start, with what to do: one sentence.
std::string missingProgram(const core::Ability& ability) {
  const std::string& program = *ability.command;
  const std::string fix = "\"command\" in " + tildePath(ability.manifestPath);
  if (program.find('/') == std::string::npos) {
    return "its program \"" + program + "\" is not on PATH; install it, or give its full path as " +
           fix + ".";
  }
  if (program.front() != '/') {
    return "its program " + program + " is not an absolute path; give the full path as " + fix +
           ".";
  }
  struct stat info {};
  if (::stat(program.c_str(), &info) != 0) {
    return "its program " + program + " does not exist; install it there or fix " + fix + ".";
  }
  return "its program " + program + " is not an executable file; make it one (chmod +x) or fix " +
         fix + ".";
}

// Decides, without connecting, what doctor does with one ability: a row that is already
// final (off, left-out, broken) or an activation to connect.
std::optional<core::Activation> plan(const marketplace::AbilityRecord& record,
                                     const Context& context, const core::RunnerContext& runners,
                                     const std::string& scratch, DoctorRow& row) {
  row.name = record.name;
  if (!record.ability) {
    row.state = "failed";
    row.error = record.error.describe();
    row.hint = "fix the manifest";
    return std::nullopt;
  }
  const core::Ability& ability = *record.ability;
  row.transport = core::toString(ability.transport);
  if (auto off = marketplace::offUntilEnabled(record)) {
    // Doctor starts none of it unasked either.
    row.state = "off";
    row.hint = *off;
    return std::nullopt;
  }
  core::Resolution resolution =
      core::resolveAbility(ability, runners, context.secrets.key(ability.name));
  if (resolution.runner) row.runner = core::toString(*resolution.runner);
  row.runs = marketplace::maskExpandedSecrets(record, resolution.runs());
  if (resolution.state == core::AbilityState::kLeftOut) {
    // The user wrote this command, so its absence is a mistake to fix; a shipped ability
    // that this machine cannot run is only left out.
    if (!record.shipped && ability.command) {
      row.state = "failed";
      row.error = missingProgram(ability);
      return std::nullopt;
    }
    row.state = "left-out";
    row.hint = resolution.reason;
    return std::nullopt;
  }
  if (resolution.state == core::AbilityState::kRefused) {
    // The operator's choice, not a fault: shown as its error, but doctor does not fail.
    row.state = "refused";
    row.error = resolution.reason;
    return std::nullopt;
  }
  if (resolution.state == core::AbilityState::kOff) {
    row.state = "off";
    row.needsKey = ability.needsKey();
    row.hint = resolution.reason;
    return std::nullopt;
  }
  if (ability.auth && ability.auth->keyless && !context.secrets.has(ability.name)) {
    row.hint = "works without a key; `kaja key set " + ability.name + "` adds one";
  }
  if (resolution.runner == core::RunnerKind::kSandbox) {
    row.hint = "runs in " + resolution.remote->via;
  } else if (runners.sandbox && !ability.isRemote()) {
    row.hint = "runs here, not in the sandbox: " + resolution.notInSandbox;
  }
  core::Activation activation{ability, std::move(resolution), {}};
  if (ability.roots) {
    std::vector<std::string> missing;
    activation.roots = rootsFromPersonas(context, ability.name, missing);
    if (activation.roots.empty()) {
      // Still check that the server works, on an empty folder of doctor's own, and say
      // that no persona can use it as things stand (K14).
      activation.roots.push_back({mcp::fileUri(scratch), ""});
      row.hint = (missing.empty() ? "no persona gives it folders, so it is off everywhere; add "
                                    "roots to its entry in a persona"
                                  : "off in every persona: the folders they give it do not "
                                    "exist: " +
                                        joined(missing)) +
                 " (checked with an empty folder)";
    } else if (!missing.empty()) {
      row.hint = "folders that do not exist are left out: " + joined(missing);
    }
  }
  return activation;
}

// A remote server that refused kaja with 401 or 403: asks it, without credentials, whether
// it wants an OAuth sign-in or a key (T5), and says which command fixes it.
void classifyRefusal(const core::Error& error, const core::Ability& ability,
                     std::chrono::milliseconds timeout, DoctorRow& row) {
  if (!ability.isRemote() || (error.httpStatus != 401 && error.httpStatus != 403)) return;
  auto url = core::net::parseUrl(ability.url.value_or(""));
  if (!url) return;
  auto probe = core::auth::preflight(*url, ability.transport == core::Transport::kSse,
                                     core::auth::fetchPolicyFor(*url), timeout);
  if (!probe) return;
  if (probe->access == core::auth::Access::kOAuth) {
    row.access = "oauth";
    row.hint = "it asks for an OAuth sign-in: run `kaja login " + ability.name + "`";
  } else if (probe->access == core::auth::Access::kKey) {
    row.access = "key";
    row.hint = "it wants a key or token: run `kaja key set " + ability.name + "`";
  } else {
    return;
  }
  // The connect error guessed; the preflight knows, so its advice replaces the guess.
  row.error =
      ability.name + " refused kaja (HTTP " + std::to_string(error.httpStatus) + "); " + row.hint;
}

void fillFromReport(const core::ConnectReport& report, const core::Ability& ability,
                    std::chrono::milliseconds timeout, DoctorRow& row) {
  row.ms = static_cast<long>(report.elapsed.count());
  row.cpuMs = static_cast<long>(report.cpu.count());
  row.stderrTail = report.stderrTail;
  row.notes = report.notes;
  if (report.error) {
    row.state = "failed";
    row.error = report.error->message;
    classifyRefusal(*report.error, ability, timeout, row);
    return;
  }
  row.state = "ok";
  row.tools = report.tools.size();
  for (const auto& tool : report.tools) {
    bool allowed = !ability.tools || std::find(ability.tools->begin(), ability.tools->end(),
                                               tool.name) != ability.tools->end();
    if (!allowed) continue;
    row.offeredNames.push_back(tool.name);
    row.schemaChars += schemaSize(tool);
  }
  row.offered = row.offeredNames.size();
}

// Warns about personas that offer more tools than a model handles well.
std::vector<std::string> personaWarnings(const Context& context,
                                         const std::vector<DoctorRow>& rows) {
  std::vector<std::string> warnings;
  for (const auto& record : context.catalog.personas()) {
    if (!record.persona) continue;
    size_t total = 0;
    for (const auto& entry : record.persona->abilities) {
      for (const auto& row : rows) {
        if (row.name != entry.ability) continue;
        total += entry.tools ? std::min(entry.tools->size(), row.offered) : row.offered;
      }
    }
    if (total > kManyTools) {
      warnings.push_back("persona \"" + record.name + "\" offers " + std::to_string(total) +
                         " tools; over " + std::to_string(kManyTools) +
                         " models choose worse and every request costs more. Narrow it with "
                         "tools = [...] in its entries.");
    }
  }
  return warnings;
}

void printTable(const std::vector<DoctorRow>& rows) {
  bool colourful = useColour(stdout);
  Table table({"NAME", "STATE", "TOOLS", "TIME", "SCHEMA", "NOTE"});
  for (const auto& row : rows) {
    std::string code = row.state == "ok" ? "32" : row.state == "failed" ? "31" : "33";
    bool connected = row.state == "ok";
    std::string tools = connected ? std::to_string(row.offered) : "-";
    if (connected && row.offered != row.tools) tools += "/" + std::to_string(row.tools);
    std::string note = !row.error.empty() ? row.error : row.hint;
    std::string time = row.ms >= 0 ? std::to_string(row.ms) + " ms" : "-";
    if (row.ms >= 0 && row.niceness > 0) time += "*";
    table.addRow({oneLine(row.name), colour(row.state, code, colourful), tools, time,
                  connected ? "~" + std::to_string(row.schemaChars / 4) + " tok" : "-",
                  oneLine(note)});
  }
  std::fputs(table.render(100, colourful).c_str(), stdout);
  if (std::any_of(rows.begin(), rows.end(),
                  [](const DoctorRow& row) { return row.niceness > 0; })) {
    std::printf(
        "* quick last time, so started at lower CPU priority while the slowest got the "
        "cores first.\n");
  }
  if (options().verbose) {
    for (const auto& row : rows) {
      if (row.state != "failed" || row.stderrTail.empty()) continue;
      std::printf("\n%s stderr (last lines):\n%s\n", oneLine(row.name).c_str(),
                  safeText(row.stderrTail).c_str());
    }
  }
}

json toJson(const std::vector<DoctorRow>& rows, const std::vector<std::string>& warnings, bool ok) {
  json abilities = json::array();
  for (const auto& row : rows) {
    auto orNull = [](const std::string& text) { return text.empty() ? json() : json(text); };
    json item = {{"name", row.name},
                 {"state", row.state},
                 {"transport", orNull(row.transport)},
                 {"runner", orNull(row.runner)},
                 {"runs", orNull(row.runs)},
                 {"tools", row.state == "ok" ? json(row.tools) : json()},
                 {"offered", row.state == "ok" ? json(row.offeredNames) : json()},
                 {"schemaChars", row.schemaChars},
                 {"schemaTokens", row.schemaChars / 4},
                 {"ms", row.ms >= 0 ? json(row.ms) : json()},
                 {"cpuMs", row.cpuMs >= 0 ? json(row.cpuMs) : json()},
                 {"lowPriority", row.niceness > 0},
                 {"error", orNull(row.error)},
                 {"hint", orNull(row.hint)},
                 {"access", orNull(row.access)}};
    if (options().verbose) item["stderr"] = row.stderrTail;
    abilities.push_back(std::move(item));
  }
  return {{"ok", ok}, {"abilities", abilities}, {"warnings", warnings}};
}

// On a terminal, offers to add each missing key, masked, right away.
void offerKeys(Context& context, const std::vector<DoctorRow>& rows) {
  for (const auto& row : rows) {
    if (!row.needsKey) continue;
    if (!askYesNo(oneLine(row.name) + " is off until it has an API key. Add one now?")) continue;
    std::string key = readKey("API key for " + row.name + ": ");
    if (auto ok = core::Secrets::checkKey(key); !ok) {
      printError(ok.error());
      continue;
    }
    const core::Ability* ability = context.catalog.findAbility(row.name);
    const auto store = [&](core::Secrets& secrets) {
      if (ability != nullptr) {
        secrets.setFor(*ability, key);
      } else {
        secrets.set(row.name, key);
      }
    };
    // Into the file under its lock (another kaja may have refreshed a token), and here.
    auto saved = core::Secrets::update(context.paths.secretsFile, store);
    store(context.secrets);
    if (!saved) {
      printError(saved.error());
      return;
    }
    std::fprintf(stderr, "kaja: saved; run kaja doctor again to check %s.\n",
                 oneLine(row.name).c_str());
  }
}

bool personasOk(const std::vector<PersonaProblem>& problems) {
  return std::none_of(problems.begin(), problems.end(), [](const PersonaProblem& problem) {
    return problem.fails && !problem.created;
  });
}

// Prints what doctor found (and, on a terminal, offers to fix what it can) and returns the
// exit status.
int report(Context& context, std::vector<DoctorRow>& rows, const std::vector<std::string>& only,
           bool asJson) {
  for (auto& row : rows) {
    row.error = asSentence(row.error);
    row.hint = asSentence(row.hint);
  }
  const bool abilitiesOk = std::none_of(rows.begin(), rows.end(),
                                        [](const DoctorRow& row) { return row.state == "failed"; });
  std::vector<PersonaProblem> problems = checkPersonas(context, only);
  std::vector<std::string> warnings = personaWarnings(context, rows);
  for (const auto& row : rows) warnings.insert(warnings.end(), row.notes.begin(), row.notes.end());
  if (asJson) {
    const bool ok = abilitiesOk && personasOk(problems);
    json out = toJson(rows, warnings, ok);
    out["personas"] = personasJson(problems);
    std::printf("%s\n", jsonText(out).c_str());
    return ok ? kExitOk : kExitFailed;
  }
  printTable(rows);
  for (const auto& warning : warnings) printWarning(warning);
  printPersonaSection(problems, only.empty() ? context.catalog.personas().size() : 0);
  const bool prompt = canPrompt();
  if (prompt) offerFolders(problems);
  const bool ok = abilitiesOk && personasOk(problems);
  size_t connected = std::count_if(rows.begin(), rows.end(),
                                   [](const DoctorRow& row) { return row.state == "ok"; });
  const char* verdict = ok            ? "; every ability that is on works."
                        : abilitiesOk ? "; fix the persona problems above."
                        : personasOk(problems)
                            ? "; see the failed rows above."
                            : "; see the failed rows and persona problems above.";
  std::printf("\n%zu of %zu abilities connected%s\n", connected, rows.size(), verdict);
  if (prompt) offerKeys(context, rows);
  return ok ? kExitOk : kExitFailed;
}

}  // namespace

int runDoctor(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--json"}, {"--timeout"});
  if (!parsed) return reportError(parsed.error());
  core::HostOptions hostOptions;
  // Doctor only checks servers; it need not wait long for them to wind down.
  hostOptions.closeGrace = std::chrono::milliseconds(300);
  // Listing a roots server's tools does not need its folders applied.
  hostOptions.waitForRoots = false;
  // What each server costs to start decides the priorities of the next run.
  hostOptions.measureStartCpu = true;
  if (auto timeout = parsed->value("--timeout")) {
    char* end = nullptr;
    double seconds = std::strtod(timeout->c_str(), &end);
    if (end == timeout->c_str() || *end != '\0' || !(seconds > 0 && seconds <= 600)) {
      printError("--timeout takes a number of seconds between 0 and 600, not \"" + *timeout + "\"");
      return kExitUsage;
    }
    hostOptions.connectTimeout = std::chrono::milliseconds(static_cast<long>(seconds * 1000));
  }
  auto context = Context::load();
  if (!context) return reportError(context.error());
  for (const auto& name : parsed->positional) {
    if (context->catalog.findAbilityRecord(name) == nullptr) {
      printError("there is no ability named \"" + name + "\"; `kaja abilities` lists them");
      return kExitUsage;
    }
  }
  bool asJson = parsed->has("--json");
  auto found = context->runners();
  if (!found) return reportError(found.error());
  const core::RunnerContext& runners = *found;

  // Roots servers get an empty folder of their own; it goes, with whatever a server put in
  // it, on every way out (a signal too).
  // A doctor killed outright (SIGKILL, a crash) could not remove its folder; this run does.
  core::removeStaleTempFolders("kaja-doctor-", kStaleFolderAge);
  auto scratchFolder = core::TempFolder::create("kaja-doctor-");
  const std::string scratch =
      scratchFolder ? (*scratchFolder)->path() : std::string("/nonexistent-kaja-doctor-folder");

  std::vector<DoctorRow> rows;
  std::vector<core::Activation> activations;
  std::vector<size_t> rowOf;
  for (const auto& record : context->catalog.abilities()) {
    const auto& only = parsed->positional;
    if (!only.empty() && std::find(only.begin(), only.end(), record.name) == only.end()) continue;
    DoctorRow row;
    if (auto activation = plan(record, *context, runners, scratch, row)) {
      rowOf.push_back(rows.size());
      activations.push_back(std::move(*activation));
    }
    rows.push_back(std::move(row));
  }

  // Servers that were cheap to start last time start at lower CPU priority, so the
  // costliest, which decides when doctor is done, gets the cores first.
  std::string costsFile = context->paths.dataDir + "/connect-costs.json";
  auto costs = core::ConnectCosts::load(costsFile);
  std::vector<std::string> spawned;
  std::vector<std::pair<core::LaunchPlan*, DoctorRow*>> started;
  for (size_t i = 0; i < activations.size(); ++i) {
    auto& launch = activations[i].resolution.launch;
    if (!launch) continue;
    spawned.push_back(activations[i].ability.name);
    started.emplace_back(&*launch, &rows[rowOf[i]]);
  }
  auto niceness = costs.niceness(spawned);
  for (size_t k = 0; k < started.size(); ++k) {
    started[k].first->niceness = niceness[k];
    started[k].second->niceness = niceness[k];
  }

  // Progress goes to stderr on a terminal only, on one line that updates in place.
  bool progress = !asJson && ::isatty(STDERR_FILENO) != 0;
  std::mutex mutex;
  size_t done = 0;
  hostOptions.events.connected = [&](const core::ConnectReport& report) {
    std::lock_guard lock(mutex);
    ++done;
    if (progress) {
      std::fprintf(stderr, "\r\033[Kconnecting %zu/%zu: %s %s", done, activations.size(),
                   oneLine(report.ability).c_str(), report.ok ? "ok" : "failed");
    }
  };
  // What a server did that kaja worked around (a tool left out, a line on stdout that is not
  // JSON-RPC) is for doctor to tell, under the ability it concerns.
  std::map<std::string, std::vector<std::string>> serverWarnings;
  hostOptions.events.warning = [&](const std::string& text) {
    std::lock_guard lock(mutex);
    const auto colon = text.find(": ");
    auto& said = serverWarnings[colon == std::string::npos ? std::string() : text.substr(0, colon)];
    if (said.size() < kWarningsPerAbility) said.push_back(text);
  };
  if (progress && !activations.empty()) {
    std::fprintf(stderr, "connecting %zu abilities…", activations.size());
  }
  core::Host host(hostOptions);
  auto reports = host.activate(activations);
  host.closeAll();
  if (progress && !activations.empty()) std::fprintf(stderr, "\r\033[K");
  for (size_t i = 0; i < reports.size(); ++i) {
    DoctorRow& row = rows[rowOf[i]];
    // The question "OAuth or a key?" gets the same time as a connect.
    fillFromReport(reports[i], activations[i].ability, hostOptions.connectTimeout, row);
    if (reports[i].ok) costs.record(row.name, reports[i].cpu);
    std::lock_guard lock(mutex);
    const auto& said = serverWarnings[row.name];
    row.notes.insert(row.notes.end(), said.begin(), said.end());
  }
  if (auto saved = costs.save(costsFile); !saved && options().verbose) {
    printWarning("could not keep what each server cost to start: " + saved.error().message);
  }

  return report(*context, rows, parsed->positional, asJson);
}

}  // namespace kaja::cli
