#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kaja::cli {

/// Exit codes, the same for every subcommand (listed by `kaja --help`).
enum ExitCode : int {
  kExitOk = 0,       ///< done
  kExitFailed = 1,   ///< the work ran and failed (isError, an HTTP 500 on the call, a failed check)
  kExitUsage = 2,    ///< bad usage or configuration
  kExitRefused = 3,  ///< refused by a rule, or approval declined
  kExitConnect = 4,  ///< could not connect to a server (or a proxy said it is not reachable)
};

/// One subcommand. `run` gets the arguments after the subcommand's name.
struct Command {
  std::string_view name;
  std::string_view synopsis;  ///< e.g. "abilities [--json]"
  std::string_view summary;   ///< one line for `kaja --help`
  std::string_view help;      ///< the full text for `kaja NAME --help`
  int (*run)(std::span<const std::string> args);
};

/// Returns every subcommand, in the order `kaja --help` lists them.
std::span<const Command> commands();

int runAbilities(std::span<const std::string> args);
int runDoctor(std::span<const std::string> args);
int runPersonas(std::span<const std::string> args);
int runTools(std::span<const std::string> args);
int runCall(std::span<const std::string> args);
/// `backups [PATH]` and `backups restore PATH [STAMP]`: the copies kept before calls.
int runBackups(std::span<const std::string> args);
/// `audit [--since D] [--ability A] [--limit N | --all] [--json]`: the audit log.
int runAudit(std::span<const std::string> args);
int runPersona(std::span<const std::string> args);
int runConfig(std::span<const std::string> args);
int runKey(std::span<const std::string> args);
/// `login NAME [--no-browser] [--port N]` and `login --status [--json]`: OAuth sign-in.
int runLogin(std::span<const std::string> args);
/// `logout NAME`: forgets an ability's sign-in tokens.
int runLogout(std::span<const std::string> args);
int runServe(std::span<const std::string> args);
int runSandbox(std::span<const std::string> args);
int runDocker(std::span<const std::string> args);
int runHelp(std::span<const std::string> args);
int runCompletion(std::span<const std::string> args);
int runExport(std::span<const std::string> args);
/// `kaja __complete WORD…`: prints the completions of the last word, one per line.
int runComplete(std::span<const std::string> args);
int runAdd(std::span<const std::string> args);
int runAddJson(std::span<const std::string> args);
int runImport(std::span<const std::string> args);
/// `marketplace add|sync|list|rollback|rm`: synced marketplaces.
int runMarketplace(std::span<const std::string> args);
/// `install NAME`: a known server shown, connected once, then added to the active persona.
int runInstall(std::span<const std::string> args);
/// `find WORD [--json]`: servers in the official MCP registry, or npm's search, unverified.
int runFind(std::span<const std::string> args);
int runGet(std::span<const std::string> args);
int runRemove(std::span<const std::string> args);
/// `persona new|add|remove|folder …`, which runPersona hands on.
int runPersonaEdit(std::span<const std::string> args);
int runEnable(std::span<const std::string> args);
int runDisable(std::span<const std::string> args);

}  // namespace kaja::cli
