#include "core/server/http_connection.h"

#include <sys/socket.h>

#include <boost/asio/write.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <cerrno>

#include "core/server/wire.h"

namespace kaja::core::server {
namespace asio = boost::asio;
namespace beast = boost::beast;

namespace {

std::string errorBody(const std::string& message) {
  std::string body;
  wire::appendJson(wire::errorObject(-32000, message), body);
  return body;
}

}  // namespace

HttpConnection::HttpConnection(asio::ip::tcp::socket socket, HttpHandler& handler,
                               const HttpFrontOptions& options, std::uint64_t id)
    : stream_(std::move(socket)),
      handler_(handler),
      options_(options),
      id_(id),
      keepAliveTimer_(stream_.get_executor()) {}

void HttpConnection::start() { readRequest(); }

void HttpConnection::readRequest() {
  if (!open_) return;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(options_.maxHeaderBytes));
  parser_->body_limit(options_.maxMessageBytes);
  stream_.expires_after(options_.idleTimeout);
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](const boost::system::error_code& ec,
                                                      std::size_t) { self->onHeader(ec); });
}

void HttpConnection::onHeader(const boost::system::error_code& ec) {
  if (!open_) return;
  if (ec == http::error::header_limit) {
    respond(http::status::request_header_fields_too_large,
            errorBody("The request's headers are larger than kaja's limit of " +
                      wire::formatBytes(options_.maxHeaderBytes) + "."),
            {}, true);
    return;
  }
  if (ec == http::error::body_limit) {
    refuseTooLarge();
    return;
  }
  if (ec) {
    refuseMalformed(ec);
    return;
  }
  keepAliveRequested_ = parser_->get().keep_alive();
  if (!handler_.admit(shared_from_this(), *parser_)) return;
  if (parser_->is_done()) {
    onBody({});
    return;
  }
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](const boost::system::error_code& error,
                                               std::size_t) { self->onBody(error); });
}

void HttpConnection::refuseMalformed(const boost::system::error_code& ec) {
  // A request HTTP cannot read (a bad line, header or chunk) gets 400 saying why; a client
  // that went away or stopped mid-message is only closed.
  if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message) {
    respond(http::status::bad_request,
            errorBody("The request is not valid HTTP/1.1 (" + ec.message() + ")."), {}, true);
  } else {
    close();
  }
}

void HttpConnection::refuseTooLarge() {
  respond(http::status::payload_too_large,
          errorBody("The request body is larger than kaja's limit of " +
                    wire::formatBytes(options_.maxMessageBytes) + "; send smaller messages."),
          {}, true);
}

void HttpConnection::onBody(const boost::system::error_code& ec) {
  if (!open_) return;
  stream_.expires_never();
  if (ec == http::error::body_limit) {
    refuseTooLarge();
    return;
  }
  if (ec) {
    refuseMalformed(ec);
    return;
  }
  http::request<http::string_body> request = parser_->release();
  parser_.reset();
  handler_.handle(shared_from_this(), request);
}

void HttpConnection::respond(http::status status, std::string body, const HeaderList& headers,
                             bool closeAfter) {
  if (!open_) return;
  awaiting_ = false;
  auto response = std::make_shared<http::response<http::string_body>>(status, 11);
  for (const auto& [name, value] : headers) response->set(name, value);
  if (!body.empty()) response->set(http::field::content_type, "application/json");
  response->body() = std::move(body);
  response->keep_alive(keepAliveRequested_ && !closeAfter);
  response->prepare_payload();
  stream_.expires_after(options_.writeTimeout);
  http::async_write(
      stream_, *response,
      [self = shared_from_this(), response](const boost::system::error_code& ec, std::size_t) {
        self->stream_.expires_never();
        if (ec || !response->keep_alive()) {
          self->close();
          return;
        }
        self->readRequest();
      });
}

