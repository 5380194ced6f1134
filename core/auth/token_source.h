#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/auth/oauth_flow.h"
#include "core/manifest/secrets.h"
#include "core/runner/launch_plan.h"

namespace kaja::core::auth {

/// The OAuth tokens one remote connection sends (T9), and how it gets new ones when the
/// server refuses them: a refresh, or (where a person or a headless follower is at hand) a
/// new sign-in through its OAuthFlow. Thread-safe; new tokens are fetched on a thread of
/// its own, never on the connection's io_context.
class TokenSource : public std::enable_shared_from_this<TokenSource> {
 public:
  struct Options {
    /// Sign in again when a refresh cannot help (no tokens yet, a refused refresh, a 403
    /// asking for more scopes); otherwise such a challenge fails the request.
    bool signInOnChallenge = false;
    int maxSignIns = 3;  ///< sign-ins over the source's life, so a server cannot loop it
    /// Called with every new record (to save it); on the thread that fetched it.
    std::function<void(const OAuthRecord&)> onNewTokens;
    /// Called with the scopes a 403 `insufficient_scope` asked for when the source does not
    /// sign in itself, so the next `kaja login` asks for them too.
    std::function<void(const std::string& scopes)> onScopeWanted;
    /// Gets new tokens in place of `current` when a request was refused with 401 (or the
    /// token nears its expiry); by default the flow's refresh(). kaja's own re-reads the
    /// secrets file first, under its lock, so tokens another kaja got meanwhile are used
    /// rather than refreshed twice.
    std::function<Result<OAuthRecord>(const OAuthRecord& current)> refresher;
    /// A token that expires within this is refreshed before a connection starts with it.
    std::chrono::seconds refreshMargin{60};
  };

  /// Returns a source that starts with `record` (nullopt: no tokens yet).
  static std::shared_ptr<TokenSource> make(OAuthFlow flow, std::optional<OAuthRecord> record,
                                           Options options);
  /// Waits for the fetch under way, if any.
  ~TokenSource();
  TokenSource(const TokenSource&) = delete;
  TokenSource& operator=(const TokenSource&) = delete;

  /// Returns the Authorization header to send now, or none without a token.
  std::vector<std::pair<std::string, std::string>> headers();

  /// RemotePlan::onAuthChallenge: gets new tokens on the source's thread, then calls
  /// `retry(true)`, or `retry(false)` when none could be had.
  void onChallenge(long status, const std::string& challenge, std::function<void(bool)> retry);

  /// Sets `plan`'s freshHeaders and onAuthChallenge to this source (which they keep alive),
  /// and its headers to the current ones, refreshed first (blocking) when they are due.
  void attach(RemotePlan& plan);

  /// Returns the current record, if any.
  [[nodiscard]] std::optional<OAuthRecord> record() const;

  /// Returns the last error of getting new tokens ("" when none failed).
  [[nodiscard]] std::string lastError() const;

 private:
  TokenSource(OAuthFlow flow, std::optional<OAuthRecord> record, Options options);
  // On the worker: new tokens after a challenge seen at `generation`; true when there are.
  bool renew(long status, const std::string& challenge, std::uint64_t generation);
  void startWorker(std::function<void()> job);
  // With mutex_ held: the record nears its expiry and can be refreshed.
  [[nodiscard]] bool due() const;
  // With mutex_ held: the Authorization header of the record, or none.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> current() const;

  mutable std::mutex mutex_;  ///< guards record_, generation_, lastError_, jobs
  std::mutex flowMutex_;      ///< one fetch at a time
  OAuthFlow flow_;
  std::optional<OAuthRecord> record_;
  std::uint64_t generation_ = 0;  ///< counts new records
  std::string lastError_;
  Options options_;
  int signIns_ = 0;
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Worker> workers_;
};

}  // namespace kaja::core::auth
