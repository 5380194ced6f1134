// `kaja sandbox`: the sandbox worker (serve), its tokens (token), its live servers (status),
// and the two steps of a confined server's command line (enter, bridge).
#include <signal.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "sandbox/cidr.h"
#include "sandbox/egress_bridge.h"
#include "sandbox/enter.h"
#include "sandbox/token.h"
#include "sandbox/worker.h"

namespace kaja::cli {
namespace {

constexpr std::int64_t kDefaultTtl = 3600;
constexpr std::int64_t kDefaultIdle = 600;

constexpr std::string_view kSeconds = "a positive number of seconds";
constexpr std::string_view kWhole = "a positive whole number";

// Parses a memory size: bytes, or a number with K, M or G (powers of 1024; "512M", "1GiB").
core::Result<std::uint64_t> memorySize(const std::string& text) {
  std::uint64_t value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto [rest, ec] = std::from_chars(begin, end, value);
  std::string unit(rest, end);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::uint64_t scale = 0;
  if (unit.empty() || unit == "B") {
    scale = 1;
  } else if (unit == "K" || unit == "KB" || unit == "KIB") {
    scale = 1024;
  } else if (unit == "M" || unit == "MB" || unit == "MIB") {
    scale = std::uint64_t{1024} * 1024;
  } else if (unit == "G" || unit == "GB" || unit == "GIB") {
    scale = std::uint64_t{1024} * 1024 * 1024;
  }
  if (ec != std::errc() || rest == begin || scale == 0 || value == 0 ||
      value > std::numeric_limits<std::uint64_t>::max() / scale) {
    return core::fail(core::ErrorCode::kUsage,
                      "--memory takes a size such as 512M or 2G, not \"" + oneLine(text) + "\"");
  }
  return value * scale;
}

// The --allow-private ranges, in the order given; a usage error names the option.
core::Result<std::vector<sandbox::Cidr>> allowPrivateRanges(const ParsedArgs& parsed) {
  std::vector<sandbox::Cidr> ranges;
  for (const auto& [flag, value] : parsed.values) {
    if (flag != "--allow-private") continue;
    auto range = sandbox::parseCidr(value);
    if (!range) {
      auto error = range.error();
      error.message = "--allow-private " + error.message;
      return std::unexpected(std::move(error));
    }
    ranges.push_back(*range);
  }
  return ranges;
}

// The stdio allow-list (U5): config.toml's `[stdio] allow` plus each --allow-stdio LINE;
// nullopt when neither is given. A bad line is a usage error that quotes it.
core::Result<std::optional<core::StdioAllowList>> stdioAllowList(const ParsedArgs& parsed,
                                                                 const core::KajaConfig& config) {
  std::optional<core::StdioAllowList> list = config.stdioAllow;
  for (const auto& [flag, value] : parsed.values) {
    if (flag != "--allow-stdio") continue;
    auto rule = core::parseStdioAllowRule(value);
    if (!rule) {
      return core::fail(core::ErrorCode::kUsage,
                        "--allow-stdio \"" + oneLine(value) + "\" " + rule.error());
    }
    if (!list) list.emplace();
    list->rules.push_back(std::move(*rule));
  }
  if (list) {
    list->whereToAdd =
        "allow under [stdio] in " + config.file + " or give it to the worker's --allow-stdio";
  }
  return list;
}

std::string defaultStateDir() {
  auto loaded = Context::load();
  return loaded ? loaded->paths.dataDir + "/sandbox" : std::string();
}

int runServeWorker(std::span<const std::string> args) {
  auto parsed =
      parseArgs(args, {"--shared"},
                {"--listen", "--key-file", "--idle", "--state", "--max-servers", "--max-per-user",
                 "--memory", "--pids", "--allow-private", "--run-as", "--allow-stdio", "--userns"});
  if (!parsed) return reportError(parsed.error());
  if (!parsed->positional.empty()) {
    printError("sandbox serve takes no arguments (kaja sandbox --help)");
    return kExitUsage;
  }
  const auto listen = parsed->value("--listen");
  const auto keyFile = parsed->value("--key-file");
  if (!listen || !keyFile) {
    printError("sandbox serve needs --listen HOST:PORT and --key-file F");
    return kExitUsage;
  }
  auto address = parseHostPort("--listen", *listen, "127.0.0.1:8080");
  if (!address) return reportError(address.error());
  auto key = sandbox::readKeyFile(*keyFile);
  if (!key) return reportError(key.error());
  std::int64_t idle = kDefaultIdle;
  if (const auto text = parsed->value("--idle")) {
    auto given = parsePositive("--idle", *text, kSeconds);
    if (!given) return reportError(given.error());
    idle = *given;
  }
  auto context = Context::load();
  if (!context) return reportError(context.error());
  sandbox::WorkerOptions options;
  for (const auto& [flag, field] : {std::pair{"--max-servers", &options.maxServers},
                                    std::pair{"--max-per-user", &options.maxPerUser}}) {
    if (const auto text = parsed->value(flag)) {
      auto given = parsePositive(flag, *text, kWhole);
      if (!given) return reportError(given.error());
      *field = static_cast<std::size_t>(*given);
    }
  }
  if (const auto text = parsed->value("--memory")) {
    auto bytes = memorySize(*text);
    if (!bytes) return reportError(bytes.error());
    options.memoryBytes = *bytes;
  }
  if (const auto text = parsed->value("--pids")) {
    auto given = parsePositive("--pids", *text, kWhole);
    if (!given) return reportError(given.error());
    options.pids = static_cast<std::uint64_t>(*given);
  }
  auto allowPrivate = allowPrivateRanges(*parsed);
  if (!allowPrivate) return reportError(allowPrivate.error());
  options.allowPrivate = std::move(*allowPrivate);
  std::string ranges;
  for (const auto& range : options.allowPrivate) {
    ranges += (ranges.empty() ? "" : ", ") + range.text();
  }
  // Servers see the marketplaces and kaja's own runners, never its keys or data.
  options.readOnly = {context->paths.shippedMarketplace, context->paths.userMarketplace};
  for (const auto& dir : context->toolDirs()) options.readOnly.push_back(dir);
  options.hidden = {context->paths.secretsFile, context->paths.configFile, context->paths.dataDir};
  // The credential this machine's own kaja sends to a worker (config.toml's [sandbox]
  // token_file or key_file) opens that worker's servers.
  if (const auto& sandbox = context->config.sandbox) {
    for (const auto& file : {sandbox->tokenFile, sandbox->keyFile}) {
      if (file) options.hidden.push_back(*file);
    }
  }
  options.host = address->first;
  options.port = address->second;
  options.key = std::move(*key);
  options.keyFile = std::filesystem::absolute(*keyFile).string();
  options.shared = parsed->has("--shared");
  options.runAs = parsed->value("--run-as").value_or("");
  options.idle = std::chrono::seconds(idle);
  options.stateDir = parsed->value("--state").value_or(context->paths.dataDir + "/sandbox");
  for (const auto& record : context->catalog.abilities()) {
    // A worker serves what its operator installed, never a .mcp.json it happens to sit in.
    if (record.layer == marketplace::LayerKind::kWorkspace) continue;
    if (record.ability) {
      options.abilities.push_back(*record.ability);
    } else {
      printWarning("not served: ability " + record.name +
                   " has a broken manifest: " + record.error.describe());
    }
  }
  for (const auto& [flag, value] : parsed->values) {
    if (flag != "--userns") continue;
    const bool served = std::ranges::any_of(
        options.abilities, [&](const core::Ability& ability) { return ability.name == value; });
    if (!served) {
      printError("--userns " + oneLine(value) +
                 ": no ability of that name is installed here (kaja abilities lists them)");
      return kExitUsage;
    }
    options.userNamespaces.push_back(value);
  }
  options.runners = core::RunnerContext::fromProcess(context->toolDirs());
  auto allowStdio = stdioAllowList(*parsed, context->config);
  if (!allowStdio) return reportError(allowStdio.error());
  options.runners->stdioAllow = std::move(*allowStdio);
  options.log = [](const std::string& text) { printWarning(text); };
  boost::asio::io_context io;
  auto worker = sandbox::Worker::create(io, std::move(options));
  if (!worker) return reportError(worker.error());
  if (!(*worker)->limitsOff().empty()) printWarning((*worker)->limitsOff());
  for (const auto& line : (*worker)->refused()) printWarning("not served: " + line);
  for (const auto& line : (*worker)->offered()) {
    std::fprintf(stderr, "kaja: serving %s\n", line.c_str());
  }
  if (!ranges.empty()) {
    std::fprintf(stderr, "kaja: servers may also reach %s through the egress proxy\n",
                 ranges.c_str());
  }
  (*worker)->start();
  std::fprintf(stderr,
               "kaja: sandbox worker listening on http://%s:%u/users/USER/abilities/ABILITY/mcp\n",
               address->first.find(':') != std::string::npos ? ("[" + address->first + "]").c_str()
                                                             : address->first.c_str(),
               static_cast<unsigned>((*worker)->port()));
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    (*worker)->stop([&io] { io.stop(); });
  });
  io.run();
  return kExitOk;
}

