// Client's subscriptions/listen stream at 2026-07-28, and what stands in for the session
// methods that version removed. A server sends change notifications only on that stream,
// and only those its filter asks for: tool, prompt and resource list changes, and updates of
// the resources named in resourceSubscriptions. So a resources/subscribe or unsubscribe
// changes the filter (the stream is closed and opened again with the new one, and the
// request succeeds once the server acknowledges it), and logging/setLevel sets the level
// every later request names in its _meta.
#include <algorithm>
#include <array>
#include <boost/asio/post.hpp>
#include <cstdint>
#include <random>

#include "core/mcp/client.h"

namespace kaja::core::mcp {
namespace asio = boost::asio;

namespace {

// The backoff of a closed subscriptions/listen stream, and how long one must have stayed up
// for the next close to start the backoff over.
constexpr std::chrono::milliseconds kFirstListenRetry{500};
constexpr std::chrono::milliseconds kMaxListenRetry{30000};
constexpr std::chrono::seconds kHealthyListen{10};
// More resources than this in one filter are refused (a gateway lets each of its clients
// follow a share of them).
constexpr std::size_t kMaxSubscribedUris = 4096;
// ...and than this many bytes of URIs, since every change sends the whole filter again.
constexpr std::size_t kMaxSubscribedBytes = 1024UL * 1024;
constexpr std::size_t kMaxUriBytes = 8192;
constexpr std::array<std::string_view, 8> kLogLevels = {"debug", "info",     "notice", "warning",
                                                        "error", "critical", "alert",  "emergency"};

bool declares(const Json& capabilities, const char* kind, const char* flag) {
  const auto it = capabilities.find(kind);
  if (it == capabilities.end() || !it->is_object()) return false;
  const auto value = it->find(flag);
  return value != it->end() && value->is_boolean() && value->get<bool>();
}

}  // namespace

Json Client::listenFilter() const {
  const Json& capabilities = serverInfo_.capabilities;
  Json filter = Json::object();
  if (toolsChangedHandler_ && declares(capabilities, "tools", "listChanged")) {
    filter["toolsListChanged"] = true;
  }
  if (!subscribedUris_.empty()) filter["resourceSubscriptions"] = Json(subscribedUris_);
  // The other list changes ride along on a stream that is open anyway.
  if (!filter.empty() && notificationHandler_) {
    if (declares(capabilities, "prompts", "listChanged")) filter["promptsListChanged"] = true;
    if (declares(capabilities, "resources", "listChanged")) filter["resourcesListChanged"] = true;
  }
  return filter;
}

void Client::listen() {
  // The request has no deadline: it lasts as long as the stream.
  if (listening_ || !stateless_ || state_ != State::kReady) return;
  Json filter = listenFilter();
  if (filter.empty()) {
    // Nothing left to follow: no stream is the filter, and the server needs to take none.
    listenUris_.clear();
    acknowledgedUris_.clear();
    settleAcknowledged();
    return;
  }
  listening_ = true;
  listenOpened_ = Clock::now();
  listenUris_ = subscribedUris_;
  const std::uint64_t generation = listenGeneration_;
  listenId_ = startRequest("subscriptions/listen", "subscriptions/listen",
                           withMeta(Json{{"notifications", std::move(filter)}}),
                           std::chrono::milliseconds(-1),
                           [weak = weak_from_this(), generation](Result<Json> result) {
                             auto self = weak.lock();
                             if (!self || generation != self->listenGeneration_) return;
                             self->onListenEnded(std::move(result));
                           },
                           {});
  armListenAckTimer();
}

void Client::armListenAckTimer() {
  if (listenWaiters_.empty()) return;
  const auto earliest = std::ranges::min_element(listenWaiters_, {}, &ListenWaiter::deadline);
  listenAckTimer_.expires_at(earliest->deadline);
  listenAckTimer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self) return;
    self->failCarried(
        self->makeError(ErrorCode::kTimeout, self->describe() +
                                                 " did not acknowledge the new subscriptions "
                                                 "within the request timeout; kaja gave up."),
        Clock::now());
    // The open stream still asks for what failed.
    if (self->listening_ && self->listenUris_ != self->subscribedUris_) {
      self->relisten();
    } else {
      self->armListenAckTimer();
    }
  });
}

