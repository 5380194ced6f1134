#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "core/error.h"
#include "core/server/session.h"

namespace boost::asio {
class io_context;
}

namespace kaja::core::server {

/// Limits of one stdio connection.
struct StdioFrontOptions {
  /// A longer line is refused with a JSON-RPC error and skipped up to its newline without
  /// being held in memory.
  std::size_t maxMessageBytes = 4UL * 1024 * 1024;
  /// Replies waiting for the client past this stop the reading of its requests until it
  /// has read them.
  std::size_t maxQueuedBytes = 16UL * 1024 * 1024;
  /// At most this much is read from the input at a time (at least 1).
  std::size_t readBufferBytes = 64UL * 1024;
};

/// kaja's server side on a pair of fds (stdin and stdout): newline-delimited JSON-RPC, one
/// Session for the whole connection. Runs on the io_context it is given.
///
/// A line that is not JSON is answered with -32700, a line over `maxMessageBytes` with
/// -32600 (both with id null), and the session goes on. At end of input the session is
/// ended and, once every reply is written, `onDone` is called.
class StdioFront {
 public:
  /// Reads from `inFd` and writes to `outFd`, both duplicated (the originals stay open
  /// and are put in non-blocking mode). Nothing happens before start(). Returns kIo when
  /// an fd cannot be duplicated.
  static Result<std::unique_ptr<StdioFront>> create(boost::asio::io_context& io, int inFd,
                                                    int outFd, SessionFactory factory,
                                                    StdioFrontOptions options = {});
  ~StdioFront();
  StdioFront(const StdioFront&) = delete;
  StdioFront& operator=(const StdioFront&) = delete;

  /// Makes the session and starts reading. `onDone` runs once (on the io_context) after the
  /// input ended or the output failed, the session was ended and every reply written.
  void start(std::function<void()> onDone);
  /// Ends the session now (as at end of input) and stops reading; `onDone` follows once the
  /// replies already queued are written.
  void stop();

  struct Impl;

 private:
  explicit StdioFront(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace kaja::core::server
