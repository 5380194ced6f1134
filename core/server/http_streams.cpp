// The HTTP front's sessions and their streams: where each message a session sends goes.
#include <boost/asio/post.hpp>

#include "core/server/http_checks.h"
#include "core/server/http_front_impl.h"
#include "core/server/wire.h"

namespace kaja::core::server {
namespace asio = boost::asio;
using mcp::Json;

namespace {

// Finished streams whose connection broke are kept this many per session for replay.
constexpr std::size_t kKeptDetachedStreams = 16;
// Past this many streams in a session, the oldest one without a connection stops keeping
// events for replay, so that requests left behind by broken connections cost little.
constexpr std::size_t kMaxReplayingStreams = 64;

/// A session's way out: weak links, so that a session kept alive elsewhere keeps nothing of
/// the front alive.
class HttpOutbox final : public Outbox {
 public:
  HttpOutbox(std::weak_ptr<HttpFront::Impl> front, std::weak_ptr<SessionState> state)
      : front_(std::move(front)), state_(std::move(state)) {}
  void send(Json message, const Json& relatedTo) override {
    auto front = front_.lock();
    auto state = state_.lock();
    if (front && state) front->deliver(state, std::move(message), relatedTo);
  }

 private:
  std::weak_ptr<HttpFront::Impl> front_;
  std::weak_ptr<SessionState> state_;
};

}  // namespace

std::shared_ptr<SessionState> HttpFront::Impl::newSession(bool stateless,
                                                          const RouteDecision& route) {
  auto state = std::make_shared<SessionState>();
  state->endpoint = route.endpoint;
  state->owner = route.owner;
  if (!state->owner.empty()) ++ownerSessions[state->owner];
  state->stateless = stateless;
  state->key = nextSessionKey++;
  if (!stateless) {
    state->standalone = std::make_shared<ReplyStream>();
    state->standalone->number = nextStream++;
    state->standalone->standalone = true;
    state->streams.emplace(state->standalone->number, state->standalone);
  }
  state->session = route.sessions(std::make_shared<HttpOutbox>(weak_from_this(), state));
  return state;
}

void HttpFront::Impl::deliver(const std::shared_ptr<SessionState>& state, Json message,
                              const Json& relatedTo) {
  if (state->ended || stopped) return;
  const bool response = wire::isResponse(message);
  const std::string key = relatedTo.is_null() ? std::string() : relatedTo.dump();
  std::shared_ptr<ReplyStream> stream;
  if (state->stateless) {
    // One request, one stream: everything the session says goes there.
    if (!state->streams.empty()) stream = state->streams.begin()->second;
  } else if (!key.empty()) {
    if (const auto found = state->byRequest.find(key); found != state->byRequest.end()) {
      stream = found->second;
    }
  }
  const bool answers = stream && response && stream->pending.contains(key);
  if (stream && stream->deferred) {
    stream->deferred = false;
    if (answers && http_checks::statelessStatus(message) != 200) {
      stream->json = true;
    } else if (stream->connection && stream->connection->isOpen()) {
      stream->connection->beginSse({}, stream->standing);
    }
  }
  if (stream && stream->json && !answers) stream = nullptr;  // a JSON reply holds responses only
  if (!stream) {
    // A response to no open request has nowhere to go; anything else takes the GET stream.
    if (response || state->stateless) return;
    stream = state->standalone;
  }
  if (answers && key == state->initializeKey) {
    if (const auto result = message.find("result"); result != message.end() && result->is_object())
      state->protocolVersion = result->value("protocolVersion", "");
    if (message.contains("error")) {
      asio::post(io, [self = shared_from_this(), state] { self->endSession(state); });
    }
  }
  if (stream->json) {
    stream->jsonReplies.push_back(std::move(message));
  } else {
    pushEvent(*stream, message);
  }
  if (!answers) return;
  stream->pending.erase(key);
  state->byRequest.erase(key);
  if (stream->pending.empty()) completeStream(state, stream);
}

void HttpFront::Impl::pushEvent(ReplyStream& stream, const Json& message) {
  const std::uint64_t seq = stream.nextSeq++;
  std::string text;
  if (stream.withIds) {
    text = "id: " + std::to_string(stream.number) + "-" + std::to_string(seq) + "\n";
  }
  text += "data: ";
  wire::appendJson(message, text);
  text += "\n\n";
  if (stream.connection && stream.connection->isOpen()) {
    stream.connection->pushEvent(text);
    stream.delivered = seq;
  }
  if (!stream.withIds || stream.evicted) return;
  stream.replayBytes += text.size();
  stream.replay.push_back(StreamEvent{seq, std::move(text)});
  while (stream.replay.size() > 1 && stream.replayBytes > options.replayBytes) {
    stream.replayBytes -= stream.replay.front().text.size();
    stream.replay.pop_front();
  }
}

void HttpFront::Impl::limitStreams(SessionState& state) {
  if (state.streams.size() <= kMaxReplayingStreams) return;
  for (auto it = state.streams.begin(); it != state.streams.end(); ++it) {
    ReplyStream& stream = *it->second;
    if (stream.standalone || (stream.connection && stream.connection->isOpen())) continue;
    stream.evicted = true;
    stream.replay.clear();
    stream.replayBytes = 0;
    state.streams.erase(it);  // byRequest still routes its responses, to nowhere
    return;
  }
}

void HttpFront::Impl::attach(const std::shared_ptr<SessionState>& state,
                             const std::shared_ptr<ReplyStream>& stream,
                             const std::shared_ptr<HttpConnection>& connection,
                             std::uint64_t after) {
  stream->connection = connection;
  connection->setOnBroken([self = weak_from_this(), weakState = std::weak_ptr(state),
                           weakStream = std::weak_ptr(stream)] {
    if (auto front = self.lock()) front->detach(weakState, weakStream);
  });
  for (const auto& event : stream->replay) {
    if (event.seq <= after) continue;
    connection->pushEvent(event.text);
    stream->delivered = event.seq;
  }
}

void HttpFront::Impl::completeStream(const std::shared_ptr<SessionState>& state,
                                     const std::shared_ptr<ReplyStream>& stream) {
  stream->complete = true;
  const auto connection = stream->connection;
  const bool live = connection && connection->isOpen();
  if (live) {
    connection->setOnBroken(nullptr);
    if (stream->json) {
      std::string body;
      if (stream->batch) {
        wire::appendJson(Json(std::move(stream->jsonReplies)), body);
      } else if (!stream->jsonReplies.empty()) {
        wire::appendJson(stream->jsonReplies.front(), body);
      }
      HeaderList headers;
      if (!state->id.empty()) headers.emplace_back("Mcp-Session-Id", state->id);
      const unsigned status = state->stateless && !stream->batch && !stream->jsonReplies.empty()
                                  ? http_checks::statelessStatus(stream->jsonReplies.front())
                                  : 200;
      connection->respond(static_cast<http::status>(status), std::move(body), headers);
    } else {
      connection->endSse();
    }
  }
  stream->connection.reset();
  if (state->stateless) {
    asio::post(io, [self = shared_from_this(), state] { self->endSession(state); });
    return;
  }
  if (live || stream->json) {
    state->streams.erase(stream->number);
    return;
  }
  // Kept for a GET with Last-Event-ID; only the newest few finished ones.
  std::size_t finished = 0;
  for (auto it = state->streams.rbegin(); it != state->streams.rend(); ++it) {
    if (!it->second->complete) continue;
    if (++finished > kKeptDetachedStreams) {
      state->streams.erase(std::next(it).base());
      break;
    }
  }
}

void HttpFront::Impl::detach(const std::weak_ptr<SessionState>& weakState,
                             const std::weak_ptr<ReplyStream>& weakStream) {
  auto state = weakState.lock();
  auto stream = weakStream.lock();
  if (!state || !stream) return;
  stream->connection.reset();
  state->lastActive = std::chrono::steady_clock::now();
  // At 2026-07-28 closing the response stream cancels the request. Posted: a dropped
  // connection can be noticed inside the session's own send().
  if (state->stateless) {
    asio::post(io, [self = shared_from_this(), state] { self->endSession(state); });
  }
}

// NOLINTNEXTLINE(performance-unnecessary-value-param): by value, since it erases the map's copy
void HttpFront::Impl::endSession(std::shared_ptr<SessionState> state) {
  if (state->ended) return;
  state->ended = true;
  if (state->stateless) {
    statelessSessions.erase(state->key);
  } else {
    sessions.erase(state->id);
  }
  if (const auto owner = ownerSessions.find(state->owner); owner != ownerSessions.end()) {
    if (--owner->second == 0) ownerSessions.erase(owner);
  }
  for (const auto& [number, stream] : state->streams) {
    if (auto connection = std::exchange(stream->connection, nullptr)) {
      connection->setOnBroken(nullptr);
      if (stream->json || stream->deferred) {
        connection->close();
      } else {
        connection->endSse();
      }
    }
  }
  state->streams.clear();
  state->byRequest.clear();
  state->standalone.reset();
  if (auto session = std::exchange(state->session, nullptr)) session->end();
}

void HttpFront::Impl::receiveAll(const std::shared_ptr<SessionState>& state,
                                 std::vector<mcp::Message> messages) {
  for (auto& message : messages) {
    if (state->ended || !state->session) return;
    const auto session = state->session;
    session->receive(std::move(message));
  }
}

}  // namespace kaja::core::server
