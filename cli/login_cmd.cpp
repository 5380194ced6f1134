// kaja login NAME | kaja login --status | kaja logout NAME: OAuth sign-in to remote
// abilities (T5, T9). The flow itself is core/auth; this file finds the ability, shows the
// person the URL (and opens a browser when one is there), and keeps the tokens.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "core/auth/ability_auth.h"
#include "core/auth/oauth_flow.h"
#include "core/auth/preflight.h"
#include "core/manifest/ability_loader.h"
#include "core/runner/executable_finder.h"

extern char** environ;  // NOLINT(readability-identifier-naming): POSIX names it

namespace kaja::cli {
namespace {

// A browser started for the sign-in: $BROWSER (its first entry), else xdg-open where a
// display is. Only the launcher is kaja's child, reaped when the sign-in ends; the browser
// it hands the URL to is the person's own and is left running.
class BrowserLaunch {
 public:
  BrowserLaunch() = default;
  BrowserLaunch(const BrowserLaunch&) = delete;
  BrowserLaunch& operator=(const BrowserLaunch&) = delete;
  ~BrowserLaunch() { reap(); }

  // Returns the program that would open URLs here, or "" when there is none.
  static std::string program() {
    if (const char* browser = std::getenv("BROWSER"); browser != nullptr && *browser != '\0') {
      std::string first(browser);
      return first.substr(0, first.find(':'));
    }
    const bool display =
        std::getenv("DISPLAY") != nullptr || std::getenv("WAYLAND_DISPLAY") != nullptr;
    if (!display) return "";
    const char* path = std::getenv("PATH");
    return core::ExecutableFinder(path != nullptr ? path : "").find("xdg-open").value_or("");
  }

  // Starts `program` with `url`; false when it cannot start.
  bool start(const std::string& program, const std::string& url) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    // The browser's chatter must not mix with kaja's output or read the person's input.
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    std::string file = program;
    std::string arg = url;
    char* argv[] = {file.data(), arg.data(), nullptr};
    const int failed = posix_spawnp(&pid_, file.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (failed != 0) pid_ = -1;
    return failed == 0;
  }

