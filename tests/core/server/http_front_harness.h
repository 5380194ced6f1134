#pragma once

// An HTTP front with echo Sessions on its own thread, and requests to it.

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <stdexcept>
#include <thread>

#include "core/server/http_front.h"
#include "tests/core/server/echo_session.h"
#include "tests/core/server/http_client.h"

namespace kaja::testing {

using Headers = std::vector<std::pair<std::string, std::string>>;

inline const Headers& bothAccepted() {
  static const Headers headers = {{"Accept", "application/json, text/event-stream"},
                                  {"Content-Type", "application/json"}};
  return headers;
}

inline Headers with(Headers headers, const Headers& more) {
  headers.insert(headers.end(), more.begin(), more.end());
  return headers;
}

class FrontHarness {
 public:
  explicit FrontHarness(core::server::HttpFrontOptions options = {}) {
    auto made = core::server::HttpFront::create(io_, echoFactory(log), std::move(options));
    if (!made) throw std::runtime_error(made.error().message);
    front_ = std::move(*made);
    front_->start();
    port = front_->port();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~FrontHarness() {
    boost::asio::post(io_, [this] {
      front_->stop();
      io_.stop();
    });
    thread_.join();
    front_.reset();
  }
  FrontHarness(const FrontHarness&) = delete;
  FrontHarness& operator=(const FrontHarness&) = delete;

  /// Sends one request on a connection of its own and reads the whole response.
  [[nodiscard]] HttpReply send(const std::string& method, const std::string& body,
                               const Headers& headers, const std::string& path = "/mcp") const {
    RawHttp connection(port);
    connection.write(httpRequest(method, body, with(headers, {{"Connection", "close"}}), path));
    return connection.readAll();
  }
  [[nodiscard]] HttpReply post(const std::string& body, const Headers& headers) const {
    return send("POST", body, headers);
  }
  /// Initializes a session at `version` and returns its Mcp-Session-Id.
  [[nodiscard]] std::string initialize(const std::string& version = "2025-11-25") const {
    const auto reply = post(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{)"
                            R"("protocolVersion":")" +
                                version + R"(","capabilities":{},"clientInfo":{"name":"t"}}})",
                            bothAccepted());
    return reply.header("mcp-session-id");
  }
  /// Runs `job` on the front's thread and waits for it.
  template <class Job>
  void onFront(Job job) {
    std::promise<void> done;
    boost::asio::post(io_, [&] {
      job(*front_);
      done.set_value();
    });
    done.get_future().wait();
  }

  std::shared_ptr<EchoLog> log = std::make_shared<EchoLog>();
  int port = 0;

 private:
  boost::asio::io_context io_;
  std::unique_ptr<core::server::HttpFront> front_;
  std::thread thread_;
};

}  // namespace kaja::testing
