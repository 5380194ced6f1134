#include "core/mcp/stdio_transport.h"

#include <fcntl.h>
#include <signal.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "core/process/stderr_line.h"

namespace kaja::core::mcp {
namespace asio = boost::asio;

namespace {

// After the leader exits, whatever still holds stdout is killed; give the pipe this
// long to deliver its last bytes and EOF.
constexpr std::chrono::milliseconds kDrainAfterExit{500};
// How long a server whose stdout closed has to exit by itself before it is stopped.
constexpr std::chrono::milliseconds kExitAfterEof{200};
// Without a pidfd, the child's exit is noticed by polling this often.
constexpr std::chrono::milliseconds kExitPollInterval{50};
// Warnings about stray stdout lines stop after this many, so a flood is not echoed.
constexpr std::size_t kWarnedNonJsonLines = 5;
// A write buffer grown past this by a large message is released after the write.
constexpr std::size_t kKeepWriteCapacity = 256UL * 1024;

std::string formatBytes(std::size_t bytes) {
  constexpr std::size_t kMegabyte = std::size_t{1024} * 1024;
  if (bytes % kMegabyte == 0) return std::to_string(bytes / kMegabyte) + " MB";
  if (bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KB";
  if (bytes > kMegabyte) return std::to_string((bytes + kMegabyte / 2) / kMegabyte) + " MB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

Result<std::shared_ptr<StdioTransport>> StdioTransport::spawn(asio::io_context& io,
                                                              const LaunchPlan& plan,
                                                              StdioOptions options) {
  auto child = ChildProcess::start(plan);
  if (!child) {
    Error error = child.error();
    error.context = options.serverName;
    return std::unexpected(std::move(error));
  }
  return std::shared_ptr<StdioTransport>(
      new StdioTransport(io, std::move(*child), std::move(options)));
}

StdioTransport::StdioTransport(asio::io_context& io, std::unique_ptr<ChildProcess> child,
                               StdioOptions options)
    : io_(io),
      options_(std::move(options)),
      child_(std::move(child)),
      pid_(child_->pid()),
      stdin_(io),
      stdout_(io),
      stderr_(io),
      exitWatch_(io),
      killTimer_(io),
      drainTimer_(io),
      pollTimer_(io),
      stderrTail_(options_.stderrTailBytes) {
  child_->setGracePeriod(options_.closeGrace);
  stdin_.assign(child_->takeStdin().release());
  stdout_.assign(child_->takeStdout().release());
  stderr_.assign(child_->takeStderr().release());
  if (child_->pidfd() >= 0) {
    const int watch = ::fcntl(child_->pidfd(), F_DUPFD_CLOEXEC, 0);
    if (watch >= 0) exitWatch_.assign(watch);
  }
}

StdioTransport::~StdioTransport() {
  boost::system::error_code ignored;
  stdin_.close(ignored);
  stdout_.close(ignored);
  stderr_.close(ignored);
  exitWatch_.close(ignored);
}

std::string StdioTransport::describe() const { return "server '" + options_.serverName + "'"; }

void StdioTransport::start(TransportHandlers handlers) {
  if (started_) return;
  started_ = true;
  handlers_ = std::move(handlers);
  readStdout();
  readStderr();
  watchExit();
}

void StdioTransport::readStdout() {
  stdout_.async_read_some(
      asio::buffer(stdoutBuffer_),
      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t bytes) {
        if (self->finished_) return;
        if (ec) {
          self->onStdoutClosed();
          return;
        }
        self->onStdout(bytes);
      });
}

void StdioTransport::onStdout(std::size_t bytes) {
  std::string_view chunk(stdoutBuffer_.data(), bytes);
  while (!chunk.empty() && !finished_ && !failure_) {
    const auto newline = chunk.find('\n');
    const std::size_t take = newline == std::string_view::npos ? chunk.size() : newline;
    if (partialLine_.size() + take > options_.maxLineBytes) {
      fatal(Error{ErrorCode::kProtocol,
                  describe() + " wrote a line longer than " + formatBytes(options_.maxLineBytes) +
                      " without a newline, so kaja stopped it.",
                  options_.serverName,
                  {}});
      return;
    }
    if (newline == std::string_view::npos) {
      partialLine_.append(chunk);
      break;
    }
    if (partialLine_.empty()) {
      handleLine(chunk.substr(0, newline));
    } else {
      partialLine_.append(chunk.substr(0, newline));
      std::string line = std::move(partialLine_);
      partialLine_.clear();
      handleLine(line);
    }
    chunk.remove_prefix(newline + 1);
  }
  if (!finished_ && !failure_) readStdout();
}

void StdioTransport::handleLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;
  auto messages = parseMessages(line);
  if (!messages) {
    ++nonJsonLines_;
    if (nonJsonLines_ > options_.maxNonJsonLines) {
      fatal(Error{ErrorCode::kProtocol,
                  describe() + " wrote " + std::to_string(nonJsonLines_) +
                      " lines on stdout that are not JSON-RPC (the last: \"" + clip(line, 80) +
                      "\"), so kaja stopped it; it may log to stdout instead of stderr.",
                  options_.serverName, messages.error().message});
      return;
    }
    if (nonJsonLines_ <= kWarnedNonJsonLines && handlers_.onWarning) {
      // "The line is not JSON: …" already quotes the line; other reasons do not.
      const std::string& why = messages.error().message;
      const bool quoted = why.starts_with("The line is not JSON");
      handlers_.onWarning(
          describe() + " wrote a line on stdout that is not JSON-RPC; kaja skipped it: " +
          (quoted ? "\"" + clip(line, 120) + "\"" : why + " (\"" + clip(line, 80) + "\")") +
          (nonJsonLines_ == kWarnedNonJsonLines ? " (further ones are not shown)" : ""));
    }
    return;
  }
  for (auto& message : *messages) {
    if (finished_ || failure_) return;
    if (handlers_.onMessage) handlers_.onMessage(std::move(message));
  }
}

void StdioTransport::readStderr() {
  stderr_.async_read_some(
      asio::buffer(stderrBuffer_),
      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t bytes) {
        if (ec) {
          self->stderrDone_ = true;
          self->maybeFinish();
          return;
        }
        self->stderrTail_.append(std::string_view(self->stderrBuffer_.data(), bytes));
        if (!self->finished_) self->readStderr();
      });
}

void StdioTransport::watchExit() {
  if (exitWatch_.is_open()) {
    exitWatch_.async_wait(asio::posix::stream_descriptor::wait_read,
                          [self = shared_from_this()](const boost::system::error_code& ec) {
                            if (!ec && !self->finished_) self->onExited();
                          });
    return;
  }
  pollTimer_.expires_after(kExitPollInterval);
  pollTimer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->finished_) return;
    if (self->child_->exitStatus()) {
      self->onExited();
    } else {
      self->watchExit();
    }
  });
}

