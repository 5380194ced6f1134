#pragma once
// The parts of Gateway that its sessions share. Included by gateway*.cpp only.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/gateway/gateway.h"
#include "core/host/async_host.h"

namespace kaja::core::gateway {

class GatewaySession;

/// One client request running on an ability, so that a server's own request made meanwhile
/// (elicitation, sampling) goes to that client, on that request's stream.
struct RunningCall {
  std::weak_ptr<GatewaySession> session;
  mcp::Json requestId;
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
                       const mcp::Json& params, std::function<void(Result<mcp::Json>)> respond);
  void onServerNotification(const std::string& ability, const mcp::Notification& notification);
  /// Starts again, after a growing pause, the abilities that failed or stopped.
  void scheduleRetry();
  /// Moves to `next` (see Gateway::reload), after any activation that is running.
  void reload(GatewayConfig next, std::function<void(Result<void>)> done);
  /// Runs the reload that waited for the last activation, if any.
  void runQueued();
  /// Returns the abilities whose servers announced `capability` (resources, prompts, …).
  [[nodiscard]] std::vector<std::string> abilitiesWith(const std::string& capability) const;

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
};

/// Makes the session for one client of `gateway`.
std::shared_ptr<server::Session> makeSession(const std::shared_ptr<Gateway::Impl>& gateway,
                                             std::shared_ptr<server::Outbox> outbox);

}  // namespace kaja::core::gateway
