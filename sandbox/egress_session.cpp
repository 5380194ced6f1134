// One egress proxy connection: read the head, check the destination, dial it, relay.
#include "sandbox/egress_session.h"

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <cstdio>

#include "sandbox/egress_policy.h"

namespace kaja::sandbox {

namespace asio = boost::asio;
using boost::system::error_code;
using core::net::IpAddress;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t kRelayBuffer = std::size_t{16} * 1024;
const std::string kUnreadable = "kaja's sandbox proxy could not read the request: ";
// How long an answered client may keep sending before the proxy hangs up on it.
constexpr std::chrono::milliseconds kLinger{2000};

const char* reasonPhrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Error";
  }
}

IpAddress fromAsio(const asio::ip::address& address) {
  IpAddress ip;
  if (address.is_v4()) {
    const auto bytes = address.to_v4().to_bytes();
    std::copy(bytes.begin(), bytes.end(), ip.bytes.begin());
  } else {
    ip.v6 = true;
    const auto bytes = address.to_v6().to_bytes();
    std::copy(bytes.begin(), bytes.end(), ip.bytes.begin());
  }
  return ip;
}

tcp::endpoint toEndpoint(const IpAddress& ip, std::uint16_t port) {
  if (!ip.v6) {
    asio::ip::address_v4::bytes_type bytes;
    std::copy_n(ip.bytes.begin(), 4, bytes.begin());
    return {asio::ip::address_v4(bytes), port};
  }
  asio::ip::address_v6::bytes_type bytes;
  std::copy(ip.bytes.begin(), ip.bytes.end(), bytes.begin());
  return {asio::ip::address_v6(bytes), port};
}

}  // namespace

EgressSession::EgressSession(std::shared_ptr<EgressProxy::Shared> shared, UnixSocket client,
                             std::uint64_t id)
    : shared_(std::move(shared)),
      client_(std::move(client)),
      origin_(client_.get_executor()),
      resolver_(client_.get_executor()),
      timer_(client_.get_executor()),
      id_(id) {
  ++shared_->active;
}

EgressSession::~EgressSession() {
  --shared_->active;
  std::lock_guard lock(shared_->mutex);
  shared_->sessions.erase(id_);
}

void EgressSession::start() {
  arm(shared_->options.requestTimeout);
  asio::async_read_until(client_, asio::dynamic_buffer(head_, kMaxRequestHead), "\r\n\r\n",
                         [self = shared_from_this()](const error_code& error, std::size_t size) {
                           self->onHead(error, size);
                         });
}

void EgressSession::refuseBusy() {
  ++shared_->busy;
  answer(503, "kaja's sandbox proxy has too many open connections; try again shortly.");
}

void EgressSession::close() {
  if (phase_ == Phase::kClosed) return;
  phase_ = Phase::kClosed;
  error_code ignored;
  timer_.cancel();
  resolver_.cancel();
  client_.close(ignored);
  origin_.close(ignored);
}

void EgressSession::onHead(const error_code& error, std::size_t size) {
  if (phase_ != Phase::kHead) return;
  if (error == asio::error::not_found)
    return badRequest(kUnreadable + "its head is larger than 16 KiB.");
  if (error) {
    if (!head_.empty() && error == asio::error::eof) {
      return badRequest(kUnreadable + "the connection ended before its head did.");
    }
    return close();
  }
  auto parsed = parseProxyRequest(std::string_view(head_).substr(0, size));
  if (!parsed) return badRequest(parsed.error().message);
  request_ = std::move(*parsed);
  head_.erase(0, size);  // what is left came after the head: a body, or tunnelled bytes
  dial();
}

