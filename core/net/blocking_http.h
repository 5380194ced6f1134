#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/net/address_guard.h"
#include "core/net/http_worker.h"

namespace kaja::core::net {

/// The whole of one HTTP answer.
struct HttpReply {
  long status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  ///< names lower case
  std::string body;  ///< at most request.maxBodyBytes; a larger body fails the request

  /// Returns the first value of header `name` (lower case), or "".
  [[nodiscard]] std::string header(std::string_view name) const;
};

/// Runs `request` to its end on an io_context and HttpWorker of its own and returns the
/// answer, whatever its status; redirects are returned, never followed. Every connection
/// goes through the address guard with `policy`. A body over `request.maxBodyBytes` (event
/// stream or not) fails with kProtocol; a failure below HTTP is the worker's Error. Blocks:
/// call it off any io_context thread.
/// With `headOnly`, the request ends once the status and headers are in (the body, even an
/// endless event stream, is not read).
Result<HttpReply> fetchBlocking(HttpRequest request, const AddressPolicy& policy,
                                bool headOnly = false);

}  // namespace kaja::core::net