void StdioTransport::onExited() {
  exitStatus_ = child_->exitStatus();
  if (!exitStatus_) return;  // a spurious wakeup; cannot happen with pidfds
  // The leader is a zombie until finish() reaps it, so its group id is still ours.
  child_->killGroup(SIGKILL);
  maybeFinish();
  if (finishPosted_) return;
  // Both pipes reach EOF once the killed group is gone, unless something escaped the group
  // and holds them; then this timer ends the wait.
  drainTimer_.expires_after(kDrainAfterExit);
  drainTimer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec && !self->finished_) self->finishSoon();
  });
}

void StdioTransport::onStdoutClosed() {
  stdoutDone_ = true;
  // The spec wants a newline after every message, but a last one without it is still
  // worth delivering.
  if (!partialLine_.empty() && !failure_) {
    const std::string last = std::move(partialLine_);
    partialLine_.clear();
    handleLine(last);
  }
  if (exitStatus_) {
    maybeFinish();
    return;
  }
  // A server without stdout cannot answer; end it unless that is already under way.
  // Stdout closes just before the exit is visible when a server simply exits, so give the
  // exit a moment to show before treating this as a live server that shut its stdout.
  if (!failure_ && !closeRequested_) {
    killTimer_.expires_after(kExitAfterEof);
    killTimer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->finished_ || self->exitStatus_ || self->child_->exitStatus()) return;
      self->stdoutClosedFirst_ = true;
      self->escalate(SIGTERM);
    });
  }
}

void StdioTransport::send(const Message& message) {
  if (finished_ || closeRequested_ || failure_) return;
  const std::size_t waiting = writeQueue_.size();
  serializeTo(message, writeQueue_);
  writeQueue_ += '\n';
  if (waiting > 0 && writeQueue_.size() > options_.maxQueuedBytes) {
    fatal(Error{ErrorCode::kConnect,
                describe() + " stopped reading its stdin: more than " +
                    formatBytes(options_.maxQueuedBytes) +
                    " of messages from kaja are waiting for it, so kaja stopped it.",
                options_.serverName,
                {}});
    return;
  }
  if (!writing_) writeNext();
}

void StdioTransport::writeNext() {
  if (writeQueue_.empty() || !stdin_.is_open()) {
    writing_ = false;
    return;
  }
  writing_ = true;
  // Everything queued goes in one write; the queue is free again for what comes next.
  writeInFlight_.swap(writeQueue_);
  asio::async_write(stdin_, asio::buffer(writeInFlight_),
                    [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                      if (self->finished_) return;
                      self->writeInFlight_.clear();
                      // One huge message should not pin its buffer for the connection's life.
                      if (self->writeInFlight_.capacity() > kKeepWriteCapacity) {
                        self->writeInFlight_.shrink_to_fit();
                      }
                      if (ec) {
                        self->writing_ = false;
                        self->writeQueue_.clear();
                        // EPIPE nearly always means the server exited; its exit status
                        // makes the better error, so only a live server is failed here.
                        if (ec != asio::error::operation_aborted && !self->child_->exitStatus()) {
                          self->fatal(Error{ErrorCode::kConnect,
                                            self->describe() + " stopped reading its stdin (" +
                                                ec.message() + "), so kaja stopped it.",
                                            self->options_.serverName,
                                            {}});
                        }
                        return;
                      }
                      self->writeNext();
                    });
}