void EgressSession::dial() {
  phase_ = Phase::kDial;
  arm(shared_->options.connectTimeout);
  const auto& allow = shared_->options.allowPrivate;
  if (const auto literal = core::net::parseIpAddress(request_.host)) {
    return checkAndConnect({*literal});
  }
  if (auto ok = checkEgressName(request_.host, allow); !ok) return refuse(ok.error().message);
  // No AI_ADDRCONFIG: every address the name has is checked, configured here or not.
  resolver_.async_resolve(request_.host, std::to_string(request_.port),
                          tcp::resolver::numeric_service,
                          [self = shared_from_this()](const error_code& error,
                                                      const tcp::resolver::results_type& results) {
                            self->onResolved(error, results);
                          });
}

void EgressSession::onResolved(const error_code& error,
                               const tcp::resolver::results_type& results) {
  if (phase_ != Phase::kDial) return;
  if (error || results.empty()) {
    return unreachable(502, "kaja's sandbox proxy could not resolve \"" + request_.host + "\".");
  }
  std::vector<IpAddress> addresses;
  for (const auto& entry : results) addresses.push_back(fromAsio(entry.endpoint().address()));
  checkAndConnect(addresses);
}

void EgressSession::checkAndConnect(const std::vector<IpAddress>& addresses) {
  std::vector<tcp::endpoint> endpoints;
  // Every address is checked, not only the one dialled: a name that mixes a public and a
  // private address is hostile.
  for (const auto& address : addresses) {
    if (auto ok = checkEgressAddress(request_.host, address, shared_->options.allowPrivate); !ok) {
      return refuse(ok.error().message);
    }
    const auto endpoint = toEndpoint(dialAddress(address), request_.port);
    if (std::ranges::find(endpoints, endpoint) == endpoints.end()) endpoints.push_back(endpoint);
  }
  // The endpoints are the checked addresses themselves: nothing is resolved again.
  asio::async_connect(
      origin_, endpoints,
      [self = shared_from_this()](const error_code& error, const tcp::endpoint& /*used*/) {
        self->onConnected(error);
      });
}

void EgressSession::onConnected(const error_code& error) {
  if (phase_ != Phase::kDial) return;
  if (error) {
    return unreachable(502, "kaja's sandbox proxy could not connect to " + request_.host + ":" +
                                std::to_string(request_.port) + " (" + error.message() + ").");
  }
  error_code ignored;
  origin_.set_option(tcp::no_delay(true), ignored);
  phase_ = Phase::kRelay;
  // From here the timer is the idle one, even while the first bytes are still on their way.
  lastActivity_ = std::chrono::steady_clock::now();
  if (!request_.tunnel) {
    ++shared_->forwarded;
    return sendToOrigin(request_.originHead + head_);
  }
  ++shared_->tunnels;
  reply_ = "HTTP/1.1 200 Connection established\r\n\r\n";
  asio::async_write(client_, asio::buffer(reply_),
                    [self = shared_from_this()](const error_code& error, std::size_t) {
                      if (self->phase_ != Phase::kRelay) return;
                      if (error) return self->close();
                      self->sendToOrigin(std::move(self->head_));
                    });
}

void EgressSession::sendToOrigin(std::string bytes) {
  reply_ = std::move(bytes);
  head_.clear();
  head_.shrink_to_fit();
  if (reply_.empty()) return relay();
  asio::async_write(origin_, asio::buffer(reply_),
                    [self = shared_from_this()](const error_code& error, std::size_t) {
                      if (self->phase_ != Phase::kRelay) return;
                      if (error) return self->close();
                      self->reply_.clear();
                      self->reply_.shrink_to_fit();
                      self->relay();
                    });
}

void EgressSession::relay() {
  buffers_ = std::make_unique<char[]>(2 * kRelayBuffer);
  lastActivity_ = std::chrono::steady_clock::now();
  arm(shared_->options.idleTimeout);
  pump(client_, origin_, buffers_.get(), upDone_);
  pump(origin_, client_, buffers_.get() + kRelayBuffer, downDone_);
}

