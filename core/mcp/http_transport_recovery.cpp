// HttpTransport: what keeps a connection going when the server misbehaves or drops
// things: replies held to a few in flight, resumed streams, the GET stream and its
// reconnect budget, and the renewal of an expired session.
#include <algorithm>

#include "core/mcp/http_transport.h"

namespace kaja::core::mcp {

namespace {

std::string idKey(const Json& id) { return id.dump(); }

}  // namespace

void HttpTransport::sendReply(const Message& message) {
  switch (replies_.offer(message, repliesInFlight())) {
    case ReplyQueue::Verdict::kPostNow:
      post(message, false);
      return;
    case ReplyQueue::Verdict::kFlooded:
      fatal(replyFloodError(describe(), options_.serverName, replies_.maxWaiting()));
      return;
    case ReplyQueue::Verdict::kQueued:
      return;
  }
}

std::size_t HttpTransport::repliesInFlight() const {
  return static_cast<std::size_t>(std::count_if(
      exchanges_.begin(), exchanges_.end(), [](const auto& entry) { return entry.second.reply; }));
}

void HttpTransport::pumpReplies() {
  while (!finished_ && !closing_ && !failure_) {
    auto next = replies_.take(repliesInFlight());
    if (!next) return;
    post(std::move(*next), false);
  }
}

void HttpTransport::resume(const Exchange& exchange, const std::string& why) {
  if (closing_ || failure_ || finished_) return;
  if (exchange.sse.lastEventId().empty() || exchange.resumeAttempt >= options_.maxResumeAttempts) {
    const std::string tried =
        exchange.sse.lastEventId().empty()
            ? ""
            : " and " + std::to_string(exchange.resumeAttempt) + " attempts to resume it failed";
    Error error{
        ErrorCode::kConnect,
        describe() + " dropped its response stream before answering (" + why + ")" + tried + ".",
        options_.serverName,
        {}};
    // Only that request is lost; the others on the connection go on.
    if (!failRequestAlone(handlers_, exchange.message, 0, error)) fatal(std::move(error));
    return;
  }
  auto next = std::make_shared<Exchange>(newExchange(Kind::kResume));
  next->message = exchange.message;
  next->afterRenewal = exchange.afterRenewal;
  next->waiting = exchange.waiting;
  next->resumeAttempt = exchange.resumeAttempt + 1;
  next->sse.setLastEventId(exchange.sse.lastEventId());
  ++resumptions_;
  const std::uint64_t key = nextKey_++;
  resuming_.emplace(key, next);
  after(reconnectDelay(exchange.sse.retry(), options_.defaultRetry, next->resumeAttempt),
        [this, key, next] {
          resuming_.erase(key);
          // Every request it would have resumed was cancelled meanwhile.
          if (next->waiting.empty()) return;
          launch(std::move(*next));
        });
}

void HttpTransport::sessionExpired(Exchange exchange) {
  if (!exchange.message) return;
  if (sessionId_ && exchange.sessionSent != *sessionId_ && !renewing_) {
    // Sent with the old session before it was renewed: just send it again.
    post(std::move(*exchange.message), true);
    return;
  }
  if (exchange.afterRenewal || !initialize_) {
    fatal(sessionExpiredError("the server answered HTTP 404 again after a new initialize"));
    return;
  }
  held_.push_back(std::move(*exchange.message));
  if (renewing_) return;
  renewing_ = true;
  ++renewals_;
  sessionId_.reset();
  if (listenKey_) {
    if (const auto it = exchanges_.find(*listenKey_); it != exchanges_.end()) {
      worker_->cancel(it->second.transfer);
      exchanges_.erase(it);
    }
    listenKey_.reset();
  }
  Exchange renew = newExchange(Kind::kReinit);
  renew.message = *initialize_;
  renew.waiting.insert(idKey(initialize_->id));
  launch(std::move(renew));
}

void HttpTransport::onRenewed(const Response& response) {
  if (!response.result || response.error) {
    fatal(sessionExpiredError("the server refused a new initialize: " +
                              clip(response.error ? response.error->message : "no result", 120)));
    return;
  }
  if (!response.result->is_object()) {
    fatal(
        sessionExpiredError("the server answered a new initialize with a result that is not an "
                            "object"));
    return;
  }
  if (const auto version = response.result->find("protocolVersion");
      version != response.result->end() && version->is_string()) {
    const auto& text = version->get_ref<const std::string&>();
    if (!acceptEchoed("MCP-Protocol-Version", text, kMaxVersionBytes)) return;
    protocolVersion_ = text;
  }
  Exchange notice = newExchange(Kind::kReinitNotice);
  notice.message = Notification{"notifications/initialized", Json()};
  launch(std::move(notice));
}

void HttpTransport::finishRenewal() {
  renewing_ = false;
  auto held = std::move(held_);
  held_.clear();
  for (auto& message : held) post(std::move(message), true);
  openListenStream("", 0);
}

void HttpTransport::openListenStream(std::string lastEventId, int attempt) {
  if (!options_.openGetStream || closing_ || failure_ || finished_ || renewing_ || listenKey_)
    return;
  Exchange listen = newExchange(Kind::kListen);
  listen.resumeAttempt = attempt;
  listen.sse.setLastEventId(std::move(lastEventId));
  listenKey_ = launch(std::move(listen));
}

void HttpTransport::completeListen(const Exchange& exchange, const Result<void>& result) {
  listenKey_.reset();
  releaseBeforeListen();
  if (closing_ || failure_ || renewing_) return;
  const long status = exchange.head.status;
  if (result && status == 405) return;  // the server sends nothing unasked
  const bool dropped = exchange.streaming;
  if (!dropped) {
    if (handlers_.onWarning) {
      handlers_.onWarning(describe() + " did not open its event stream (" +
                          (result ? "HTTP " + std::to_string(status) : result.error().message) +
                          "); messages it starts itself will not arrive.");
    }
    return;
  }
  // Bytes alone do not make a stream healthy (a `retry: 0` and a close are bytes too): only
  // time does. Short-lived streams in a row use up the budget.
  const bool healthy = std::chrono::steady_clock::now() - exchange.launched >= kHealthyStream;
  const int attempt = healthy ? 1 : exchange.resumeAttempt + 1;
  if (attempt > options_.maxResumeAttempts) {
    if (handlers_.onWarning) {
      handlers_.onWarning(describe() + " closed its event stream " + std::to_string(attempt) +
                          " times in a row; kaja stopped listening, so messages it starts "
                          "itself will not arrive.");
    }
    return;
  }
  auto lastId = std::make_shared<std::string>(exchange.sse.lastEventId());
  after(reconnectDelay(exchange.sse.retry(), options_.defaultRetry, attempt),
        [this, lastId, attempt] { openListenStream(*lastId, attempt); });
}

Error HttpTransport::sessionExpiredError(const std::string& why) const {
  return Error{ErrorCode::kConnect,
               describe() + "'s session expired and kaja could not renew it (" + why + ").",
               options_.serverName, std::string(kSessionExpiredDetail)};
}

}  // namespace kaja::core::mcp
