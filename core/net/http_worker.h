#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/net/address_guard.h"

namespace kaja::core::net {

/// One HTTP request for HttpWorker. Header values may hold keys: they are sent, never
/// logged or put into errors.
struct HttpRequest {
  std::string method = "GET";
  std::string url;  ///< absolute http(s)
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  /// Limit for connecting, the headers and the whole body; 0 means none. A server that
  /// stalls mid-body fails within it (U3).
  std::chrono::milliseconds timeout{15000};
  /// Once the response turns out to be text/event-stream, `timeout` no longer applies and
  /// the stream instead fails after this long without a byte; 0 means it may stay silent.
  std::chrono::milliseconds streamIdleTimeout{0};
  /// A hard limit on the whole request, event stream or not, that no byte received
  /// extends; 0 means none. Closing requests use it so a server cannot hold them open.
  std::chrono::milliseconds totalTimeout{0};
  /// A larger body that is not an event stream fails the request.
  std::size_t maxBodyBytes = 16UL * 1024 * 1024;
};

/// How many body bytes of one request may wait for the io_context before the transfer is
/// paused (curl stops reading the socket); it resumes once the reader is below a quarter.
inline constexpr std::size_t kMaxQueuedBodyBytes = 1024UL * 1024;

/// Returns true when `value` may be sent as an HTTP header value that came from a server:
/// 1 to `maxBytes` visible ASCII characters (0x21 to 0x7E), so no control character, space
/// or line break can reach a request line.
bool isVisibleAscii(std::string_view value, std::size_t maxBytes);

/// The status line and headers of a response.
struct HttpHead {
  long status = 0;
  std::string contentType;  ///< media type only, lower case ("text/event-stream")
  std::vector<std::pair<std::string, std::string>> headers;  ///< names lower case

  /// Returns the first value of header `name` (lower case), or "".
  [[nodiscard]] std::string header(std::string_view name) const;
  /// Returns true for a text/event-stream response.
  [[nodiscard]] bool isEventStream() const { return contentType == "text/event-stream"; }
};

/// What a request reports. All run on the io_context thread, in order: onHead once (not
/// when the request fails before headers), onBody per chunk, then onDone exactly once.
/// A reader that falls behind pauses the transfer: at most kMaxQueuedBodyBytes of body wait
/// for onBody at any time, whatever the server sends.
struct HttpHandlers {
  std::function<void(const HttpHead&)> onHead;
  std::function<void(std::string_view chunk)> onBody;
  /// Success, or an Error whose message is a clause to put after "…": kTimeout, kConnect
  /// ("Connection refused"), kRefused (the address guard, a whole sentence) or kProtocol.
  std::function<void(Result<void>)> onDone;
};

/// Runs HTTP requests with libcurl's multi interface on a thread of its own and posts
/// every result onto an io_context.
///
/// A worker thread rather than driving curl's sockets from Asio: the multi-socket API
/// needs socket open/close bookkeeping, timer callbacks and care around sockets curl
/// closes while Asio still watches them; a thread that loops on curl_multi_poll needs
/// none of that, keeps blocking getaddrinfo (the address guard) off the io_context, and
/// costs one thread per remote connection.
///
/// Every connection goes through the address guard: the host is resolved and checked
/// once per host:port, curl is pinned to the checked address with CURLOPT_RESOLVE, and
/// its socket callback refuses any other address, so DNS rebinding cannot switch it.
/// Proxies from the environment are ignored, redirects are never followed by curl, and
/// only http and https are allowed. Sockets are O_CLOEXEC. A header holding a control
/// character is never sent: the request fails with kRefused naming the header.
///
/// Use start() and cancel() from the io_context's thread only.
class HttpWorker {
 public:
  /// Starts the worker thread. Connections obey `policy`.
  HttpWorker(boost::asio::io_context& io, AddressPolicy policy);
  /// Aborts every request and joins the thread; no handler runs afterwards.
  ~HttpWorker();
  HttpWorker(const HttpWorker&) = delete;
  HttpWorker& operator=(const HttpWorker&) = delete;

  /// Starts `request`; returns its id for cancel().
  std::uint64_t start(HttpRequest request, HttpHandlers handlers);

  /// Aborts request `id`; none of its handlers runs afterwards. Unknown ids are ignored.
  void cancel(std::uint64_t id);

  /// Returns true while request `id` has not reported onDone and was not cancelled.
  [[nodiscard]] bool isActive(std::uint64_t id) const;

 private:
  struct Delivery;
  struct Thread;

  std::shared_ptr<Delivery> delivery_;
  std::unique_ptr<Thread> thread_;
  std::uint64_t nextId_ = 1;
};

}  // namespace kaja::core::net
