#include "core/server/http_front.h"

#include <algorithm>
#include <array>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "core/server/http_front_impl.h"

namespace kaja::core::server {
namespace asio = boost::asio;

namespace {

// A refused connection after its reply: what the client sent is read and dropped until it
// closes (for at most a second), since closing with its request unread would reset the
// connection, and many clients then lose the reply.
struct Draining {
  Draining(std::shared_ptr<asio::ip::tcp::socket> socket, asio::steady_timer timer,
           std::shared_ptr<std::size_t> count)
      : socket(std::move(socket)), timer(std::move(timer)), count(std::move(count)) {
    ++*this->count;
  }
  ~Draining() { --*count; }
  Draining(const Draining&) = delete;
  Draining& operator=(const Draining&) = delete;
  std::shared_ptr<asio::ip::tcp::socket> socket;
  asio::steady_timer timer;
  std::shared_ptr<std::size_t> count;  ///< the refused connections still draining
  std::array<char, 4096> sink{};
};

// Refused connections drained at once, at most: past this a flood of them is closed at once.
constexpr std::size_t kMaxDraining = 64;

void drainThenClose(const std::shared_ptr<Draining>& draining) {
  draining->socket->async_read_some(asio::buffer(draining->sink),
                                    [draining](const boost::system::error_code& ec, std::size_t) {
                                      if (ec) {
                                        draining->timer.cancel();
                                        boost::system::error_code ignored;
                                        draining->socket->close(ignored);
                                        return;
                                      }
                                      drainThenClose(draining);
                                    });
}

}  // namespace
using asio::ip::tcp;

Result<std::unique_ptr<HttpFront>> HttpFront::create(asio::io_context& io, SessionFactory factory,
                                                     HttpFrontOptions options) {
  std::string host = options.host;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec) {
    return fail(ErrorCode::kUsage, "'" + options.host +
                                       "' is not an IP address; give kaja one to listen on, such "
                                       "as 127.0.0.1 or ::1.");
  }
  auto impl = std::make_shared<Impl>(io, std::move(factory), std::move(options));
  const tcp::endpoint endpoint(address, impl->options.port);
  const auto where = impl->options.host + ":" + std::to_string(impl->options.port);
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return fail(ErrorCode::kIo, "kaja cannot listen on " + where + ": " + ec.message() + ".");
  }
  impl->boundPort = impl->acceptor.local_endpoint(ec).port();
  return std::unique_ptr<HttpFront>(new HttpFront(std::move(impl)));
}

HttpFront::HttpFront(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

// stop() reports errors as values; only an allocation failure could throw, and then
// ending the process is right.
// NOLINTNEXTLINE(bugprone-exception-escape)
HttpFront::~HttpFront() { impl_->stop(); }

void HttpFront::start() {
  impl_->accept();
  impl_->sweep();
}

void HttpFront::stop() { impl_->stop(); }

std::uint16_t HttpFront::port() const { return impl_->boundPort; }

std::size_t HttpFront::sessionCount() const {
  return impl_->sessions.size() + impl_->statelessSessions.size();
}

std::size_t HttpFront::connectionCount() const { return impl_->connections.size(); }

void HttpFront::Impl::accept() {
  if (stopped) return;
  acceptor.async_accept(
      [self = shared_from_this()](const boost::system::error_code& ec, tcp::socket socket) {
        if (self->stopped) return;
        if (!ec) {
          if (self->connections.size() >= self->options.maxConnections) self->makeRoom();
          if (self->connections.size() >= self->options.maxConnections) {
            // Over the limit, with every connection carrying a call, a new one is told so
            // and closed.
            static const std::string kBusy = [] {
              const std::string body =
                  R"({"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"kaja has as )"
                  R"(many connections as it takes, each with a call in progress; try again )"
                  R"(shortly."}})";
              return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                     "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n" + body;
            }();
            self->refuseBusy(std::make_shared<asio::ip::tcp::socket>(std::move(socket)), kBusy);
          } else {
            const std::uint64_t id = self->nextConnection++;
            auto connection =
                std::make_shared<HttpConnection>(std::move(socket), *self, self->options, id);
            self->connections.emplace(id, connection);
            connection->start();
          }
        }
        self->accept();
      });
}

