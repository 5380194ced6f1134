// `kaja serve`: the active persona as one MCP server, on stdin/stdout or Streamable HTTP.
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/context.h"
#include "cli/output.h"
#include "cli/persona_session.h"
#include "core/gateway/gateway.h"
#include "core/process/child_process.h"
#include "core/server/http_front.h"
#include "core/server/stdio_front.h"
#include "core/util/sys.h"
#include "personas/activation.h"
#include "personas/persona_resolver.h"

namespace kaja::cli {
namespace {

namespace fs = std::filesystem;
using core::gateway::NameStyle;

// How often the gateway looks for changed manifests, personas and keys.
constexpr std::chrono::milliseconds kReloadCheck{1000};

// The longest wait for a person's answer to an approval that --approval-timeout accepts.
constexpr std::chrono::seconds kMaxApprovalTimeout{86400};

struct ServeSettings {
  std::optional<std::string> persona;  ///< fixed by --persona; else the active one, followed
  NameStyle names = NameStyle::kPrefixed;
  bool proxy = false;
  std::chrono::seconds approvalTimeout{300};  ///< how long a person has to answer an approval
  std::optional<core::server::HttpFrontOptions> http;  ///< --http: serve HTTP, not stdio
};

// Reads a bearer token from `path`: the file's first line, at least 16 characters.
core::Result<std::string> readToken(const std::string& path) {
  // A regular file of at most 64 KB: /dev/zero or a FIFO given by mistake must neither fill
  // memory nor hang the start.
  auto text = core::readRegularFile(path, std::size_t{64} * 1024, "the token file");
  if (!text) {
    return core::fail(core::ErrorCode::kUsage,
                      "cannot read the token file " + path + ": " + text.error().message);
  }
  std::string token = text->substr(0, text->find('\n'));
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.size() < 16) {
    return core::fail(core::ErrorCode::kUsage,
                      "the token in " + path +
                          " is shorter than 16 characters; put a long random one there, e.g. "
                          "`head -c 24 /dev/urandom | base64 > " +
                          path + "`");
  }
  return token;
}

bool isLoopback(const std::string& host) {
  return host == "127.0.0.1" || host == "::1" || host.starts_with("127.");
}

// Parses --http HOST:PORT ([::1]:PORT for IPv6) into front options.
core::Result<core::server::HttpFrontOptions> parseListen(const std::string& text) {
  auto address = parseHostPort("--http", text, "127.0.0.1:8931");
  if (!address) return std::unexpected(address.error());
  core::server::HttpFrontOptions options;
  options.host = address->first;
  options.port = address->second;
  return options;
}

// Loads the configuration and turns the persona into what the gateway runs.
core::Result<core::gateway::GatewayConfig> loadConfig(const ServeSettings& settings,
                                                      Context& context) {
  auto loaded = Context::load();
  if (!loaded) return std::unexpected(loaded.error());
  context = std::move(*loaded);
  std::string name = settings.persona.value_or(personas::activePersona(context.paths.configDir));
  auto persona = personas::resolvePersona(context.catalog, name, core::homeDir());
  if (!persona) return std::unexpected(persona.error());
  auto runners = context.runners();
  if (!runners) return std::unexpected(runners.error());
  personas::ActivationPlan plan = personas::planActivations(*persona, *runners, context.secrets);
  core::gateway::GatewayConfig config;
  config.persona = persona->name;
  config.scopes = callScopes(*persona, *runners, context.secrets);
  config.activations = std::move(plan.activations);
  config.skipped = std::move(plan.skipped);
  for (const auto& warning : persona->warnings) config.skipped.push_back(warning);
  return config;
}

// A cheap summary of every file the configuration comes from: a change to any of them (an
// edited manifest, `kaja persona use`, a new key) changes it.
std::string fingerprint(const core::Paths& paths) {
  std::string print;
  auto add = [&print](const fs::path& path) {
    std::error_code ec;
    auto time = fs::last_write_time(path, ec);
    if (ec) return;
    print += path.string() + ':' + std::to_string(time.time_since_epoch().count()) + ';';
  };
  // abilities/<name>/mcp.toml and personas/<name>.toml; not the runtime's node_modules.
  for (const auto& root : {paths.userMarketplace, paths.shippedMarketplace}) {
    for (const char* part : {"/abilities", "/personas"}) {
      std::error_code ec;
      for (fs::recursive_directory_iterator it(root + part, ec), end; !ec && it != end;
           it.increment(ec)) {
        if (it.depth() >= 1) it.disable_recursion_pending();
        add(it->path());
      }
    }
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(paths.configDir, ec)) add(entry.path());
  return print;
}

class Server {
 public:
  explicit Server(ServeSettings settings) : settings_(std::move(settings)) {}

  int run() {
    auto config = loadConfig(settings_, context_);
    if (!config) return reportError(config.error());
    core::gateway::GatewayOptions options;
    options.names = settings_.names;
    options.proxy = settings_.proxy;
    options.approvalTimeout = settings_.approvalTimeout;
    options.home = core::homeDir();
    options.pipeline = pipelineOptionsFor(context_.paths);
    options.auditDir = context_.paths.dataDir;
    options.cacheDir = context_.paths.dataDir + "/cache/metadata";
    options.log = [](const std::string& text) { printWarning(text); };
    gateway_ = std::make_unique<core::gateway::Gateway>(io_, std::move(options));
    lastPrint_ = fingerprint(context_.paths);
    persona_ = config->persona;
    int status = kExitOk;
    gateway_->start(std::move(*config), [this, &status](core::Result<void> started) {
      if (!started) {
        printError(started.error());
        status = kExitUsage;
        gateway_->stop([this] { io_.stop(); });
        return;
      }
      if (auto opened = openFront(); !opened) {
        printError(opened.error());
        status = kExitFailed;
        gateway_->stop([this] { io_.stop(); });
        return;
      }
      watch();
    });
    io_.run();
    return status;
  }

