#pragma once

#include <chrono>
#include <functional>
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
  /// What a person should hear about this connect even without --verbose, one sentence
  /// each: e.g. tools left out of a workspace's server (V7).
  std::vector<std::string> notes;
};

/// Answers one request a server made (sampling/createMessage, elicitation/create): call
/// `respond` once, now or later, with the result object or an Error. `origin` names the
/// call whose input round it is, when a 2026-07-28 server asked in one (its callId is the
/// HostCall id).
using ServerRequestHandler = std::function<void(
    const std::string& ability, const std::string& method, const mcp::Json& params,
    const mcp::InputOrigin& origin, std::function<void(Result<mcp::Json>)> respond)>;

/// What the host tells its owner while it works. Called on the host's loop thread.
struct HostEvents {
  std::function<void(const std::string& ability)> connecting;
  std::function<void(const ConnectReport&)> connected;
  std::function<void(const std::string& warning)> warning;
  /// A connected ability's tool list changed (after notifications/tools/list_changed).
  std::function<void(const std::string& ability, const std::vector<mcp::Tool>& tools)> toolsChanged;
  /// A connected ability's connection ended without being asked to (its server exited).
  std::function<void(const std::string& ability, const Error& why)> disconnected;
  /// Any notification a connected server sent (logging, resources/updated, list changes).
  std::function<void(const std::string& ability, const mcp::Notification& notification)>
      notification;
  /// With HostOptions::forwardServerRequests: a server's sampling or elicitation request.
  ServerRequestHandler serverRequest;
};

/// How one call through the host runs.
struct HostCallOptions {
  std::chrono::milliseconds timeout{0};  ///< 0: HostOptions::callTimeout
  /// Called on each notifications/progress for the call; asks the server for progress.
  std::function<void(const mcp::Progress&)> onProgress;
  /// Restart the timeout on each progress update (the spec's resetTimeoutOnProgress).
  bool resetTimeoutOnProgress = false;
  /// The client capabilities a 2026-07-28 server is told for this call (see
  /// mcp::CallOptions::capabilities); null: kaja's own.
  mcp::Json capabilities;
  /// The log level a 2026-07-28 server is told for this call (mcp::CallOptions::logLevel).
  std::optional<std::string> logLevel;
};

/// Settings for a Host.
struct HostOptions {
  std::chrono::milliseconds connectTimeout{10000};  ///< start + initialize + tools/list (K9)
  std::chrono::milliseconds callTimeout{15000};     ///< per tools/call by default (U6)
  /// The longest a call may run however much progress it reports (ClientOptions::progressLimit).
  std::chrono::milliseconds callTimeLimit{std::chrono::hours(1)};
  std::size_t maxParallelStdio = 4;      ///< stdio servers starting at once (U6)
  std::size_t maxParallelConnects = 16;  ///< connects of any kind at once (V7)
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
  /// Offer servers sampling and elicitation, and pass their requests to
  /// events.serverRequest (a gateway forwards them to its client).
  bool forwardServerRequests = false;
  HostEvents events;
};

}  // namespace kaja::core
