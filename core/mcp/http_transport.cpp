#include "core/mcp/http_transport.h"

#include <algorithm>
#include <boost/asio/post.hpp>

#include "core/mcp/types.h"

namespace kaja::core::mcp {
namespace asio = boost::asio;

namespace {

std::string idKey(const Json& id) { return id.dump(); }

const char* methodOf(bool get) { return get ? "GET" : "POST"; }

// Messages of kaja's own that may wait for a renewed session or the GET stream; only a
// server that floods requests meanwhile can reach it.
constexpr std::size_t kMaxHeldMessages = 1024;

}  // namespace

bool isSessionExpired(const Error& error) {
  return error.detail.starts_with(kSessionExpiredDetail);
}

Result<std::shared_ptr<HttpTransport>> HttpTransport::create(asio::io_context& io,
                                                             const RemotePlan& plan,
                                                             HttpOptions options) {
  auto url = parseServerUrl(plan.url, options.serverName);
  if (!url) return std::unexpected(url.error());
  return std::shared_ptr<HttpTransport>(
      new HttpTransport(io, std::move(*url), plan, std::move(options)));
}

HttpTransport::HttpTransport(asio::io_context& io, net::Url url, RemotePlan plan,
                             HttpOptions options)
    : io_(io),
      url_(std::move(url)),
      plan_(std::move(plan)),
      options_(std::move(options)),
      worker_(std::make_unique<net::HttpWorker>(io, options_.addressPolicy)),
      replies_(options_.maxRepliesInFlight, options_.maxRepliesWaiting) {}

HttpTransport::~HttpTransport() { worker_.reset(); }

std::string HttpTransport::describe() const {
  return "server '" + options_.serverName + "'" +
         (options_.via.empty() ? "" : " in " + options_.via);
}

void HttpTransport::start(TransportHandlers handlers) {
  if (started_) return;
  started_ = true;
  handlers_ = std::move(handlers);
}

void HttpTransport::send(const Message& message) {
  if (finished_ || closing_ || failure_) return;
  if (const auto* request = std::get_if<Request>(&message);
      request && request->method == "initialize")
    initialize_ = *request;
  if ((renewing_ || awaitingListen_) && held_.size() + beforeListen_.size() >= kMaxHeldMessages) {
    fatal(Error{ErrorCode::kProtocol,
                describe() + " sent more requests than kaja holds while it reconnects (" +
                    std::to_string(kMaxHeldMessages) + "); kaja closed the connection.",
                options_.serverName,
                {}});
    return;
  }
  if (renewing_) {
    held_.push_back(message);
    return;
  }
  if (awaitingListen_) {
    beforeListen_.push_back(message);
    return;
  }
  if (std::holds_alternative<Response>(message)) {
    sendReply(message);
    return;
  }
  const auto* notification = std::get_if<Notification>(&message);
  if (notification != nullptr && notification->method == "notifications/cancelled" &&
      protocolVersion_ >= kStatelessProtocolVersion) {
    // At 2026-07-28 a request's stream is its lifetime: closing it is what cancels it.
    closeStreamOf(notification->params);
  }
  post(message, false);
  if (notification != nullptr && notification->method == "notifications/initialized" &&
      options_.openGetStream && !listenKey_) {
    // A server may send a request of its own on the GET stream as soon as it sees the next
    // call; sent before that stream exists, it would be lost. So later messages wait for
    // the stream, briefly.
    awaitingListen_ = true;
    after(options_.listenWait, [this] { releaseBeforeListen(); });
  }
}

void HttpTransport::closeStreamOf(const Json& cancelled) {
  if (!cancelled.is_object() || !cancelled.contains("requestId")) return;
  const std::string key = idKey(cancelled["requestId"]);
  for (auto it = exchanges_.begin(); it != exchanges_.end(); ++it) {
    Exchange& exchange = it->second;
    if ((exchange.kind != Kind::kPost && exchange.kind != Kind::kResume) ||
        !exchange.waiting.contains(key)) {
      continue;
    }
    // A resumed stream may carry the answers of other requests too: it stays for them.
    exchange.waiting.erase(key);
    if (exchange.kind == Kind::kResume && !exchange.waiting.empty()) return;
    worker_->cancel(exchange.transfer);
    exchanges_.erase(it);
    return;
  }
  for (auto& [resumeKey, resuming] : resuming_) resuming->waiting.erase(key);
}

void HttpTransport::releaseBeforeListen() {
  if (!awaitingListen_) return;
  awaitingListen_ = false;
  auto waiting = std::move(beforeListen_);
  beforeListen_.clear();
  for (const auto& message : waiting) send(message);
}

HttpTransport::Exchange HttpTransport::newExchange(Kind kind) const {
  Exchange exchange;
  exchange.kind = kind;
  exchange.url = url_;
  exchange.sse = net::SseParser(options_.maxBodyBytes);
  return exchange;
}

bool HttpTransport::acceptEchoed(std::string_view header, std::string_view value,
                                 std::size_t maxBytes) {
  auto checked = checkEchoedHeader(describe(), options_.serverName, header, value, maxBytes);
  if (checked) return true;
  fatal(checked.error());
  return false;
}

void HttpTransport::post(Message message, bool afterRenewal) {
  Exchange exchange = newExchange(Kind::kPost);
  exchange.afterRenewal = afterRenewal;
  exchange.reply = std::holds_alternative<Response>(message);
  if (const auto* request = std::get_if<Request>(&message))
    exchange.waiting.insert(idKey(request->id));
  exchange.message = std::move(message);
  launch(std::move(exchange));
}

std::uint64_t HttpTransport::launch(Exchange exchange) {
  exchange.sessionSent = exchange.kind == Kind::kReinit ? "" : sessionId_.value_or("");
  exchange.head = {};
  exchange.body.clear();
  exchange.streaming = false;
  exchange.received = 0;
  exchange.launched = std::chrono::steady_clock::now();
  const std::uint64_t key = nextKey_++;
  std::weak_ptr<HttpTransport> weak = weak_from_this();
  net::HttpHandlers handlers{[weak, key](const net::HttpHead& head) {
                               if (auto self = weak.lock()) self->onHead(key, head);
                             },
                             [weak, key](std::string_view chunk) {
                               if (auto self = weak.lock()) self->onBody(key, chunk);
                             },
                             [weak, key](Result<void> result) {
                               if (auto self = weak.lock()) self->onDone(key, std::move(result));
                             }};
  exchange.transfer = worker_->start(buildRequest(exchange), std::move(handlers));
  exchanges_.emplace(key, std::move(exchange));
  return key;
}

net::HttpRequest HttpTransport::buildRequest(const Exchange& exchange) const {
  net::HttpRequest request;
  request.url = exchange.url.text;
  request.timeout = options_.timeout;
  request.streamIdleTimeout = options_.streamIdleTimeout;
  request.maxBodyBytes = options_.maxBodyBytes;
  request.headers = plan_.freshHeaders ? plan_.freshHeaders() : plan_.headers;
  switch (exchange.kind) {
    case Kind::kPost:
    case Kind::kReinit:
    case Kind::kReinitNotice:
      request.method = "POST";
      request.body = serialize(*exchange.message);
      request.headers.emplace_back("Content-Type", "application/json");
      request.headers.emplace_back("Accept", "application/json, text/event-stream");
      if (protocolVersion_ >= kStatelessProtocolVersion) {
        for (auto& header : standardHeaders(*exchange.message, toolParamHeaders_))
          request.headers.push_back(std::move(header));
      }
      break;
    case Kind::kResume:
    case Kind::kListen:
      request.method = "GET";
      request.headers.emplace_back("Accept", "text/event-stream");
      if (!exchange.sse.lastEventId().empty()) {
        request.headers.emplace_back("Last-Event-ID", exchange.sse.lastEventId());
      }
      // Silence on the listening stream is normal: the server may have nothing to say.
      if (exchange.kind == Kind::kListen) request.streamIdleTimeout = std::chrono::milliseconds(0);
      break;
    case Kind::kDelete:
      request.method = "DELETE";
      request.timeout = options_.closeTimeout;
      // However the server answers (an event stream that keeps talking), close() ends.
      request.totalTimeout = options_.closeTimeout;
      break;
  }
  if (!exchange.sessionSent.empty())
    request.headers.emplace_back("Mcp-Session-Id", exchange.sessionSent);
  if (!protocolVersion_.empty() && exchange.kind != Kind::kReinit) {
    request.headers.emplace_back("MCP-Protocol-Version", protocolVersion_);
  }
  return request;
}

void HttpTransport::onHead(std::uint64_t key, const net::HttpHead& head) {
  const auto it = exchanges_.find(key);
  if (it == exchanges_.end()) return;
  Exchange& exchange = it->second;
  exchange.head = head;
  const bool ok = head.status / 100 == 2;
  exchange.streaming = ok && head.isEventStream();
  const auto* request = exchange.message ? std::get_if<Request>(&*exchange.message) : nullptr;
  const bool initializing =
      exchange.kind == Kind::kReinit || (request != nullptr && request->method == "initialize");
  if (ok && initializing) {
    if (auto id = head.header("mcp-session-id"); !id.empty()) {
      if (!acceptEchoed("Mcp-Session-Id", id, kMaxSessionIdBytes)) return;
      sessionId_ = std::move(id);
    }
  }
  if (exchange.kind == Kind::kDelete) {
    // The server has the DELETE; whatever body follows is of no use to a closing client.
    worker_->cancel(exchange.transfer);
    exchanges_.erase(it);
    finishSoon();
    return;
  }
  if (listenKey_ && key == *listenKey_) releaseBeforeListen();
}

void HttpTransport::onBody(std::uint64_t key, std::string_view chunk) {
  auto it = exchanges_.find(key);
  if (it == exchanges_.end()) return;
  it->second.received += chunk.size();
  if (!it->second.streaming) {
    // Error bodies are only quoted, so a few KB are enough; JSON bodies are capped by
    // the worker.
    if (it->second.head.status / 100 == 2 || it->second.body.size() < 4096) {
      it->second.body.append(chunk);
    }
    return;
  }
  auto events = it->second.sse.feed(chunk);
  if (!events) {
    fatal(streamFormatError(describe(), options_.serverName, events.error()));
    return;
  }
  for (const auto& event : *events) {
    if (event.type != "message" || event.data.empty()) continue;
    auto messages = parseMessages(event.data);
    if (!messages) {
      it = exchanges_.find(key);
      if (it != exchanges_.end() && it->second.kind == Kind::kPost && !it->second.waiting.empty()) {
        // On a POST's own stream, an unreadable event stands where its answer should be.
        unreadableAnswer(key, messages.error());
        return;
      }
      const std::string warning = skipWarnings_.next(describe(), event.data);
      if (!warning.empty() && handlers_.onWarning) handlers_.onWarning(warning);
      continue;
    }
    for (auto& message : *messages) {
      it = exchanges_.find(key);
      if (it == exchanges_.end()) return;
      dispatch(it->second, std::move(message));
    }
  }
  it = exchanges_.find(key);
  // A resumed stream has done its job once every request it waited for is answered.
  if (it != exchanges_.end() && it->second.kind == Kind::kResume && it->second.waiting.empty()) {
    worker_->cancel(it->second.transfer);
    exchanges_.erase(it);
  }
}

void HttpTransport::unreadableAnswer(std::uint64_t key, const Error& cause) {
  const auto it = exchanges_.find(key);
  if (it == exchanges_.end()) return;
  Exchange exchange = std::move(it->second);
  exchanges_.erase(it);
  worker_->cancel(exchange.transfer);
  std::string_view reason = cause.message;
  if (reason.ends_with('.')) reason.remove_suffix(1);
  Error error{ErrorCode::kProtocol,
              describe() + " answered with an event that is not valid JSON-RPC (" +
                  clip(reason, 160) + ").",
              options_.serverName,
              {}};
  if (!failRequestAlone(handlers_, exchange.message, 0, error)) fatal(std::move(error));
  if (exchange.reply) pumpReplies();
}

void HttpTransport::dispatch(Exchange& exchange, Message message) {
  if (const auto* response = std::get_if<Response>(&message)) {
    exchange.waiting.erase(idKey(response->id));
    if (exchange.kind == Kind::kReinit) {
      onRenewed(*response);
      return;
    }
  }
  deliver(std::move(message));
}

void HttpTransport::deliver(Message message) {
  if (finished_ || closing_ || failure_) return;
  if (const auto* response = std::get_if<Response>(&message)) {
    const std::string key = idKey(response->id);
    for (auto& [unused, exchange] : exchanges_) exchange.waiting.erase(key);
    if (initialize_ && response->id == initialize_->id && response->result &&
        response->result->is_object()) {
      const auto version = response->result->find("protocolVersion");
      if (version != response->result->end() && version->is_string()) {
        const auto& text = version->get_ref<const std::string&>();
        if (!acceptEchoed("MCP-Protocol-Version", text, kMaxVersionBytes)) return;
        protocolVersion_ = text;
      }
    }
  }
  if (handlers_.onMessage) handlers_.onMessage(std::move(message));
}

void HttpTransport::onDone(std::uint64_t key, Result<void> result) {
  const auto it = exchanges_.find(key);
  if (it == exchanges_.end()) return;
  Exchange exchange = std::move(it->second);
  exchanges_.erase(it);
  if (finished_) return;
  const bool reply = exchange.reply;
  settle(std::move(exchange), std::move(result));
  if (reply) pumpReplies();
}

void HttpTransport::settle(Exchange exchange, Result<void> result) {
  if (exchange.kind == Kind::kDelete) {
    finishSoon();
    return;
  }
  if (exchange.kind == Kind::kListen) {
    completeListen(exchange, result);
    return;
  }
  if (!result) {
    const bool refused = result.error().code == ErrorCode::kRefused;
    if ((exchange.streaming || exchange.kind == Kind::kResume) && !refused) {
      if (exchange.waiting.empty()) return;  // its answers are in; the drop costs nothing
      resume(exchange, result.error().message);
      return;
    }
    fatal(requestError(describe(), options_.serverName, methodOf(exchange.kind == Kind::kResume),
                       exchange.url, result.error()));
    return;
  }
  completePost(std::move(exchange));
}

void HttpTransport::failOnStatus(const Exchange& exchange) {
  const long status = exchange.head.status;
  if (exchange.kind == Kind::kReinit) {
    fatal(sessionExpiredError("a new initialize got HTTP " + std::to_string(status)));
    return;
  }
  Error error =
      httpStatusError(describe(), options_.serverName, methodOf(exchange.kind == Kind::kResume),
                      exchange.probingSlash ? url_ : exchange.url, status, exchange.body,
                      options_.credentialsHint, exchange.head.header("www-authenticate"));
  if (exchange.kind != Kind::kPost ||
      !failRequestAlone(handlers_, exchange.message, status, error)) {
    fatal(std::move(error));
  }
}

void HttpTransport::completePost(Exchange exchange) {
  const long status = exchange.head.status;
  if (isRedirect(status)) {
    auto target =
        redirectTarget(describe(), options_.serverName, exchange.url, status,
                       exchange.head.header("location"), exchange.redirects, options_.maxRedirects);
    if (!target) {
      fatal(target.error());
      return;
    }
    if (status == 308 && exchange.kind == Kind::kPost && exchange.url.text == url_.text)
      url_ = *target;
    exchange.url = std::move(*target);
    ++exchange.redirects;
    launch(std::move(exchange));
    return;
  }
  if (status == 404 && !exchange.sessionSent.empty() &&
      (exchange.kind == Kind::kPost || exchange.kind == Kind::kResume)) {
    sessionExpired(std::move(exchange));
    return;
  }
  if (status == 404 && exchange.kind == Kind::kPost && exchange.sessionSent.empty() &&
      !probedSlash_ && !sessionId_) {
    probedSlash_ = true;
    if (auto slash = net::parseUrl(net::withTrailingSlash(exchange.url)); slash) {
      exchange.url = std::move(*slash);
      exchange.probingSlash = true;
      launch(std::move(exchange));
      return;
    }
  }
  if (status / 100 == 4 && status != 401 && status != 403 && deliverErrorBody(exchange)) return;
  if (wantsAuthorization(plan_, status, exchange.authRetries)) {
    // New credentials first (a refresh, a sign-in); then the same request again.
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
  if (exchange.probingSlash) url_ = exchange.url;
  if (exchange.streaming) {
    if (!exchange.waiting.empty()) resume(exchange, "the stream ended before the answer");
    return;
  }
  if (exchange.body.find_first_not_of(" \t\r\n") != std::string::npos) {
    auto messages = parseMessages(exchange.body);
    if (!messages) {
      Error error =
          unreadableBodyError(describe(), options_.serverName, exchange.body, messages.error());
      // It answered one request (too deep, say): that request fails, the others go on.
      if (exchange.kind != Kind::kPost ||
          !failRequestAlone(handlers_, exchange.message, 0, error)) {
        fatal(std::move(error));
      }
      return;
    }
    for (auto& message : *messages) {
      if (finished_ || closing_ || failure_) return;
      dispatch(exchange, std::move(message));
    }
  }
  if (exchange.kind == Kind::kReinit && !exchange.waiting.empty()) {
    fatal(sessionExpiredError("the new initialize got no answer"));
    return;
  }
  if (exchange.kind == Kind::kReinitNotice) {
    finishRenewal();
    return;
  }
  const auto* notification =
      exchange.message ? std::get_if<Notification>(&*exchange.message) : nullptr;
  if (notification != nullptr && notification->method == "notifications/initialized") {
    openListenStream("", 0);
    if (!listenKey_) releaseBeforeListen();
  }
}

bool HttpTransport::deliverErrorBody(Exchange& exchange) {
  // A 4xx that carries a JSON-RPC error (an unsupported version, an unknown method before
  // initialize) answers that one request; the connection stays usable, so a client can
  // retry or fall back. Its id may be null or made up ("server-error" from some SDKs): it
  // still answers the one request this POST carried.
  const auto* request = exchange.message ? std::get_if<Request>(&*exchange.message) : nullptr;
  if (exchange.kind != Kind::kPost || request == nullptr) return false;
  auto messages = parseMessages(exchange.body);
  if (!messages || messages->size() != 1) return false;
  auto* response = std::get_if<Response>(&messages->front());
  if (response == nullptr || !response->error) return false;
  response->id = request->id;
  dispatch(exchange, std::move(*response));
  return true;
}

void HttpTransport::after(std::chrono::milliseconds delay, std::function<void()> work) {
  auto timer = std::make_shared<asio::steady_timer>(io_, delay);
  timers_.push_back(timer);
  timer->async_wait([weak = weak_from_this(), raw = timer.get(),
                     work = std::move(work)](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self) return;
    std::erase_if(self->timers_, [raw](const auto& t) { return t.get() == raw; });
    if (!self->closing_ && !self->failure_ && !self->finished_) work();
  });
}

void HttpTransport::cancelAll() {
  for (const auto& [key, exchange] : exchanges_) worker_->cancel(exchange.transfer);
  exchanges_.clear();
  listenKey_.reset();
  for (const auto& timer : timers_) timer->cancel();
  timers_.clear();
  held_.clear();
  awaitingListen_ = false;
  beforeListen_.clear();
  replies_.clear();
}

void HttpTransport::close() {
  if (finished_ || closing_) return;
  closing_ = true;
  cancelAll();
  if (started_ && sessionId_ && !failure_) {
    // Best effort: the server may free the session now instead of at its own timeout.
    launch(newExchange(Kind::kDelete));
    // The worker's hard limit ends the DELETE; this ends close() even if it never reports.
    closeTimer_ = std::make_unique<asio::steady_timer>(io_, options_.closeTimeout);
    closeTimer_->async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
      if (auto self = weak.lock(); self && !ec) self->finishSoon();
    });
    return;
  }
  finishSoon();
}

void HttpTransport::fatal(Error error) {
  if (finished_ || failure_) return;
  failure_ = std::move(error);
  cancelAll();
  finishSoon();
}

void HttpTransport::finishSoon() {
  if (finishPosted_) return;
  finishPosted_ = true;
  asio::post(io_, [self = shared_from_this()] { self->finish(); });
}

void HttpTransport::finish() {
  if (finished_) return;
  finished_ = true;
  cancelAll();
  if (closeTimer_) closeTimer_->cancel();
  handlers_.endWith(failure_ ? *failure_ : closedError(describe(), options_.serverName));
}

}  // namespace kaja::core::mcp
