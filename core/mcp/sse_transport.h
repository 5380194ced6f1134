#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/mcp/http_support.h"
#include "core/mcp/transport.h"
#include "core/net/http_worker.h"
#include "core/net/sse_parser.h"
#include "core/net/url.h"
#include "core/runner/launch_plan.h"

namespace kaja::core::mcp {

/// MCP over the legacy HTTP+SSE transport (protocol 2024-11-05; P1).
///
/// start() GETs the URL as an event stream and waits for the `endpoint` event, whose URL
/// (resolved against the stream's URL) must be same-origin. Messages sent before it are
/// queued; afterwards each is POSTed there, and every answer arrives on the stream as a
/// `message` event. The stream ending ends the connection; it is not resumed, because a
/// new stream means a new session. Redirects, status errors, the address guard and the
/// limit on replies in flight work as in HttpTransport (same HttpOptions; openGetStream
/// and resumption do not apply). A stream that sends more than kMaxBytesBeforeEndpoint
/// before its endpoint ends the connection, as does an endpoint on another origin.
class SseTransport final : public Transport, public std::enable_shared_from_this<SseTransport> {
 public:
  /// What a stream may send before its `endpoint` event (servers send it first).
  static constexpr std::size_t kMaxBytesBeforeEndpoint = 64UL * 1024;

  /// Checks `plan.url` and returns a transport that has not connected yet. Returns
  /// kInvalidConfig for a URL that is not absolute http(s).
  static Result<std::shared_ptr<SseTransport>> create(boost::asio::io_context& io,
                                                      const RemotePlan& plan,
                                                      HttpOptions options = {});
  SseTransport(const SseTransport&) = delete;
  SseTransport& operator=(const SseTransport&) = delete;
  ~SseTransport() override;

  void start(TransportHandlers handlers) override;
  void send(const Message& message) override;
  void close() override;
  [[nodiscard]] bool isOpen() const override { return !finished_; }
  [[nodiscard]] std::string name() const override { return options_.serverName; }
  [[nodiscard]] std::string describe() const override;

  /// Returns the URL messages are POSTed to ("" until the endpoint event arrived).
  [[nodiscard]] std::string endpoint() const { return endpoint_ ? endpoint_->text : ""; }

 private:
  struct Exchange {
    bool stream = false;  // the GET event stream rather than a POST
    std::optional<Message> message;
    net::Url url;
    int redirects = 0;
    std::uint64_t transfer = 0;
    net::HttpHead head;
    bool streaming = false;
    std::string body;
    bool reply = false;   // carries a Response to a request of the server's
    int authRetries = 0;  // sent again after new credentials (RemotePlan::onAuthChallenge)
  };

  SseTransport(boost::asio::io_context& io, net::Url url, RemotePlan plan, HttpOptions options);

  void launch(Exchange exchange);
  /// Fails what `exchange` carried (or the connection) for its non-2xx status.
  void failOnStatus(const Exchange& exchange);
  void onHead(std::uint64_t key, const net::HttpHead& head);
  void onBody(std::uint64_t key, std::string_view chunk);
  void onDone(std::uint64_t key, Result<void> result);
  void settle(Exchange exchange, Result<void> result);
  void onEvent(const net::SseEvent& event);
  void onEndpoint(const std::string& data);
  void post(Message message);
  void sendReply(const Message& message);
  void pumpReplies();
  [[nodiscard]] std::size_t repliesInFlight() const;
  void fatal(Error error);
  void finishSoon();
  void finish();

  boost::asio::io_context& io_;
  net::Url url_;
  RemotePlan plan_;
  HttpOptions options_;
  std::unique_ptr<net::HttpWorker> worker_;
  TransportHandlers handlers_;
  std::map<std::uint64_t, Exchange> exchanges_;
  std::uint64_t nextKey_ = 1;
  net::SseParser sse_;
  std::optional<net::Url> endpoint_;
  std::deque<Message> queued_;   // sent before the endpoint was known
  ReplyQueue replies_;           // replies waiting for a free slot
  std::size_t streamBytes_ = 0;  // received on the event stream, counted until the endpoint
  SkipWarnings skipWarnings_;

  bool started_ = false;
  bool closing_ = false;
  bool finishPosted_ = false;
  bool finished_ = false;
  std::optional<Error> failure_;
};

}  // namespace kaja::core::mcp