void Client::onListenEnded(Result<Json> result) {
  listening_ = false;
  listenId_ = 0;
  std::size_t givenUp = 0;
  if (!listenWaiters_.empty()) {
    givenUp = failCarried(
        result ? makeError(ErrorCode::kProtocol, describe() + " ended the listen stream before "
                                                              "acknowledging the subscriptions.")
               : result.error());
  }
  // A result, or a JSON-RPC error, is the server ending the subscription on purpose; a
  // stream that broke (a restart, a network blip) is opened again.
  if (result || state_ != State::kReady) return;
  if (result.error().rpcCode != 0) {
    // A refused change leaves the server without any filter: one without the resources it
    // added is asked for (a refusal of that one too, with nothing new in it, is final).
    if (givenUp > 0) {
      listen();
      return;
    }
    warn(describe() + " stopped sending changes: " + result.error().message);
    return;
  }
  reopenListenLater(result.error());
}

void Client::stopListening() {
  if (!listening_) return;
  // The callback of the stream given up on must not reopen it.
  ++listenGeneration_;
  listening_ = false;
  const std::int64_t id = std::exchange(listenId_, 0);
  if (pending_.giveUp(id)) {
    notify("notifications/cancelled", {{"requestId", id}, {"reason", "the filter changed"}});
  }
}

void Client::relistenSoon() {
  if (std::exchange(relistenPosted_, true)) return;
  asio::post(io_, [weak = weak_from_this()] {
    auto self = weak.lock();
    if (!self) return;
    self->relistenPosted_ = false;
    self->relisten();
  });
}

void Client::relisten() {
  stopListening();
  // A broken stream waiting to be reopened missed what changed meanwhile.
  if (listenTimer_.cancel() > 0) relistOnListen_ = true;
  listen();
}

void Client::onListenAcknowledged() {
  acknowledgedUris_ = listenUris_;
  settleAcknowledged();
}

void Client::settleAcknowledged() {
  std::vector<ListenWaiter> waiting;
  for (auto& waiter : std::exchange(listenWaiters_, {})) {
    // A change made after this stream opened waits for the stream that carries it; one a
    // later change undid (a subscribe then an unsubscribe) is done with.
    const bool superseded = waiter.adding != subscribedUris_.contains(waiter.uri);
    if (waiter.adding != acknowledgedUris_.contains(waiter.uri) && !superseded) {
      waiting.push_back(std::move(waiter));
      continue;
    }
    asio::post(io_, [done = std::move(waiter.done)] { done(Json::object()); });
  }
  listenWaiters_ = std::move(waiting);
  if (listenWaiters_.empty()) listenAckTimer_.cancel();
}

std::size_t Client::failCarried(const Error& error, Clock::time_point due) {
  std::size_t givenUp = 0;
  std::vector<ListenWaiter> waiting;
  for (auto& waiter : std::exchange(listenWaiters_, {})) {
    // A waiter whose own time has not run out keeps waiting (the reopen it needs follows).
    // One whose time ran out (`due` is a time) settles whatever its state, so none waits
    // for ever.
    const bool settling = waiter.deadline <= due;
    const bool timedOut = due != Clock::time_point::max();
    if (settling && (waiter.adding == acknowledgedUris_.contains(waiter.uri) ||
                     (!waiter.adding && (timedOut || !listenUris_.contains(waiter.uri))))) {
      // In effect already: an earlier stream that the server acknowledged carried it; or a
      // removal, in effect all the same: no stream of the server's follows the resource any
      // more (or the reopen on its way will not), and none kaja opens will.
      asio::post(io_, [done = std::move(waiter.done)] { done(Json::object()); });
    } else if (settling && waiter.adding && (timedOut || listenUris_.contains(waiter.uri))) {
      // An addition the failed stream carried is given up; so is, once its time is up, one
      // no stream carried yet or that a later removal took out.
      if (subscribedUris_.erase(waiter.uri) > 0) ++givenUp;
      asio::post(io_, [done = std::move(waiter.done), error] { done(std::unexpected(error)); });
    } else {
      // Not due yet, or not sent yet: the reopen already on its way carries it.
      waiting.push_back(std::move(waiter));
    }
  }
  listenWaiters_ = std::move(waiting);
  if (listenWaiters_.empty()) listenAckTimer_.cancel();
  return givenUp;
}