void HttpConnection::beginSse(const HeaderList& headers, bool standing) {
  if (!open_) return;
  ++streamGeneration_;
  streaming_ = true;
  standing_ = standing;
  ending_ = false;
  sseHead_ = std::make_shared<http::response<http::empty_body>>(http::status::ok, 11);
  for (const auto& [name, value] : headers) sseHead_->set(name, value);
  sseHead_->set(http::field::content_type, "text/event-stream");
  sseHead_->set(http::field::cache_control, "no-cache, no-transform");
  sseHead_->set("X-Accel-Buffering", "no");
  sseHead_->keep_alive(keepAliveRequested_);
  sseHead_->chunked(true);
  sseSerializer_.emplace(*sseHead_);
  writing_ = true;
  stream_.expires_after(options_.writeTimeout);
  http::async_write_header(
      stream_, *sseSerializer_,
      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
        self->writing_ = false;
        self->stream_.expires_never();
        if (ec) {
          self->close();
          return;
        }
        self->flush();
      });
  watchPeer();
  keepAlive();
}

void HttpConnection::awaitReply() {
  if (!open_) return;
  ++streamGeneration_;
  awaiting_ = true;
  watchPeer();
}

void HttpConnection::pushEvent(const std::string& text) {
  if (!open_ || !streaming_ || ending_ || text.empty()) return;
  queue_ += text;
  // A client that stopped reading is dropped rather than buffered for: what it missed stays
  // in the stream's replay buffer.
  if (queue_.size() > options_.maxQueuedBytes && writing_) {
    close();
    return;
  }
  flush();
}

void HttpConnection::endSse() {
  if (!open_ || !streaming_) return;
  ending_ = true;
  flush();
}

void HttpConnection::flush() {
  if (writing_ || !open_ || !streaming_) return;
  if (queue_.empty()) {
    if (!ending_) return;
    writing_ = true;
    stream_.expires_after(options_.writeTimeout);
    asio::async_write(
        stream_, http::make_chunk_last(),
        [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
          self->writing_ = false;
          self->streaming_ = false;
          self->stream_.expires_never();
          if (ec) {
            self->close();
            return;
          }
          self->afterResponse();
        });
    return;
  }
  inFlight_.swap(queue_);
  writing_ = true;
  stream_.expires_after(options_.writeTimeout);
  asio::async_write(stream_, http::make_chunk(asio::buffer(inFlight_)),
                    [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                      self->writing_ = false;
                      self->stream_.expires_never();
                      self->inFlight_.clear();
                      if (self->inFlight_.capacity() > 256UL * 1024) {
                        std::string().swap(self->inFlight_);
                      }
                      if (ec) {
                        self->close();
                        return;
                      }
                      self->flush();
                    });
}

void HttpConnection::afterResponse() {
  onBroken_ = nullptr;
  keepAliveTimer_.cancel();
  sseSerializer_.reset();
  sseHead_.reset();
  if (!keepAliveRequested_) {
    close();
    return;
  }
  readRequest();
}

void HttpConnection::watchPeer() {
  const std::uint64_t generation = streamGeneration_;
  stream_.socket().async_wait(
      asio::ip::tcp::socket::wait_read,
      [self = shared_from_this(), generation](const boost::system::error_code& ec) {
        const bool busy = self->streaming_ || self->awaiting_;
        if (ec || !self->open_ || !busy || generation != self->streamGeneration_) return;
        char byte = 0;
        const auto n =
            ::recv(self->stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
          self->close();  // the client went away before its reply ended
          return;
        }
        // Bytes of a next request stay in the socket until this stream ends.
        if (n < 0) self->watchPeer();
      });
}

void HttpConnection::keepAlive() {
  if (options_.keepAlive.count() <= 0) return;
  const std::uint64_t generation = streamGeneration_;
  keepAliveTimer_.expires_after(options_.keepAlive);
  keepAliveTimer_.async_wait(
      [self = shared_from_this(), generation](const boost::system::error_code& ec) {
        if (ec || !self->open_ || !self->streaming_ || generation != self->streamGeneration_)
          return;
        self->pushEvent(":\n\n");
        self->keepAlive();
      });
}

void HttpConnection::close() {
  if (!open_) return;
  open_ = false;
  streaming_ = false;
  keepAliveTimer_.cancel();
  boost::system::error_code ignored;
  stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  stream_.close();
  if (auto broken = std::exchange(onBroken_, nullptr)) broken();
  handler_.closed(id_);
}

}  // namespace kaja::core::server
