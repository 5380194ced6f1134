#pragma once
// The parts of Gateway that its sessions share. Included by gateway*.cpp only.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/gateway/gateway.h"
#include "core/gateway/metadata_cache.h"
#include "core/host/async_host.h"

namespace kaja::core::gateway {

class GatewaySession;

/// One client request running on an ability, so that a server's own request made meanwhile
/// (elicitation, sampling) goes to that client, on that request's stream.
struct RunningCall {
  std::weak_ptr<GatewaySession> session;
  mcp::Json requestId;
  std::string logLevel;  ///< the least level of log message the client asked for; "" none
};

struct Gateway::Impl : std::enable_shared_from_this<Gateway::Impl> {
  Impl(boost::asio::io_context& context, GatewayOptions opts);

  void log(const std::string& text) const {
    if (options.log) options.log(text);
  }
  /// Sends `notification` to every live session that has started (relatedTo null).
  void broadcast(const mcp::Json& notification);
  /// Builds the catalog for `config` with the host's current tools.
  void rebuildCatalog();
  void onServerRequest(const std::string& ability, const std::string& method,
                       const mcp::Json& params, const mcp::InputOrigin& origin,
                       std::function<void(Result<mcp::Json>)> respond);
  void onServerNotification(const std::string& ability, const mcp::Notification& notification);
  /// Starts again, after a growing pause, the abilities that failed or stopped.
  void scheduleRetry();
  /// Moves to `next` (see Gateway::reload), after any activation that is running.
  void reload(GatewayConfig next, std::function<void(Result<void>)> done);
  /// Runs the reload that waited for the last activation, if any.
  void runQueued();
  /// Returns the abilities whose servers announced `capability` (resources, prompts, …),
  /// from the running server or, for one that is not running, its cached metadata.
  [[nodiscard]] std::vector<std::string> abilitiesWith(const std::string& capability) const;

  // Lifecycle (V4, gateway_lifecycle.cpp): which servers run, started on use and stopped
  // when idle.
  /// Returns the configured activation of `ability`, or nullptr.
  [[nodiscard]] const Activation* activationOf(const std::string& ability) const;
  /// Decides which of `config`'s servers run from the start: keep-alive and eager ones, lazy
  /// ones whose tools are not cached or are stale (to learn them), and lazy ones that are
  /// running now.
  void planWanted();
  /// Starts the lazy servers whose cached tools were stale, so that the cache is refreshed
  /// without anyone waiting for it.
  void refreshStale();
  /// Runs `ready` once `ability`'s server is connected, starting it when it is not; `ready`
  /// gets the reason when it cannot start.
  void whenRunning(const std::string& ability, std::function<void(Result<void>)> ready);
  /// Makes the host run exactly `wanted`, one activation at a time; `done` runs after it.
  void activateWanted(std::function<void(const std::vector<ConnectReport>&)> done = {});
  /// Marks a request to `ability` begun or ended: a server with requests in flight is never
  /// stopped for idleness, and its idle clock starts when the last one ends.
  void use(const std::string& ability);
  void release(const std::string& ability);
  /// Stops the lazy and eager servers unused for their idleTimeout; runs each second while
  /// any of them runs.
  void checkIdle();
  void scheduleIdleCheck();
  /// Returns true when a live client holds a resource subscription `ability` serves.
  [[nodiscard]] bool subscribed(const std::string& ability) const;
  /// Tells each server with logging the level the most talkative live 2025 client chose: a
  /// 2025-11-25 server has one level for kaja's one connection, and kaja hands each client
  /// only the messages of the level it asked for. Sends nothing when no client chose one.
  /// Tells the servers with logging (only `ability`, when given) the most talkative level of
  /// the live clients, if any client chose one.
  void sendLogLevel(const std::string& ability = "");
  /// Ends kaja's subscription to `uri` at `ability` when no live client follows it any more
  /// (nothing is sent once the gateway stops).
  void unsubscribeUnlessHeld(const std::string& ability, const std::string& uri);
  /// Returns "ready", "connecting", "idle" or "failed: why" for `ability`.
  [[nodiscard]] std::string stateOf(const std::string& ability) const;
  /// Stores a connected server's tools in the metadata cache.
  void remember(const std::string& ability, const std::vector<mcp::Tool>& tools);

  boost::asio::io_context& io;
  GatewayOptions options;
  GatewayConfig config;
  std::unique_ptr<AsyncHost> host;
  std::unique_ptr<ToolCatalog> catalog;
  std::optional<policy::AuditLog> audit;
  std::vector<std::weak_ptr<GatewaySession>> sessions;
  std::multimap<std::string, RunningCall> running;  ///< by ability
  /// Where prompts and resources go, from the last listing: the client's prompt name to
  /// (ability, the server's name), and a resource URI to its ability.
  std::map<std::string, std::pair<std::string, std::string>> promptRoutes;
  std::map<std::string, std::string> resourceRoutes;
  /// Why each ability that failed to start or stopped is not running.
  std::map<std::string, std::string> failures;
  bool stopped = false;
  std::unique_ptr<boost::asio::steady_timer> retryTimer;
  bool retryPending = false;
  int retries = 0;          ///< retries in a row that left a failure; the pause doubles with each
  bool activating = false;  ///< the host is connecting (a reload or a retry)
  std::function<void()> queued;  ///< the reload waiting for that
  std::function<void(Result<void>)> queuedDone;

  MetadataCache cache;
  std::map<std::string, CachedMetadata> cached;  ///< what the cache held, by ability
  std::set<std::string> wanted;                  ///< the abilities whose servers should run now
  std::set<std::string> connecting;
  std::set<std::string> refreshing;  ///< lazy abilities listed from a stale cache entry
  /// Servers stopped for idleness, by the activation that closes them: until it has, a
  /// request for one waits for it to start again instead of reaching a closing server.
  std::map<std::string, std::uint64_t> stopping;
  std::uint64_t activationsStarted = 0;
  /// An activation of `wanted` asked for while another ran, with its callers.
  bool activatePending = false;
  std::vector<std::function<void(const std::vector<ConnectReport>&)>> activateWaiters;
  /// Callers waiting for a server to connect, by ability.
  std::map<std::string, std::vector<std::function<void(Result<void>)>>> waiters;
  std::map<std::string, int> busy;  ///< requests in flight, by ability
  std::map<std::string, std::chrono::steady_clock::time_point> lastUsed;
  /// Stateless clients' requests that answered input_required and wait for their retry, by
  /// the requestState they gave (see GatewaySession::resumeRound).
  std::map<std::string, std::shared_ptr<GatewaySession>> suspended;
  std::size_t suspendedBytes = 0;  ///< the size of their requests
  std::unique_ptr<boost::asio::steady_timer> idleTimer;
  bool idleCheckPending = false;
};

/// Makes the session for one client of `gateway`.
std::shared_ptr<server::Session> makeSession(const std::shared_ptr<Gateway::Impl>& gateway,
                                             std::shared_ptr<server::Outbox> outbox);

}  // namespace kaja::core::gateway
