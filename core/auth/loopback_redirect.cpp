#include "core/auth/loopback_redirect.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <optional>
#include <vector>

#include "core/auth/url_form.h"

namespace kaja::core::auth {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr std::size_t kMaxConnections = 32;

constexpr const char* kNotThisPage =
    "<!doctype html><meta charset=utf-8><title>kaja</title>"
    "<p>This is not the answer of the sign-in kaja is waiting for (another state), so kaja "
    "did not take it.</p>";

constexpr const char* kDonePage =
    "<!doctype html><meta charset=utf-8><title>kaja</title>"
    "<p>kaja has the answer of the sign-in. You may close this tab and go back to the "
    "terminal.</p>";

}  // namespace

struct LoopbackRedirect::Impl {
  asio::io_context io;
  tcp::acceptor acceptor{io};
  int port = 0;
  bool waited = false;  ///< handlers of a wait that timed out may still be queued
};

LoopbackRedirect::LoopbackRedirect(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LoopbackRedirect::LoopbackRedirect(LoopbackRedirect&&) noexcept = default;
LoopbackRedirect& LoopbackRedirect::operator=(LoopbackRedirect&&) noexcept = default;
LoopbackRedirect::~LoopbackRedirect() = default;

Result<LoopbackRedirect> LoopbackRedirect::open(int port) {
  auto impl = std::make_unique<Impl>();
  boost::system::error_code ec;
  const tcp::endpoint endpoint(asio::ip::make_address_v4("127.0.0.1"),
                               static_cast<unsigned short>(port));
  impl->acceptor.open(endpoint.protocol(), ec);
  // A step-up sign-in reopens the port the client registered; the last redirect's socket
  // may still be in TIME_WAIT.
  if (!ec) impl->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(8, ec);
  if (ec) {
    return fail(ErrorCode::kIo, "cannot listen on 127.0.0.1:" + std::to_string(port) +
                                    " for the sign-in's redirect: " + ec.message());
  }
  impl->port = impl->acceptor.local_endpoint().port();
  return LoopbackRedirect(std::move(impl));
}

std::string LoopbackRedirect::redirectUri() const {
  return "http://127.0.0.1:" + std::to_string(impl_->port) + "/callback";
}

Result<std::map<std::string, std::string>> LoopbackRedirect::wait(std::chrono::milliseconds timeout,
                                                                  const Accept& accept) {
  Impl& impl = *impl_;
  if (impl.waited) return fail(ErrorCode::kInternal, "a sign-in's redirect is waited for once");
  impl.waited = true;
  std::optional<std::map<std::string, std::string>> answer;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // Every connection is read at once, each within its own 10 s: a connection that stalls
  // (a browser's preconnect, a local process holding one open) never keeps the real
  // redirect waiting.
  std::vector<std::weak_ptr<beast::tcp_stream>> open;
  bool closing = false;
  int refused = 0;
  std::function<void()> acceptNext = [&] {
    impl.acceptor.async_accept([&](boost::system::error_code ec, tcp::socket socket) {
      if (ec || closing) return;
      acceptNext();
      // A flood of connections gets no more than kMaxConnections read at a time.
      std::erase_if(open, [](const auto& weak) { return weak.expired(); });
      if (open.size() >= kMaxConnections) return;  // `socket` closes here
      auto stream = std::make_shared<beast::tcp_stream>(std::move(socket));
      open.push_back(stream);
      auto buffer = std::make_shared<beast::flat_buffer>(8192);
      auto parser = std::make_shared<http::request_parser<http::string_body>>();
      parser->header_limit(8192);
      parser->body_limit(8192);
      stream->expires_after(std::chrono::seconds(10));
      http::async_read(
          *stream, *buffer, *parser,
          [&, stream, buffer, parser](boost::system::error_code readError, std::size_t) {
            if (readError || closing || answer) return;
            const auto& request = parser->get();
            const std::string target(request.target());
            const std::size_t mark = target.find('?');
            const std::string path = target.substr(0, mark);
            auto response = std::make_shared<http::response<http::string_body>>();
            response->version(11);
            response->set(http::field::content_type, "text/html; charset=utf-8");
            response->set(http::field::cache_control, "no-store");
            response->set(http::field::connection, "close");
            const bool callback = path == "/callback" && request.method() == http::verb::get;
            bool done = false;
            if (callback) {
              auto query =
                  parseQuery(mark == std::string::npos ? std::string_view()
                                                       : std::string_view(target).substr(mark + 1));
              done = !accept || accept(query);
              if (done) {
                answer = std::move(query);
              } else {
                ++refused;
              }
            }
            response->result(done       ? http::status::ok
                             : callback ? http::status::bad_request
                                        : http::status::not_found);
            response->body() = done ? kDonePage : callback ? kNotThisPage : "not found";
            response->prepare_payload();
            http::async_write(*stream, *response,
                              [stream, response](boost::system::error_code, std::size_t) {
                                beast::error_code ignored;
                                stream->socket().shutdown(tcp::socket::shutdown_both, ignored);
                              });
          });
    });
  };
  acceptNext();
  impl.io.restart();
  while (!answer && std::chrono::steady_clock::now() < deadline) {
    impl.io.run_one_until(deadline);
  }
  // Let the page reach the browser, then end every connection and let each handler see it,
  // while what they refer to is still here.
  if (answer) impl.io.run_for(std::chrono::milliseconds(200));
  closing = true;
  boost::system::error_code ignored;
  impl.acceptor.close(ignored);
  for (auto& weak : open) {
    if (auto stream = weak.lock()) stream->close();
  }
  impl.io.restart();
  impl.io.run_for(std::chrono::seconds(1));
  if (!answer && refused > 0) {
    return fail(ErrorCode::kRefused,
                "the sign-in's answer carried another state than kaja sent, so it may be "
                "someone else's; nothing was saved, run the command again");
  }
  if (!answer) {
    return fail(ErrorCode::kTimeout,
                "no answer reached " + redirectUri() + " within " +
                    std::to_string(timeout.count() / 1000) +
                    " s; run the command again and finish the sign-in in the browser");
  }
  return std::move(*answer);
}

}  // namespace kaja::core::auth