void Client::failListenWaiters(const Error& error) {
  listenAckTimer_.cancel();
  subscribedUris_ = acknowledgedUris_;
  for (auto& waiter : std::exchange(listenWaiters_, {})) {
    asio::post(io_, [done = std::move(waiter.done), error] { done(std::unexpected(error)); });
  }
}

std::int64_t Client::subscribe(const std::string& method, const Json& params, ResultCallback done) {
  const std::int64_t id = pending_.nextId();
  const auto uri = params.is_object() ? params.find("uri") : params.end();
  if (!params.is_object() || uri == params.end() || !uri->is_string() ||
      uri->get_ref<const std::string&>().empty() ||
      uri->get_ref<const std::string&>().size() > kMaxUriBytes) {
    Error error = makeError(ErrorCode::kProtocol, method + " needs a \"uri\" string of at most " +
                                                      std::to_string(kMaxUriBytes) + " bytes.");
    error.rpcCode = -32602;
    postFailure(std::move(done), std::move(error));
    return id;
  }
  if (!declares(serverInfo_.capabilities, "resources", "subscribe")) {
    Error error = makeError(ErrorCode::kProtocol, describe() +
                                                      " does not offer resource "
                                                      "subscriptions.");
    error.rpcCode = -32601;
    postFailure(std::move(done), std::move(error));
    return id;
  }
  const std::string& text = uri->get_ref<const std::string&>();
  const bool adding = method == "resources/subscribe";
  if (adding == subscribedUris_.contains(text)) {
    if (adding == acknowledgedUris_.contains(text)) {
      asio::post(io_, [done = std::move(done)] { done(Json::object()); });
    } else {
      // The same change is on its way: this request shares its outcome.
      listenWaiters_.push_back(
          {text, adding, std::move(done), Clock::now() + options_.requestTimeout});
    }
    return id;
  }
  std::size_t bytes = text.size();
  for (const auto& held : subscribedUris_) bytes += held.size();
  if (adding && (subscribedUris_.size() >= kMaxSubscribedUris || bytes > kMaxSubscribedBytes)) {
    postFailure(std::move(done),
                makeError(ErrorCode::kRefused,
                          "kaja follows at most " + std::to_string(kMaxSubscribedUris) +
                              " resources (1 MB of URIs) of " + describe() + " at once."));
    return id;
  }
  if (adding) {
    subscribedUris_.insert(text);
  } else {
    subscribedUris_.erase(text);
  }
  listenWaiters_.push_back({text, adding, std::move(done), Clock::now() + options_.requestTimeout});
  relistenSoon();
  return id;
}

std::int64_t Client::setLogLevel(const Json& params, ResultCallback done) {
  const std::int64_t id = pending_.nextId();
  const auto level = params.is_object() ? params.find("level") : params.end();
  if (level == params.end() || !level->is_string() ||
      std::ranges::find(kLogLevels, level->get_ref<const std::string&>()) == kLogLevels.end()) {
    Error error = makeError(ErrorCode::kProtocol,
                            "logging/setLevel needs a \"level\": one of debug, info, notice, "
                            "warning, error, critical, alert, emergency.");
    error.rpcCode = -32602;
    postFailure(std::move(done), std::move(error));
    return id;
  }
  logLevel_ = level->get<std::string>();
  asio::post(io_, [done = std::move(done)] { done(Json::object()); });
  return id;
}

void Client::reopenListenLater(const Error& why) {
  // 0.5 s doubling to 30 s, each wait drawn from its upper half so that many clients of one
  // restarted server do not come back in step; a stream that stayed up starts over.
  if (Clock::now() - listenOpened_ >= kHealthyListen) listenDrops_ = 0;
  if (listenDrops_ == 0) {
    warn(describe() + "'s listen stream closed (" + why.message + "); kaja opens it again.");
  }
  auto delay = kFirstListenRetry;
  for (int i = 0; i < listenDrops_ && delay < kMaxListenRetry; ++i)
    delay = std::min(delay * 2, kMaxListenRetry);
  ++listenDrops_;
  std::random_device random;
  const auto half = delay.count() / 2;
  delay = std::chrono::milliseconds(
      half + std::uniform_int_distribution<std::int64_t>(0, delay.count() - half)(random));
  listenTimer_.expires_after(delay);
  listenTimer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || !self->isReady() || !self->transport_->isOpen() || self->listening_) return;
    self->relistOnListen_ = true;
    self->listen();
  });
}

}  // namespace kaja::core::mcp