 private:
  core::Result<void> openFront() {
    if (settings_.http) {
      auto front = core::server::HttpFront::create(io_, gateway_->sessions(), *settings_.http);
      if (!front) return std::unexpected(front.error());
      http_ = std::move(*front);
      http_->start();
      const std::string& host = settings_.http->host;
      if (settings_.http->bearerToken.empty()) {
        printWarning(
            "no --token-file: any program or user on this machine can use this gateway and "
            "answer its approvals; give --token-file F on a machine you share");
      }
      std::fprintf(stderr, "kaja: serving persona \"%s\" at http://%s:%u%s\n",
                   oneLine(persona_).c_str(),
                   (host.find(':') != std::string::npos ? "[" + host + "]" : host).c_str(),
                   static_cast<unsigned>(http_->port()), settings_.http->path.c_str());
      return {};
    }
    if (::isatty(0) == 1) {
      std::fprintf(stderr,
                   "kaja: serving persona \"%s\" as an MCP server on stdin/stdout; an MCP client "
                   "starts this (see README), or pass --http HOST:PORT. Ctrl-D ends it.\n",
                   oneLine(persona_).c_str());
    }
    auto front = core::server::StdioFront::create(io_, 0, 1, gateway_->sessions());
    if (!front) return std::unexpected(front.error());
    stdio_ = std::move(*front);
    stdio_->start([this] { shutdown(); });
    return {};
  }

  void shutdown() {
    if (std::exchange(stopping_, true)) return;
    reloadTimer_.cancel();
    if (http_) http_->stop();
    gateway_->stop([this] { io_.stop(); });
  }

  // Follows the configuration: on a change, the gateway moves to it without a restart.
  void watch() {
    reloadTimer_.expires_after(kReloadCheck);
    reloadTimer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || stopping_) return;
      std::string print = fingerprint(context_.paths);
      if (print == lastPrint_) {
        watch();
        return;
      }
      lastPrint_ = std::move(print);
      auto config = loadConfig(settings_, context_);
      if (!config) {
        printWarning("kept the running configuration: " + config.error().describe());
        watch();
        return;
      }
      printWarning("configuration changed; now serving persona \"" + config->persona + "\"");
      persona_ = config->persona;
      gateway_->reload(std::move(*config), [this](const core::Result<void>& reloaded) {
        if (!reloaded) printWarning(reloaded.error().describe());
        watch();
      });
    });
  }

  ServeSettings settings_;
  Context context_;
  boost::asio::io_context io_;
  boost::asio::steady_timer reloadTimer_{io_};
  std::unique_ptr<core::gateway::Gateway> gateway_;
  std::unique_ptr<core::server::StdioFront> stdio_;
  std::unique_ptr<core::server::HttpFront> http_;
  std::string persona_;
  std::string lastPrint_;
  bool stopping_ = false;
};

}  // namespace

int runServe(std::span<const std::string> args) {
  // A client that closes its end makes writes fail with EPIPE, which ends the session
  // cleanly, instead of killing kaja before it has stopped its servers or written its rows.
  core::ignoreSigpipe();
  auto parsed = parseArgs(
      args, {"--proxy"},
      {"--persona", "--names", "--http", "--token-file", "--allow-origin", "--approval-timeout"});
  if (!parsed) return reportError(parsed.error());
  if (!parsed->positional.empty()) {
    printError("serve takes no arguments (see kaja serve --help)");
    return kExitUsage;
  }
  ServeSettings settings;
  settings.persona = parsed->value("--persona");
  settings.proxy = parsed->has("--proxy");
  if (auto names = parsed->value("--names")) {
    if (*names == "prefixed") {
      settings.names = NameStyle::kPrefixed;
    } else if (*names == "bare") {
      settings.names = NameStyle::kBare;
    } else {
      printError("--names takes prefixed or bare, not \"" + oneLine(*names) + "\"");
      return kExitUsage;
    }
  }
  if (auto wait = parsed->value("--approval-timeout")) {
    auto seconds = parsePositive("--approval-timeout", *wait, "a positive number of seconds");
    if (!seconds) return reportError(seconds.error());
    if (*seconds > kMaxApprovalTimeout.count()) {
      printError("--approval-timeout takes at most " + std::to_string(kMaxApprovalTimeout.count()) +
                 " seconds (a day), not " + *wait);
      return kExitUsage;
    }
    settings.approvalTimeout = std::chrono::seconds(*seconds);
  }
  if (auto listen = parsed->value("--http")) {
    auto http = parseListen(*listen);
    if (!http) return reportError(http.error());
    if (auto tokenFile = parsed->value("--token-file")) {
      auto token = readToken(*tokenFile);
      if (!token) return reportError(token.error());
      http->bearerToken = std::move(*token);
    } else if (!isLoopback(http->host)) {
      printError("--http on " + http->host +
                 " can be reached from other machines, so it needs --token-file F (a file "
                 "holding the bearer token every client must send)");
      return kExitUsage;
    }
    if (auto origins = parsed->value("--allow-origin")) {
      std::string list = *origins;
      for (std::size_t start = 0; start <= list.size();) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        if (comma > start) http->allowedOrigins.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    }
    settings.http = std::move(*http);
  } else if (parsed->value("--token-file") || parsed->value("--allow-origin")) {
    printError("--token-file and --allow-origin go with --http");
    return kExitUsage;
  }
  Server server(std::move(settings));
  return server.run();
}

}  // namespace kaja::cli