void StdioTransport::fatal(Error error) {
  if (finished_ || failure_) return;
  failure_ = std::move(error);
  // Nothing more is read from a failed server, so its exit alone may finish the close.
  stdoutDone_ = true;
  writeQueue_.clear();
  child_->killGroup(SIGKILL);
  if (!started_) finishSoon();
}

void StdioTransport::close() {
  if (finished_ || closeRequested_) return;
  closeRequested_ = true;
  writeQueue_.clear();
  boost::system::error_code ignored;
  stdin_.close(ignored);
  if (!started_) {
    finishSoon();
    return;
  }
  killTimer_.expires_after(options_.closeGrace);
  killTimer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec && !self->finished_) self->escalate(SIGTERM);
  });
}

void StdioTransport::escalate(int signal) {
  child_->killGroup(signal);
  if (signal == SIGKILL) return;
  killTimer_.expires_after(options_.closeGrace);
  killTimer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec && !self->finished_) self->escalate(SIGKILL);
  });
}

void StdioTransport::drainStderr() {
  if (stderrDone_ || !stderr_.is_open()) return;
  // Only after the drain timer: something outside the group still holds stderr. Read
  // what is there now, bounded, into a buffer of its own (a pending read owns the other).
  std::array<char, 16UL * 1024> buffer{};
  boost::system::error_code ec;
  stderr_.non_blocking(true, ec);
  for (int round = 0; round < 16 && !ec; ++round) {
    const std::size_t bytes = stderr_.read_some(asio::buffer(buffer), ec);
    if (bytes > 0) stderrTail_.append(std::string_view(buffer.data(), bytes));
  }
}

void StdioTransport::maybeFinish() {
  if (exitStatus_ && stdoutDone_ && stderrDone_) finishSoon();
}

void StdioTransport::finishSoon() {
  if (finishPosted_) return;
  finishPosted_ = true;
  // Posted, so onClosed never runs inside close() or send().
  asio::post(io_, [self = shared_from_this()] { self->finish(); });
}

void StdioTransport::finish() {
  if (finished_) return;
  finished_ = true;
  killTimer_.cancel();
  drainTimer_.cancel();
  pollTimer_.cancel();
  drainStderr();
  boost::system::error_code ignored;
  stdin_.close(ignored);
  stdout_.close(ignored);
  stderr_.close(ignored);
  exitWatch_.close(ignored);
  writeQueue_.clear();
  // The child has exited, or is killed now: terminate() returns without waiting long.
  const ExitStatus status = child_->terminate(std::chrono::milliseconds(0));
  handlers_.endWith(closingError(status));
}

std::string StdioTransport::diagnostics() const {
  if (stderrTail_.totalBytes() == 0) return {};
  return "stderr (last " + formatBytes(options_.stderrTailBytes) + "):\n" + stderrTail_.tail();
}

Error StdioTransport::closingError(const ExitStatus& status) const {
  // The last line is often a runtime's banner ("Node.js v20.1.0") or a stack frame; the
  // line that says what went wrong is the one worth a user's eyes.
  const std::string lastLine = clip(stderrTail_.lastLine(), 300);
  const std::string telling = clip(
      tellingStderrLine(stderrTail_.tail(), stderrTail_.totalBytes() > options_.stderrTailBytes),
      300);
  std::string stderrNote;
  if (!telling.empty()) {
    stderrNote = telling == lastLine ? " (its last stderr line: \"" + telling + "\")"
                                     : " (its stderr says: \"" + telling + "\")";
  }
  std::string detail = "The server " + status.describe() + ".";
  if (const std::string stderrText = diagnostics(); !stderrText.empty()) {
    detail += "\n" + stderrText;
  }
  if (closeRequested_) {
    return Error{ErrorCode::kConnect, describe() + " was closed.", options_.serverName, detail};
  }
  if (failure_) {
    Error error = *failure_;
    error.detail = error.detail.empty() ? detail : error.detail + "\n" + detail;
    return error;
  }
  if (stdoutClosedFirst_) {
    return Error{ErrorCode::kConnect,
                 describe() + " closed its stdout, so kaja stopped it" + stderrNote + ".",
                 options_.serverName, detail};
  }
  return Error{ErrorCode::kConnect, describe() + " " + status.describe() + stderrNote + ".",
               options_.serverName, detail};
}

}  // namespace kaja::core::mcp
