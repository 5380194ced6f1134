#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/manifest/ability.h"
#include "core/mcp/types.h"
#include "core/runner/runner_resolver.h"

namespace kaja::core {

/// One ability the host should have connected, with how to run it and what it gets.
struct Activation {
  Ability ability;
  Resolution resolution;         ///< must be AbilityState::kOn
  std::vector<mcp::Root> roots;  ///< sent as MCP roots when ability.roots is set
};

/// How connecting one ability went.
struct ConnectReport {
  std::string ability;
  bool ok = false;
  std::optional<Error> error;
  std::string stderrTail;  ///< the server's last stderr bytes, for --verbose
  std::vector<mcp::Tool> tools;
  std::chrono::milliseconds elapsed{0};  ///< start to tools listed
  /// CPU the server's processes had used by then (stdio with HostOptions::measureStartCpu
  /// only; -1 otherwise). Unlike
  /// `elapsed` it hardly changes when other servers start at the same time.
  std::chrono::milliseconds cpu{-1};
  /// How much of `elapsed` went on waiting for a `roots` server to fetch its roots and apply
  /// them (0 when it was not waited for).
  std::chrono::milliseconds rootsWait{0};
  std::string protocolVersion;
  std::string serverName;
  bool reused = false;  ///< it was already connected and was kept
};

/// What the host tells its owner while it works. Called on the host's own thread.
struct HostEvents {
  std::function<void(const std::string& ability)> connecting;
  std::function<void(const ConnectReport&)> connected;
  std::function<void(const std::string& warning)> warning;
};

/// Settings for a Host.
struct HostOptions {
  std::chrono::milliseconds connectTimeout{10000};  ///< start + initialize + tools/list (K9)
  std::chrono::milliseconds callTimeout{15000};     ///< per tools/call by default (U6)
  std::size_t maxParallelStdio = 4;                 ///< stdio servers starting at once (U6)
  /// Try protocol 2026-07-28 (server/discover) first, falling back to initialize.
  bool discover = true;
  /// Whether a `roots` server counts as connected only once it has fetched its roots (and
  /// had a moment to apply them), so that calls are judged against its folders. A program
  /// that only lists tools need not wait.
  bool waitForRoots = true;
  /// Whether to fill ConnectReport::cpu. It reads every process's /proc stat once per stdio
  /// connect (about 0.6 ms for 70 processes), which only a program that uses it should pay.
  bool measureStartCpu = false;
  /// How long a stdio server gets to exit after its stdin closes, and again after SIGTERM.
  std::chrono::milliseconds closeGrace{1000};
  HostEvents events;
};

/// Keeps a set of MCP connections alive for a long-running program (the CLI, the gateway,
/// the sandbox) on one event loop of its own. A failing or silent server is reported and
/// skipped; the others go on (K9, S4). Every public method blocks until its work is done
/// and may be called from any one thread at a time.
class Host {
 public:
  explicit Host(HostOptions options = {});
  /// Closes every connection (ending the servers) and stops the loop.
  ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  /// Makes exactly `wanted` connected: connects the new ones in parallel (at most
  /// maxParallelStdio stdio servers starting at once), closes those no longer wanted, and
  /// sends new roots to kept `roots` servers (notifications/roots/list_changed) without
  /// restarting them. Returns one report per wanted ability, in order.
  std::vector<ConnectReport> activate(std::vector<Activation> wanted);

  /// Returns the names of the connected abilities.
  [[nodiscard]] std::vector<std::string> connected();
  /// Returns the tools `ability` listed (refreshed on list_changed).
  Result<std::vector<mcp::Tool>> tools(const std::string& ability);
  /// Calls `tool` on `ability`. `timeout` 0 means the host's callTimeout.
  Result<mcp::ToolResult> callTool(
      const std::string& ability, const std::string& tool, const mcp::Json& arguments,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  /// Returns the pid of a connected stdio server.
  std::optional<pid_t> serverPid(const std::string& ability);
  /// Closes every connection and waits until the servers are gone.
  void closeAll();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kaja::core
