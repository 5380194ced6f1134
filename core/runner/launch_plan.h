#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/process/launch_plan.h"

// The plans runner resolution makes: a LaunchPlan (declared in core/process, which starts
// it) for a stdio server, a RemotePlan for a remote one, and which runner was chosen.

namespace kaja::core {

/// Which runner starts (or reaches) an ability on this machine (K5–K8).
/// kSandbox: a stdio ability that a sandbox worker runs, reached over Streamable HTTP (K20).
enum class RunnerKind { kBunx, kNpx, kUvx, kPipx, kDocker, kCommand, kRemote, kSandbox };

/// Returns "bunx", "npx", "uvx", "pipx", "docker", "command", "remote" or "sandbox".
const char* toString(RunnerKind kind);

/// How many times one request may be sent again after new credentials: once after a
/// refresh or sign-in on 401, once more for a step-up on 403 (insufficient_scope).
inline constexpr int kMaxAuthRetries = 2;

/// How to reach a remote server. Header values may hold keys; never print them.
struct RemotePlan {
  std::string url;
  bool sse = false;  ///< legacy HTTP+SSE rather than Streamable HTTP
  std::vector<std::pair<std::string, std::string>> headers;
  /// When set, the headers of each request instead of `headers` (which hold the first
  /// ones): a token made afresh, so a long-running connection never sends an expired one.
  std::function<std::vector<std::pair<std::string, std::string>>()> freshHeaders;
  /// Where the server runs when not at its own address, e.g. "the sandbox at https://…";
  /// every message about the connection names it. Empty for an ability's own URL.
  std::string via;
  /// What to do when the server refuses kaja's credentials (HTTP 401/403); empty means the
  /// ability's own key (`kaja key set`).
  std::string credentialsHint;
  /// When set, asked when the server answers a request with HTTP 401 or 403, with the
  /// status and the WWW-Authenticate value: it gets new credentials (a refresh, a sign-in)
  /// for freshHeaders, then calls `retry` (from any thread) with true to send the request
  /// again, or false to fail it as without. Asked at most kMaxAuthRetries times a request.
  std::function<void(long status, const std::string& challenge, std::function<void(bool)> retry)>
      onAuthChallenge;
};

}  // namespace kaja::core