template <class From, class To>
void EgressSession::pump(From& from, To& to, char* buffer, bool& done) {
  from.async_read_some(
      asio::buffer(buffer, kRelayBuffer), [self = shared_from_this(), &from, &to, buffer, &done](
                                              const error_code& error, std::size_t size) {
        if (self->phase_ != Phase::kRelay) return;
        if (error == asio::error::eof) {
          // Half-close: the other side may still answer.
          error_code ignored;
          to.shutdown(asio::socket_base::shutdown_send, ignored);
          done = true;
          if (self->upDone_ && self->downDone_) self->close();
          return;
        }
        if (error) return self->close();
        self->lastActivity_ = std::chrono::steady_clock::now();
        asio::async_write(to, asio::buffer(buffer, size),
                          [self, &from, &to, buffer, &done](const error_code& error, std::size_t) {
                            if (self->phase_ != Phase::kRelay) return;
                            if (error) return self->close();
                            self->pump(from, to, buffer, done);
                          });
      });
}

void EgressSession::arm(std::chrono::milliseconds after) {
  const auto generation = ++timerGeneration_;
  timer_.expires_after(after);
  timer_.async_wait([self = shared_from_this(), generation](const error_code& error) {
    if (!error && generation == self->timerGeneration_) self->onTimer();
  });
}

void EgressSession::onTimer() {
  switch (phase_) {
    case Phase::kDial: {
      const auto seconds = std::chrono::duration<double>(shared_->options.connectTimeout).count();
      char text[32];
      std::snprintf(text, sizeof text, "%g", seconds);
      return unreachable(504, "kaja's sandbox proxy got no answer from " + request_.host + ":" +
                                  std::to_string(request_.port) + " within " + text + " s.");
    }
    case Phase::kRelay: {
      const auto due = lastActivity_ + shared_->options.idleTimeout;
      const auto now = std::chrono::steady_clock::now();
      if (due <= now) return close();
      return arm(std::chrono::duration_cast<std::chrono::milliseconds>(due - now) +
                 std::chrono::milliseconds(1));
    }
    case Phase::kHead:
    case Phase::kAnswering:
    case Phase::kClosed:
      return close();
  }
}

void EgressSession::answer(int status, const std::string& body) {
  phase_ = Phase::kAnswering;
  error_code ignored;
  resolver_.cancel();
  origin_.close(ignored);
  arm(std::min(shared_->options.requestTimeout, kLinger));
  reply_ = "HTTP/1.1 " + std::to_string(status) + " " + reasonPhrase(status) +
           "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
           std::to_string(body.size() + 1) + "\r\nConnection: close\r\n\r\n" + body + "\n";
  asio::async_write(client_, asio::buffer(reply_),
                    [self = shared_from_this()](const error_code& error, std::size_t) {
                      if (self->phase_ != Phase::kAnswering) return;
                      if (error) return self->close();
                      self->drainThenClose();
                    });
}

// Closing with unread bytes would reset the connection and could lose the answer, so the
// proxy reads and drops what the client still sends, until it stops or kLinger passes.
void EgressSession::drainThenClose() {
  error_code ignored;
  client_.shutdown(asio::socket_base::shutdown_send, ignored);
  head_.clear();
  head_.resize(4096);
  client_.async_read_some(asio::buffer(head_),
                          [self = shared_from_this()](const error_code& error, std::size_t) {
                            if (self->phase_ != Phase::kAnswering) return;
                            if (error) return self->close();
                            self->drainThenClose();
                          });
}

void EgressSession::badRequest(const std::string& why) {
  ++shared_->badRequests;
  shared_->log("egress: 400 " + why);
  answer(400, why);
}

void EgressSession::refuse(const std::string& why) {
  ++shared_->refused;
  shared_->log("egress: 403 " + request_.summary + ": " + why);
  answer(403, why);
}

void EgressSession::unreachable(int status, const std::string& why) {
  ++shared_->failed;
  answer(status, why);
}

}  // namespace kaja::sandbox
