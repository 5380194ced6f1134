#include "core/mcp/sse_transport.h"

#include <algorithm>
#include <boost/asio/post.hpp>

namespace kaja::core::mcp {
namespace asio = boost::asio;

Result<std::shared_ptr<SseTransport>> SseTransport::create(asio::io_context& io,
                                                           const RemotePlan& plan,
                                                           HttpOptions options) {
  auto url = parseServerUrl(plan.url, options.serverName);
  if (!url) return std::unexpected(url.error());
  return std::shared_ptr<SseTransport>(
      new SseTransport(io, std::move(*url), plan, std::move(options)));
}

SseTransport::SseTransport(asio::io_context& io, net::Url url, RemotePlan plan, HttpOptions options)
    : io_(io),
      url_(std::move(url)),
      plan_(std::move(plan)),
      options_(std::move(options)),
      worker_(std::make_unique<net::HttpWorker>(io, options_.addressPolicy)),
      sse_(options_.maxBodyBytes),
      replies_(options_.maxRepliesInFlight, options_.maxRepliesWaiting) {}

SseTransport::~SseTransport() { worker_.reset(); }

std::string SseTransport::describe() const {
  return "server '" + options_.serverName + "'" +
         (options_.via.empty() ? "" : " in " + options_.via);
}

void SseTransport::start(TransportHandlers handlers) {
  if (started_ || finished_ || closing_) return;
  started_ = true;
  handlers_ = std::move(handlers);
  Exchange stream;
  stream.stream = true;
  stream.url = url_;
  launch(std::move(stream));
}

void SseTransport::send(const Message& message) {
  if (finished_ || closing_ || failure_) return;
  if (!endpoint_) {
    queued_.push_back(message);
    return;
  }
  if (std::holds_alternative<Response>(message)) {
    sendReply(message);
    return;
  }
  post(message);
}

void SseTransport::sendReply(const Message& message) {
  switch (replies_.offer(message, repliesInFlight())) {
    case ReplyQueue::Verdict::kPostNow:
      post(message);
      return;
    case ReplyQueue::Verdict::kFlooded:
      fatal(replyFloodError(describe(), options_.serverName, replies_.maxWaiting()));
      return;
    case ReplyQueue::Verdict::kQueued:
      return;
  }
}

std::size_t SseTransport::repliesInFlight() const {
  return static_cast<std::size_t>(std::count_if(
      exchanges_.begin(), exchanges_.end(), [](const auto& entry) { return entry.second.reply; }));
}

void SseTransport::pumpReplies() {
  while (!finished_ && !closing_ && !failure_) {
    auto next = replies_.take(repliesInFlight());
    if (!next) return;
    post(std::move(*next));
  }
}

void SseTransport::post(Message message) {
  Exchange exchange;
  exchange.url = *endpoint_;
  exchange.reply = std::holds_alternative<Response>(message);
  exchange.message = std::move(message);
  launch(std::move(exchange));
}

void SseTransport::launch(Exchange exchange) {
  exchange.head = {};
  exchange.body.clear();
  exchange.streaming = false;
  net::HttpRequest request;
  request.url = exchange.url.text;
  request.timeout = options_.timeout;
  request.maxBodyBytes = options_.maxBodyBytes;
  request.headers = plan_.freshHeaders ? plan_.freshHeaders() : plan_.headers;
  if (exchange.stream) {
    request.method = "GET";
    request.headers.emplace_back("Accept", "text/event-stream");
    // Answers to slow calls arrive here much later; the Client's timeouts govern them.
    request.streamIdleTimeout = std::chrono::milliseconds(0);
  } else {
    request.method = "POST";
    request.body = serialize(*exchange.message);
    request.headers.emplace_back("Content-Type", "application/json");
    request.headers.emplace_back("Accept", "application/json, text/event-stream");
  }
  const std::uint64_t key = nextKey_++;
  std::weak_ptr<SseTransport> weak = weak_from_this();
  exchange.transfer =
      worker_->start(std::move(request), net::HttpHandlers{[weak, key](const net::HttpHead& head) {
                                                             if (auto self = weak.lock())
                                                               self->onHead(key, head);
                                                           },
                                                           [weak, key](std::string_view chunk) {
                                                             if (auto self = weak.lock())
                                                               self->onBody(key, chunk);
                                                           },
                                                           [weak, key](Result<void> result) {
                                                             if (auto self = weak.lock())
                                                               self->onDone(key, std::move(result));
                                                           }});
  exchanges_.emplace(key, std::move(exchange));
}

void SseTransport::onHead(std::uint64_t key, const net::HttpHead& head) {
  const auto it = exchanges_.find(key);
  if (it == exchanges_.end()) return;
  it->second.head = head;
  it->second.streaming = it->second.stream && head.status / 100 == 2 && head.isEventStream();
  if (it->second.stream && head.status / 100 == 2 && !it->second.streaming) {
    fatal(Error{ErrorCode::kProtocol,
                describe() + " answered the event-stream GET with \"" + clip(head.contentType, 60) +
                    "\" instead of text/event-stream; it may be a "
                    "Streamable HTTP server (transport = \"http\").",
                options_.serverName,
                {}});
  }
}

void SseTransport::onBody(std::uint64_t key, std::string_view chunk) {
  const auto it = exchanges_.find(key);
  if (it == exchanges_.end()) return;
  if (!it->second.streaming) {
    if (it->second.body.size() < options_.maxBodyBytes) it->second.body.append(chunk);
    return;
  }
  if (!endpoint_) {
    streamBytes_ += chunk.size();
    if (streamBytes_ > kMaxBytesBeforeEndpoint) {
      fatal(Error{ErrorCode::kProtocol,
                  describe() + " sent more than " + std::to_string(kMaxBytesBeforeEndpoint / 1024) +
                      " KB on its event stream without announcing an endpoint; it may not be a "
                      "legacy SSE server (transport = \"http\").",
                  options_.serverName,
                  {}});
      return;
    }
  }
  auto events = sse_.feed(chunk);
  if (!events) {
    fatal(streamFormatError(describe(), options_.serverName, events.error()));
    return;
  }
  for (const auto& event : *events) {
    if (finished_ || closing_ || failure_) return;
    onEvent(event);
  }
}

void SseTransport::onEvent(const net::SseEvent& event) {
  if (event.type == "endpoint") {
    onEndpoint(event.data);
    return;
  }
  if (event.type != "message" || event.data.empty()) return;
  auto messages = parseMessages(event.data);
  if (!messages) {
    const std::string warning = skipWarnings_.next(describe(), event.data);
    if (!warning.empty() && handlers_.onWarning) handlers_.onWarning(warning);
    return;
  }
  for (auto& message : *messages) {
    if (finished_ || closing_ || failure_) return;
    if (handlers_.onMessage) handlers_.onMessage(std::move(message));
  }
}

void SseTransport::onEndpoint(const std::string& data) {
  if (endpoint_) return;  // only the first one counts
  auto target = net::resolveUrl(url_, data);
  if (!target && target.error().code == ErrorCode::kRefused) {
    fatal(Error{ErrorCode::kRefused,
                describe() + " announced an endpoint that is not an http or https URL (\"" +
                    clip(data, 120) + "\"), which kaja does not post to.",
                options_.serverName,
                {}});
    return;
  }
  if (!target) {
    fatal(
        Error{ErrorCode::kProtocol,
              describe() + " announced an endpoint that is not a URL: \"" + clip(data, 120) + "\".",
              options_.serverName,
              {}});
    return;
  }
  if (!net::sameOrigin(url_, *target)) {
    fatal(Error{ErrorCode::kRefused,
                describe() + " announced an endpoint on another origin (" + target->origin() +
                    "), which kaja does not post to.",
                options_.serverName,
                {}});
    return;
  }
  endpoint_ = std::move(*target);
  auto queued = std::move(queued_);
  queued_.clear();
  for (auto& message : queued) post(std::move(message));
}

void SseTransport::onDone(std::uint64_t key, Result<void> result) {
  const auto it = exchanges_.find(key);
  if (it == exchanges_.end()) return;
  Exchange exchange = std::move(it->second);
  exchanges_.erase(it);
  if (finished_ || closing_ || failure_) return;
  const bool reply = exchange.reply;
  settle(std::move(exchange), std::move(result));
  if (reply) pumpReplies();
}

void SseTransport::failOnStatus(const Exchange& exchange) {
  Error error = httpStatusError(describe(), options_.serverName, exchange.stream ? "GET" : "POST",
                                exchange.url, exchange.head.status, exchange.body,
                                options_.credentialsHint, exchange.head.header("www-authenticate"));
  if (exchange.stream ||
      !failRequestAlone(handlers_, exchange.message, exchange.head.status, error)) {
    fatal(std::move(error));
  }
}

void SseTransport::settle(Exchange exchange, Result<void> result) {
  const char* method = exchange.stream ? "GET" : "POST";
  if (!result) {
    if (exchange.streaming) {
      fatal(Error{ErrorCode::kConnect,
                  describe() + " lost its event stream (" + result.error().message + ").",
                  options_.serverName,
                  {}});
      return;
    }
    fatal(requestError(describe(), options_.serverName, method, exchange.url, result.error()));
    return;
  }
  const long status = exchange.head.status;
  if (isRedirect(status)) {
    auto target =
        redirectTarget(describe(), options_.serverName, exchange.url, status,
                       exchange.head.header("location"), exchange.redirects, options_.maxRedirects);
    if (!target) {
      fatal(target.error());
      return;
    }
    // The endpoint is resolved against where the stream really is.
    if (exchange.stream) url_ = *target;
    exchange.url = std::move(*target);
    ++exchange.redirects;
    launch(std::move(exchange));
    return;
  }
  if (wantsAuthorization(plan_, status, exchange.authRetries)) {
    // New credentials first (a refresh, a sign-in); then the same request, or stream, again.
    ++exchange.authRetries;
    auto held = std::make_shared<Exchange>(std::move(exchange));
    askAuthorization(io_, plan_, held->head, weak_from_this(), [this, held](bool retry) {
      if (finished_ || closing_ || failure_) return;
      if (retry) {
        launch(std::move(*held));
      } else {
        failOnStatus(*held);
      }
    });
    return;
  }
  if (status / 100 != 2) {
    failOnStatus(exchange);
    return;
  }
  if (exchange.stream) {
    fatal(Error{
        ErrorCode::kConnect, describe() + " closed its event stream.", options_.serverName, {}});
    return;
  }
  // Servers answer 202; one that answers inline with JSON is served too.
  if (exchange.head.contentType == "application/json" &&
      exchange.body.find_first_not_of(" \t\r\n") != std::string::npos) {
    auto messages = parseMessages(exchange.body);
    if (!messages) {
      Error error =
          unreadableBodyError(describe(), options_.serverName, exchange.body, messages.error());
      // A request fails at once; any other answer is only noted, as before.
      if (!failRequestAlone(handlers_, exchange.message, 0, error)) {
        const std::string warning = skipWarnings_.next(describe(), exchange.body);
        if (!warning.empty() && handlers_.onWarning) handlers_.onWarning(warning);
      }
      return;
    }
    for (auto& message : *messages) {
      if (finished_ || closing_ || failure_) return;
      if (handlers_.onMessage) handlers_.onMessage(std::move(message));
    }
  }
}

void SseTransport::close() {
  if (finished_ || closing_) return;
  closing_ = true;
  finishSoon();
}

void SseTransport::fatal(Error error) {
  if (finished_ || failure_) return;
  failure_ = std::move(error);
  finishSoon();
}

void SseTransport::finishSoon() {
  for (const auto& [key, exchange] : exchanges_) worker_->cancel(exchange.transfer);
  exchanges_.clear();
  queued_.clear();
  replies_.clear();
  if (finishPosted_) return;
  finishPosted_ = true;
  asio::post(io_, [self = shared_from_this()] { self->finish(); });
}

void SseTransport::finish() {
  if (finished_) return;
  finished_ = true;
  handlers_.endWith(failure_ ? *failure_ : closedError(describe(), options_.serverName));
}

}  // namespace kaja::core::mcp
