#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <utility>

namespace kaja::core {

/// What kind of failure an Error reports; the CLI maps these to exit codes.
enum class ErrorCode {
  kInvalidConfig,  ///< a manifest, persona or secrets file is wrong
  kNotFound,       ///< a named thing (ability, persona, file) does not exist
  kIo,             ///< a filesystem or syscall failure
  kUsage,          ///< the user called a command wrongly
  kSpawn,          ///< a child process could not be started
  kConnect,        ///< a server could not be reached or did not answer
  kProtocol,       ///< a peer sent something that breaks the protocol
  kTimeout,        ///< something did not finish in time
  kRefused,        ///< a policy rule or the user declined
  kInternal,       ///< a bug in kaja
};

/// A failure as a value. `message` is one sentence a user can act on; `context` says
/// where (file:line, server, tool); `detail` is extra text shown only with --verbose.
struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
  std::string context;
  std::string detail;
  /// The peer's JSON-RPC error code when it answered with an error (0 otherwise), so a
  /// gateway can pass it on.
  std::int64_t rpcCode = 0;
  /// The HTTP status a server's answer failed with (401, 403, 500, …), 0 for any other error.
  long httpStatus = 0;

  /// Returns "context: message", or just the message when there is no context.
  [[nodiscard]] std::string describe() const {
    return context.empty() ? message : context + ": " + message;
  }
};

/// The result type used at every module boundary.
template <class T>
using Result = std::expected<T, Error>;

/// Builds an unexpected Error in one expression: `return fail(ErrorCode::kIo, "...")`.
inline std::unexpected<Error> fail(ErrorCode code, std::string message, std::string context = {},
                                   std::string detail = {}) {
  return std::unexpected<Error>(
      Error{code, std::move(message), std::move(context), std::move(detail)});
}

}  // namespace kaja::core
