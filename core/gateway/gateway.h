#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/gateway/tool_catalog.h"
#include "core/host/host_types.h"
#include "core/policy/audit_log.h"
#include "core/server/session.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace kaja::core::gateway {

/// What the gateway offers: one persona's abilities, how to run them, and their folders.
struct GatewayConfig {
  std::string persona;
  std::vector<policy::CallScope> scopes;  ///< one per ability the persona gives
  std::vector<Activation> activations;    ///< the abilities that can run here
  std::vector<std::string> skipped;       ///< abilities left out, with why
};

/// Settings that do not change while the gateway runs.
struct GatewayOptions {
  NameStyle names = NameStyle::kPrefixed;
  /// Offer one tool, "mcp", that searches, describes and calls the others (V1).
  bool proxy = false;
  std::string home;
  policy::PipelineOptions pipeline;
  std::string auditDir;  ///< the data dir, where audit.jsonl goes; "" writes none
  /// Where servers' tool lists are kept between runs (metadata_cache.h); "" keeps none, and
  /// then every lazy server starts once to list its tools.
  std::string cacheDir;
  HostOptions host;
  std::string serverName = "kaja";
  std::string serverVersion = KAJA_VERSION;
  /// How long a person gets to answer an approval asked through the client.
  std::chrono::milliseconds approvalTimeout{300000};
  /// Reports what happens (servers connecting, failing, reloads), for stderr or a log.
  std::function<void(const std::string&)> log;
};

/// The active persona as one MCP server: every client session it makes shares one pool of
/// servers (an AsyncHost), one tool catalog and one audit log, and each call goes through
/// the CallPipeline with approvals asked of that session's client. Runs on `io`; every
/// method must be called on its thread.
class Gateway {
 public:
  Gateway(boost::asio::io_context& io, GatewayOptions options);
  ~Gateway();
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  /// Connects `config`'s abilities; `done` gets an error only when the gateway cannot serve
  /// at all (two bare names collide). Servers that fail are reported through options.log.
  void start(GatewayConfig config, std::function<void(Result<void>)> done);
  /// Moves to a new configuration without a restart: servers whose launch did not change
  /// are kept, new roots are sent, and every session is told the tools changed.
  void reload(GatewayConfig config, std::function<void(Result<void>)> done);
  /// Returns the pid of `ability`'s stdio server while it is connected.
  [[nodiscard]] std::optional<pid_t> serverPid(const std::string& ability) const;
  /// Returns the factory a front uses to make a session per client.
  server::SessionFactory sessions();
  /// Ends every session and server; `done` runs when they are gone.
  void stop(std::function<void()> done);

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace kaja::core::gateway