void HttpFront::Impl::refuseBusy(const std::shared_ptr<asio::ip::tcp::socket>& socket,
                                 const std::string& reply) {
  if (*drainingCount >= kMaxDraining) {
    boost::system::error_code ignored;
    socket->close(ignored);
    return;
  }
  auto draining = std::make_shared<Draining>(socket, asio::steady_timer(io), drainingCount);
  asio::async_write(*socket, asio::buffer(reply),
                    [draining](const boost::system::error_code& ec, std::size_t) {
                      boost::system::error_code ignored;
                      if (ec) {
                        draining->socket->close(ignored);
                        return;
                      }
                      draining->socket->shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
                      draining->timer.expires_after(std::chrono::seconds(1));
                      draining->timer.async_wait([draining](const boost::system::error_code&) {
                        boost::system::error_code closed;
                        draining->socket->close(closed);
                      });
                      drainThenClose(draining);
                    });
}

void HttpFront::Impl::makeRoom() {
  // The oldest connection that only waits for (or is still sending) a request gives way, so
  // that clients holding connections open without finishing a request cannot shut out
  // others; connections with a call in progress are kept.
  std::shared_ptr<HttpConnection> oldest;
  std::shared_ptr<HttpConnection> oldestStream;
  for (const auto& [id, weak] : connections) {
    auto connection = weak.lock();
    if (!connection) continue;
    if (connection->isBetweenRequests() && (!oldest || id < oldest->id())) oldest = connection;
    if (connection->isStandingStream() && (!oldestStream || id < oldestStream->id())) {
      oldestStream = connection;
    }
  }
  // Failing that, the oldest standing stream (a GET stream, a listen) gives way, so that
  // clients holding streams open cannot shut out new ones either: its client may resume it
  // (Last-Event-ID) or open it again. A stream that carries a call's answer never does.
  if (!oldest) oldest = std::move(oldestStream);
  if (oldest) oldest->close();
}

bool HttpFront::Impl::makeSessionRoom() {
  // Clients that only opened sessions cannot shut out new ones: the idlest gives way, and its
  // client is told with 404 on its next request to initialize again, as the protocol says.
  std::shared_ptr<SessionState> idlest;
  for (const auto& [id, state] : sessions) {
    const bool busy =
        !state->byRequest.empty() ||
        std::any_of(state->streams.begin(), state->streams.end(), [](const auto& entry) {
          const auto& connection = entry.second->connection;
          return connection && connection->isOpen();
        });
    const bool young = std::chrono::steady_clock::now() - state->lastActive < options.sessionGrace;
    if (!busy && !young && (!idlest || state->lastActive < idlest->lastActive)) idlest = state;
  }
  if (!idlest) return false;
  endSession(idlest);
  return true;
}

void HttpFront::Impl::sweep() {
  if (stopped) return;
  const auto period = std::clamp<std::chrono::milliseconds>(
      options.sessionIdle / 4, std::chrono::milliseconds(10), std::chrono::seconds(60));
  sweepTimer.expires_after(period);
  sweepTimer.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->stopped) return;
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::shared_ptr<SessionState>> idle;
    for (const auto& [id, state] : self->sessions) {
      const bool streaming =
          std::any_of(state->streams.begin(), state->streams.end(), [](const auto& entry) {
            const auto& connection = entry.second->connection;
            return connection && connection->isOpen();
          });
      if (!streaming && now - state->lastActive > self->options.sessionIdle) idle.push_back(state);
    }
    for (const auto& state : idle) self->endSession(state);
    self->sweep();
  });
}

void HttpFront::Impl::stop() {
  if (stopped) return;
  stopped = true;
  boost::system::error_code ignored;
  acceptor.close(ignored);
  sweepTimer.cancel();
  std::vector<std::shared_ptr<SessionState>> all;
  all.reserve(sessions.size() + statelessSessions.size());
  for (const auto& [id, state] : sessions) all.push_back(state);
  for (const auto& [key, state] : statelessSessions) all.push_back(state);
  for (const auto& state : all) endSession(state);
  const auto open = connections;
  for (const auto& [id, weak] : open) {
    if (auto connection = weak.lock()) connection->close();
  }
  connections.clear();
}

}  // namespace kaja::core::server
