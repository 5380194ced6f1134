#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/error.h"

namespace kaja::core::auth {

/// The redirect target of a browser sign-in (RFC 8252 §7.3): an HTTP listener on
/// 127.0.0.1 with a port the system picks, which takes the one request to /callback that
/// ends the flow. Other requests (a favicon) get 404 and the wait goes on. Owns its socket;
/// closing it (the destructor) refuses later connections.
class LoopbackRedirect {
 public:
  /// Binds 127.0.0.1 on a free port (`port` 0) or on `port`. kIo naming the call on failure.
  static Result<LoopbackRedirect> open(int port = 0);

  LoopbackRedirect(LoopbackRedirect&&) noexcept;
  LoopbackRedirect& operator=(LoopbackRedirect&&) noexcept;
  ~LoopbackRedirect();

  /// Returns "http://127.0.0.1:PORT/callback".
  [[nodiscard]] std::string redirectUri() const;

  /// Whether an answer to /callback is the one waited for (its `state` is kaja's).
  using Accept = std::function<bool(const std::map<std::string, std::string>& query)>;

  /// Waits up to `timeout` for a request to /callback that `accept` takes and returns its
  /// query parameters; the browser is shown a page saying it may be closed. An answer it
  /// does not take (a forged one from another local process, a stale tab) gets 400 and the
  /// wait goes on. kTimeout when no answer came in time; kRefused when only answers it did
  /// not take came. Call it once.
  Result<std::map<std::string, std::string>> wait(std::chrono::milliseconds timeout,
                                                  const Accept& accept = {});

 private:
  struct Impl;
  explicit LoopbackRedirect(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kaja::core::auth