int runStatus(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--json"}, {"--state"});
  if (!parsed) return reportError(parsed.error());
  const std::string state = parsed->value("--state").value_or(defaultStateDir());
  std::ifstream in(sandbox::statusFile(state));
  nlohmann::json status = nlohmann::json::parse(in, nullptr, false);
  const bool alive = status.is_object() && status.value("pid", 0) > 0 &&
                     ::kill(status.value("pid", 0), 0) == 0 &&
                     sandbox::unixNow() - status.value("updated", std::int64_t{0}) < 10;
  if (!alive) {
    printError("no sandbox worker is running with the state folder " + state +
               " (start one with `kaja sandbox serve`, or give its --state DIR)");
    return kExitFailed;
  }
  if (parsed->has("--json")) {
    std::printf("%s\n", status["servers"].dump(2).c_str());
    return kExitOk;
  }
  std::printf("worker pid %d on %s%s, idle limit %llds\n", status.value("pid", 0),
              status.value("listen", "").c_str(), status.value("shared", false) ? " (shared)" : "",
              static_cast<long long>(status.value("idleSeconds", std::int64_t{0})));
  if (status["servers"].empty()) {
    std::printf("no servers are running\n");
    return kExitOk;
  }
  std::printf("%-20s %-24s %8s %10s %8s %8s\n", "USER", "ABILITY", "PID", "RSS", "IDLE", "CALLS");
  for (const auto& server : status["servers"]) {
    std::string ability = server.value("ability", "");
    if (server.contains("turn")) ability += "@" + server.value("turn", "");
    const std::string pid = server.contains("pid") ? std::to_string(server.value("pid", 0)) : "-";
    const std::string rss =
        server.contains("rssKb")
            ? std::to_string(server.value("rssKb", std::uint64_t{0}) / 1024) + " MB"
            : "-";
    std::printf("%-20s %-24s %8s %10s %7llds %8llu\n", oneLine(server.value("user", "")).c_str(),
                oneLine(ability).c_str(), pid.c_str(), rss.c_str(),
                static_cast<long long>(server.value("idleSeconds", std::int64_t{0})),
                static_cast<unsigned long long>(server.value("calls", std::uint64_t{0})));
  }
  return kExitOk;
}

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
    auto given = parsePositive("--ttl", *text, kSeconds);
    if (!given) return reportError(given.error());
    if (*given > sandbox::kMaxTokenSeconds) {
      printError(
          "--ttl is at most 366 days (31622400 seconds): a worker refuses a token that "
          "lives longer, since only a new key takes one back");
      return kExitUsage;
    }
    ttl = *given;
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
  if (sub == "serve") return runServeWorker(rest);
  if (sub == "status") return runStatus(rest);
  if (sub == "token") return runToken(rest);
  if (sub == "enter") return sandbox::runEnter(rest);
  if (sub == "bridge") return sandbox::runBridge(rest);
  printError("unknown sandbox subcommand \"" + sub + "\"; use serve, token or status");
  return kExitUsage;
}

}  // namespace kaja::cli
