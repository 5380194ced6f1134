// `kaja sandbox`: the sandbox worker (serve), its tokens (token), its live servers (status),
// and the two steps of a confined server's command line (enter, bridge).
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/output.h"
#include "sandbox/egress_bridge.h"
#include "sandbox/enter.h"
#include "sandbox/token.h"

namespace kaja::cli {
namespace {

constexpr std::int64_t kDefaultTtl = 3600;

int runToken(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {}, {"--ttl", "--key-file"});
  if (!parsed) {
    printError(parsed.error().message);
    return kExitUsage;
  }
  if (parsed->positional.size() != 1) {
    printError("give one user id: kaja sandbox token USER --key-file F [--ttl SECONDS]");
    return kExitUsage;
  }
  const auto keyFile = parsed->value("--key-file");
  if (!keyFile) {
    printError("give the worker's key file with --key-file F");
    return kExitUsage;
  }
  std::int64_t ttl = kDefaultTtl;
  if (const auto text = parsed->value("--ttl")) {
    try {
      std::size_t used = 0;
      ttl = std::stoll(*text, &used);
      if (used != text->size() || ttl <= 0) throw std::invalid_argument("ttl");
    } catch (const std::exception&) {
      printError("--ttl takes a positive number of seconds, not \"" + *text + "\"");
      return kExitUsage;
    }
  }
  auto key = sandbox::readKeyFile(*keyFile);
  if (!key) {
    printError(key.error().message);
    return kExitUsage;
  }
  auto token = sandbox::makeToken(*key, parsed->positional.front(), sandbox::unixNow() + ttl);
  if (!token) {
    printError(token.error().message);
    return kExitUsage;
  }
  std::printf("%s\n", token->c_str());
  return kExitOk;
}

}  // namespace

int runSandbox(std::span<const std::string> args) {
  if (args.empty()) {
    printError("give a subcommand: kaja sandbox serve|token|status (kaja sandbox --help)");
    return kExitUsage;
  }
  const std::string& sub = args.front();
  const auto rest = args.subspan(1);
  if (sub == "token") return runToken(rest);
  if (sub == "enter") return sandbox::runEnter(rest);
  if (sub == "bridge") return sandbox::runBridge(rest);
  printError("unknown sandbox subcommand \"" + sub + "\"; use serve, token or status");
  return kExitUsage;
}

}  // namespace kaja::cli
