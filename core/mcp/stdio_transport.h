#pragma once

#include <sys/types.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "core/mcp/transport.h"
#include "core/process/child_process.h"
#include "core/process/tail_buffer.h"
#include "core/runner/launch_plan.h"

namespace kaja::core::mcp {

/// Limits and names for one stdio connection.
struct StdioOptions {
  std::string serverName = "server";  ///< used in every error ("server 'time'")
  /// A longer message kills the server. Large, so that a big result reaches the output guard
  /// to be cut there; the 4 MB bound of U6 applies to listings, in the Client.
  std::size_t maxLineBytes = 64UL * 1024 * 1024;
  /// Bytes waiting to be written past this (a server that stopped reading its stdin) end the
  /// connection. One message is always accepted when nothing else is waiting.
  std::size_t maxQueuedBytes = 16UL * 1024 * 1024;
  std::size_t stderrTailBytes = 64UL * 1024;   ///< how much of stderr is kept for errors
  std::size_t maxNonJsonLines = 100;           ///< more stray stdout lines end the connection
  std::chrono::milliseconds closeGrace{1000};  ///< per step of close(): stdin EOF, SIGTERM
};

/// MCP over a child's stdin/stdout: one JSON-RPC message per line, both ways. Owns the
/// child (its whole process group) and ends it when the connection ends.
///
/// Lines that are not JSON-RPC (a banner, say) are skipped with a warning; after
/// `maxNonJsonLines` of them the server is killed. A line over `maxLineBytes` kills it
/// too, and so does a write queue past `maxQueuedBytes`. Stderr is kept in a bounded tail buffer
/// whose most telling line (see tellingStderrLine) goes into errors. When the child exits,
/// onClosed reports its exit status or signal and that stderr line.
class StdioTransport final : public Transport, public std::enable_shared_from_this<StdioTransport> {
 public:
  /// Starts `plan` as a child and returns its transport, not yet reading (call start()).
  /// Returns kSpawn when the program cannot be started.
  static Result<std::shared_ptr<StdioTransport>> spawn(boost::asio::io_context& io,
                                                       const LaunchPlan& plan,
                                                       StdioOptions options = {});

  StdioTransport(const StdioTransport&) = delete;
  StdioTransport& operator=(const StdioTransport&) = delete;
  /// Ends the child (if still running) through ChildProcess's destructor.
  ~StdioTransport() override;

  void start(TransportHandlers handlers) override;
  void send(const Message& message) override;
  void close() override;
  [[nodiscard]] bool isOpen() const override { return !finished_; }
  [[nodiscard]] std::string name() const override { return options_.serverName; }
  [[nodiscard]] std::string describe() const override;

  /// Returns the child's pid (and process group id).
  [[nodiscard]] pid_t pid() const { return pid_; }
  /// Returns the last bytes the child wrote to stderr.
  [[nodiscard]] std::string stderrTail() const { return stderrTail_.tail(); }
  /// Returns "stderr (last …):" and the tail, or "" when the child wrote nothing there.
  [[nodiscard]] std::string diagnostics() const override;

 private:
  StdioTransport(boost::asio::io_context& io, std::unique_ptr<ChildProcess> child,
                 StdioOptions options);

  void readStdout();
  void onStdout(std::size_t bytes);
  void handleLine(std::string_view line);
  void readStderr();
  void watchExit();
  void onExited();
  void onStdoutClosed();
  void writeNext();
  void fatal(Error error);
  void escalate(int signal);
  void maybeFinish();
  void finishSoon();
  void finish();
  void drainStderr();
  Error closingError(const ExitStatus& status) const;

  boost::asio::io_context& io_;
  StdioOptions options_;
  std::unique_ptr<ChildProcess> child_;
  pid_t pid_;
  boost::asio::posix::stream_descriptor stdin_;
  boost::asio::posix::stream_descriptor stdout_;
  boost::asio::posix::stream_descriptor stderr_;
  boost::asio::posix::stream_descriptor exitWatch_;
  boost::asio::steady_timer killTimer_;
  boost::asio::steady_timer drainTimer_;
  boost::asio::steady_timer pollTimer_;
  TransportHandlers handlers_;

  std::array<char, 64UL * 1024> stdoutBuffer_{};
  std::array<char, 16UL * 1024> stderrBuffer_{};
  std::string partialLine_;
  TailBuffer stderrTail_;
  // Lines queued while a write is under way, sent together by the next write; both
  // strings keep their capacity, so a steady stream of calls allocates nothing here.
  std::string writeQueue_;
  std::string writeInFlight_;
  bool writing_ = false;
  std::size_t nonJsonLines_ = 0;

  bool started_ = false;
  bool stdoutDone_ = false;
  bool stderrDone_ = false;
  bool stdoutClosedFirst_ = false;
  bool closeRequested_ = false;
  bool finishPosted_ = false;
  bool finished_ = false;
  std::optional<ExitStatus> exitStatus_;
  std::optional<Error> failure_;
};

}  // namespace kaja::core::mcp