 private:
  // Waits a little for the launcher (xdg-open hands over and exits), then ends it.
  void reap() {
    if (pid_ <= 0) return;
    for (int i = 0; i < 50; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }

  pid_t pid_ = -1;
};

const core::Ability* remoteAbility(const Context& context, const std::string& name, int& exit) {
  const marketplace::AbilityRecord* record = context.catalog.findAbilityRecord(name);
  if (record == nullptr) {
    printError("there is no ability named \"" + name + "\"; `kaja abilities` lists them");
    exit = kExitUsage;
    return nullptr;
  }
  if (!record->ability) {
    printError("ability " + name + "'s manifest does not load; `kaja doctor` says why");
    exit = kExitUsage;
    return nullptr;
  }
  if (!record->ability->isRemote()) {
    printError(name +
               " is a stdio server: kaja starts it here, so there is nothing to sign in "
               "to (a key goes in with `kaja key set " +
               name + "`)");
    exit = kExitUsage;
    return nullptr;
  }
  return &*record->ability;
}

std::string describeExpiry(std::int64_t expiresAt) {
  if (expiresAt == 0) return "no expiry given";
  const std::int64_t left = expiresAt - static_cast<std::int64_t>(std::time(nullptr));
  if (left <= 0) return "expired";
  if (left < 120) return "expires in " + std::to_string(left) + " s";
  if (left < 7200) return "expires in " + std::to_string(left / 60) + " min";
  return "expires in " + std::to_string(left / 3600) + " h";
}

int login(Context& context, const std::string& name, const ParsedArgs& args) {
  int exit = kExitOk;
  const core::Ability* ability = remoteAbility(context, name, exit);
  if (ability == nullptr) return exit;
  auto url = core::net::parseUrl(ability->url.value_or(""));
  if (!url) return reportError(url.error());
  const core::net::AddressPolicy policy = core::auth::fetchPolicyFor(*url);

  std::fprintf(stderr, "kaja: asking %s what it needs…\n", url->origin().c_str());
  auto probe = core::auth::preflight(*url, ability->transport == core::Transport::kSse, policy);
  if (!probe) {
    core::Error error = probe.error();
    if (error.code != core::ErrorCode::kRefused) {
      error.message = "cannot reach " + name + " at " + url->origin() + ": " + error.message;
    }
    return reportError(error);
  }
  if (probe->access == core::auth::Access::kOpen && !ability->oauth) {
    printNote(name + " answered without a sign-in; there is nothing to log in to");
    return kExitOk;
  }
  if (probe->access == core::auth::Access::kKey && !ability->oauth) {
    printError(name + " refused kaja (HTTP " + std::to_string(probe->status) +
               ") without asking for an OAuth sign-in: it wants a key or token; set it with "
               "`kaja key set " +
               name + "`");
    return kExitFailed;
  }
  if (probe->access == core::auth::Access::kOther) {
    printError(name + " answered HTTP " + std::to_string(probe->status) +
               " rather than asking for a sign-in; check its url with `kaja doctor`");
    return kExitFailed;
  }

  auto settings = core::auth::clientSettings(*ability);
  if (!settings) return reportError(settings.error());
  if (auto port = args.value("--port")) {
    char* end = nullptr;
    const long value = std::strtol(port->c_str(), &end, 10);
    if (end == port->c_str() || *end != '\0' || value < 1 || value > 65535) {
      printError("--port takes a port number from 1 to 65535");
      return kExitUsage;
    }
    settings->redirectPort = static_cast<int>(value);
  }
  const bool openBrowser = !args.has("--no-browser");
  BrowserLaunch browser;
  auto opener = [&](const std::string& authorize) -> core::Result<void> {
    std::fprintf(stderr,
                 "kaja: open this address to sign in to %s (waiting up to %lld s):\n\n  %s\n\n",
                 name.c_str(), static_cast<long long>(settings->approveTimeout.count() / 1000),
                 authorize.c_str());
    if (openBrowser) {
      if (const std::string program = BrowserLaunch::program(); !program.empty()) {
        if (!browser.start(program, authorize)) {
          printWarning("could not start " + program + "; open the address yourself");
        }
      }
    }
    return {};
  };
  core::auth::OAuthFlow flow(*url, "ability " + name, *settings, core::auth::defaultHttp(policy),
                             opener);
  const auto previous = context.secrets.oauth(*ability);
  auto record = flow.signIn(probe->status, probe->challenge, previous);
  if (!record) return reportError(record.error());
  record->forUrl = ability->url.value_or("");
  const std::string file = context.paths.secretsFile;
  auto saved =
      core::Secrets::update(file, [&](core::Secrets& secrets) { secrets.setOAuth(name, *record); });
  if (!saved) return reportError(saved.error());
  std::string granted = record->scope.empty() ? "" : " for " + record->scope;
  printNote("signed in to " + name + granted + " (" + describeExpiry(record->expiresAt) +
            (record->refreshToken.empty() ? ", no refresh token: sign in again then"
                                          : "; kaja refreshes it") +
            "); the tokens are in " + file);
  return kExitOk;
}

int logout(Context& context, const std::string& name) {
  bool had = false;
  auto saved = core::Secrets::update(
      context.paths.secretsFile, [&](core::Secrets& secrets) { had = secrets.removeOAuth(name); });
  if (!saved) return reportError(saved.error());
  printNote(had ? "removed the sign-in tokens of " + name
                : "no sign-in was stored for " + name + "; nothing to remove");
  return kExitOk;
}

int status(const Context& context, bool asJson) {
  nlohmann::json out = nlohmann::json::array();
  int shown = 0;
  for (const auto& record : context.catalog.abilities()) {
    if (!record.ability || !record.ability->isRemote()) continue;
    const auto stored = context.secrets.storedOAuth(record.name);
    const auto current = context.secrets.oauth(*record.ability);
    if (!stored && !record.ability->oauth) continue;
    const bool moved = stored && !current;
    if (asJson) {
      nlohmann::json row{{"name", record.name}, {"signedIn", current.has_value()}};
      if (stored) {
        row["expiresAt"] = stored->expiresAt;
        row["scope"] = stored->scope;
        row["issuer"] = stored->issuer;
        row["refreshable"] = !stored->refreshToken.empty();
        row["urlChanged"] = moved;
      }
      out.push_back(std::move(row));
      continue;
    }
    std::string state;
    if (!stored) {
      state = "not signed in (`kaja login " + record.name + "`)";
    } else if (moved) {
      state = "signed in for its old url, so the tokens are not sent; `kaja login " + record.name +
              "` again";
    } else {
      state = "signed in at " + stored->issuer + ", " + describeExpiry(stored->expiresAt) +
              (stored->refreshToken.empty() ? "" : ", refreshable") +
              (stored->scope.empty() ? "" : ", scope " + stored->scope);
    }
    std::printf("%-24s %s\n", record.name.c_str(), oneLine(state).c_str());
    ++shown;
  }
  if (asJson) {
    std::printf("%s\n", jsonText(out).c_str());
  } else if (shown == 0) {
    printNote(
        "no remote ability is signed in or declares an oauth table; `kaja login NAME` "
        "signs one in");
  }
  return kExitOk;
}

}  // namespace

int runLogin(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--status", "--json", "--no-browser"}, {"--port"});
  if (!parsed) return reportError(parsed.error());
  const auto& words = parsed->positional;
  const bool showStatus = parsed->has("--status");
  if ((showStatus && !words.empty()) || (!showStatus && words.size() != 1)) {
    printError("usage: kaja login NAME [--no-browser] [--port N] | kaja login --status [--json]");
    return kExitUsage;
  }
  if (!showStatus && !core::isValidName(words[0])) {
    printError("\"" + words[0] + "\" is not an ability name (letters, digits, - and _)");
    return kExitUsage;
  }
  auto context = Context::load();
  if (!context) return reportError(context.error());
  if (showStatus) return status(*context, parsed->has("--json"));
  return login(*context, words[0], *parsed);
}

int runLogout(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {});
  if (!parsed) return reportError(parsed.error());
  if (parsed->positional.size() != 1 || !core::isValidName(parsed->positional[0])) {
    printError("usage: kaja logout NAME");
    return kExitUsage;
  }
  auto context = Context::load();
  if (!context) return reportError(context.error());
  return logout(*context, parsed->positional[0]);
}

}  // namespace kaja::cli
