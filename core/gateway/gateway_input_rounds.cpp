// Input rounds for 2026-07-28 clients (SEP-2322). Such a client has no session kaja could
// send a request on, so what a request needs from it while it runs (kaja's approval, or a
// server's elicitation/create or sampling/createMessage) goes back as an input_required
// result. The request itself goes on waiting at kaja: its session is kept under the
// requestState it gave, an unguessable token, and the client's retry (a new request, in a new
// session) hands it the answers and the stream to reply on. This also lets a stateless client
// answer a 2025-11-25 server that asks mid-call with a request of its own.
#include <algorithm>
#include <boost/asio/post.hpp>
#include <cctype>

#include "core/gateway/gateway_session.h"  // IWYU pragma: associated
#include "core/gateway/gateway_util.h"
#include "core/server/http_checks.h"

namespace kaja::core::gateway {

using mcp::Json;

namespace {

// The most questions one request may have open, as kaja's client allows a server.
constexpr std::size_t kMaxAsks = 16;
// The most requests that may wait for their retry at once, over all clients, and the most
// bytes of their requests kaja holds meanwhile.
constexpr std::size_t kMaxWaiting = 256;
constexpr std::size_t kMaxWaitingBytes = 64UL * 1024 * 1024;
constexpr std::string_view kTokenPrefix = "kaja-round-";
// The longest key of a server's that kaja passes on as it is, and the most bytes of one
// question (a 2025 server's request has no other bound than the line limit).
constexpr std::size_t kMaxKeyBytes = 200;
constexpr std::size_t kMaxQuestionBytes = 1024UL * 1024;

// A key of letters, digits and "_.-" is passed on; any other (control or look-alike
// characters included) is replaced by one of kaja's, which maps back to it.
bool plainKey(const std::string& key) {
  return !key.empty() && key.size() <= kMaxKeyBytes && std::ranges::all_of(key, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '-';
  });
}

bool hasRounds(const std::string& method) {
  return method == "tools/call" || method == "prompts/get" || method == "resources/read";
}

std::string nameIn(const std::string& method, const Json& params) {
  return stringAt(params, method == "resources/read" ? "uri" : "name");
}

// What a retry must repeat of its request: everything but _meta and the round's own fields.
std::size_t fingerprintOf(const Json& params, std::size_t* bytes = nullptr) {
  Json kept = params.is_object() ? params : Json::object();
  if (kept.is_object()) {
    kept.erase("_meta");
    kept.erase("inputResponses");
    kept.erase("requestState");
  }
  const std::string text = kept.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (bytes != nullptr) *bytes = text.size();
  return std::hash<std::string>{}(text);
}

std::string seconds(std::chrono::milliseconds duration) {
  return std::to_string(std::max<std::int64_t>(1, duration.count() / 1000)) + " s";
}

}  // namespace

Json GatewaySession::capabilitiesFor(const std::string& ability) const {
  Json caps = Json::object();
  for (const char* asked : {"elicitation", "sampling"}) {
    if (clientCapabilities_.is_object() && clientCapabilities_.contains(asked)) {
      caps[asked] =
          clientCapabilities_[asked].is_object() ? clientCapabilities_[asked] : Json::object();
    }
  }
  const Activation* activation = gateway_->activationOf(ability);
  if (activation != nullptr && activation->ability.roots) caps["roots"] = Json::object();
  return caps;
}

void GatewaySession::noteRoundRequest(const mcp::Request& request) {
  if (!stateless_ || !roundRequestId_.is_null() || !hasRounds(request.method)) return;
  roundRequestId_ = request.id;
  replyId_ = request.id;
  roundMethod_ = request.method;
  roundName_ = nameIn(request.method, request.params);
  roundFingerprint_ = fingerprintOf(request.params, &roundBytes_);
}

std::string GatewaySession::answersProblem(const Json& inputResponses) const {
  for (const auto& ask : inputAsks_) {
    const auto answer = inputResponses.find(ask.key);
    if (answer != inputResponses.end() && !answer->is_object()) {
      return "inputResponses[\"" + mcp::clip(ask.key, 80) + "\"] must be the object that answers " +
             ask.method + ", not a " + answer->type_name();
    }
  }
  return "";
}

bool GatewaySession::takeRetry(const mcp::Request& request) {
  if (!stateless_ || !request.params.is_object()) return false;
  const auto state = request.params.find("requestState");
  if (state == request.params.end()) return false;
  const auto refuse = [&](const std::string& why) {
    respondError(request.id, rpc::kInvalidParams, why);
    return true;
  };
  if (!hasRounds(request.method)) {
    return refuse(
        "requestState belongs to a retry of tools/call, prompts/get or resources/read, "
        "not " +
        mcp::clip(request.method, 60));
  }
  if (!state->is_string()) return refuse("requestState must be the string kaja gave");
  const auto responses = request.params.find("inputResponses");
  if (responses != request.params.end() && !responses->is_object()) {
    return refuse("inputResponses must be an object of answers by the keys of inputRequests");
  }
  const auto waiting = gateway_->suspended.find(state->get<std::string>());
  if (waiting == gateway_->suspended.end()) {
    return refuse(
        "no request of kaja waits for this requestState: it was changed, its round "
        "ended (one waits " +
        seconds(approvalTimeout()) +
        "), or kaja restarted; send the request again without requestState");
  }
  const std::shared_ptr<GatewaySession> carried = waiting->second;
  const std::string name = nameIn(request.method, request.params);
  if (carried->roundMethod() != request.method || carried->roundName() != name) {
    return refuse("this requestState belongs to " + carried->roundMethod() + " of \"" +
                  mcp::clip(carried->roundName(), 80) + "\", not " + request.method + " of \"" +
                  mcp::clip(name, 80) + "\"; send it with the request it came with");
  }
  // What runs is what was asked about: a retry that changes the request is not that retry.
  if (carried->roundFingerprint_ != fingerprintOf(request.params)) {
    return refuse(
        "this retry's arguments differ from those of the request that got this "
        "requestState; repeat that request as it was, with inputResponses added");
  }
  if (responses != request.params.end()) {
    if (const std::string problem = carried->answersProblem(*responses); !problem.empty()) {
      return refuse(problem);
    }
  }
  gateway_->suspended.erase(waiting);
  gateway_->suspendedBytes -= std::min(gateway_->suspendedBytes, carried->roundBytes_);
  carrying_ = carried;
  carried->resumeRound(outbox_, request.id,
                       responses == request.params.end() ? Json::object() : *responses,
                       clientCapabilities_);
  return true;
}

void GatewaySession::askInput(const std::string& method, Json params,
                              std::function<void(Result<Json>)> done, const std::string& inputKey) {
  if (ended_ || answered_ || roundRequestId_.is_null()) {
    done(fail(ErrorCode::kRefused, "the client's request has ended"));
    return;
  }
  if (!params.is_object()) {
    done(fail(ErrorCode::kProtocol, std::string("the server's ") + method +
                                        " has params that are a " + params.type_name() +
                                        ", not an object"));
    return;
  }
  if (const std::size_t bytes = params.dump(-1, ' ', false, Json::error_handler_t::replace).size();
      bytes > kMaxQuestionBytes) {
    done(fail(ErrorCode::kRefused, "the server's " + method + " takes " + std::to_string(bytes) +
                                       " bytes, more than the " +
                                       std::to_string(kMaxQuestionBytes) + " kaja passes on"));
    return;
  }
  if (inputAsks_.size() >= kMaxAsks) {
    done(fail(ErrorCode::kRefused, "more than " + std::to_string(kMaxAsks) +
                                       " questions wait on one request of this client"));
    return;
  }
  // A server's own key is kept, so its client sees the request as the server made it; a
  // key of kaja's own is made for the rest (and for a key already open, or oversized).
  std::string key = inputKey;
  const bool taken =
      std::ranges::any_of(inputAsks_, [&](const auto& ask) { return ask.key == key; });
  if (!plainKey(key) || key.starts_with("kaja_") || taken) {
    const std::string kind = method == "elicitation/create"       ? "elicitation"
                             : method == "sampling/createMessage" ? "sampling"
                                                                  : "input";
    key = "kaja_" + kind + "_" + std::to_string(nextAskKey_++);
  }
  inputAsks_.push_back({std::move(key), method, std::move(params), std::move(done)});
  // Questions asked together go in one round; one asked while the client is away goes out
  // when its retry comes.
  if (suspended_ || roundPosted_) return;
  roundPosted_ = true;
  boost::asio::post(gateway_->io, [weak = weak_from_this()] {
    if (auto self = weak.lock()) self->sendInputRound();
  });
}

void GatewaySession::sendInputRound() {
  roundPosted_ = false;
  if (ended_ || suspended_ || answered_ || inputAsks_.empty()) return;
  if (gateway_->suspended.size() >= kMaxWaiting ||
      gateway_->suspendedBytes + roundBytes_ > kMaxWaitingBytes) {
    failAsks("kaja already holds " + std::to_string(gateway_->suspended.size()) + " requests (" +
                 std::to_string(gateway_->suspendedBytes / (1024UL * 1024)) +
                 " MB) that wait for their clients' answers; try again when they end",
             ErrorCode::kRefused);
    return;
  }
  auto token = server::http_checks::newSessionId();
  if (!token) {
    failAsks(token.error().message, ErrorCode::kIo);
    return;
  }
  roundToken_ = std::string(kTokenPrefix) + *token;
  Json requests = Json::object();
  for (const auto& ask : inputAsks_) {
    requests[ask.key] = {{"method", ask.method}, {"params", ask.params}};
  }
  // Registered before the answer goes out: the front may end this session inside send().
  gateway_->suspended[roundToken_] = shared_from_this();
  gateway_->suspendedBytes += roundBytes_;
  suspended_ = true;
  roundTimer_ = std::make_unique<boost::asio::steady_timer>(gateway_->io, approvalTimeout());
  roundTimer_->async_wait(
      [weak = weak_from_this(), token = roundToken_](const boost::system::error_code& ec) {
        auto self = weak.lock();
        if (ec || !self || !self->suspended_ || self->roundToken_ != token) return;
        self->expireRound();
      });
  Json body = {{"resultType", "input_required"},
               {"inputRequests", std::move(requests)},
               {"requestState", roundToken_}};
  finishBody(body);
  outbox_->send({{"jsonrpc", "2.0"}, {"id", replyId_}, {"result", std::move(body)}}, replyId_);
}

void GatewaySession::resumeRound(std::shared_ptr<server::Outbox> outbox, const Json& retryId,
                                 const Json& inputResponses, Json clientCapabilities) {
  if (roundTimer_) roundTimer_->cancel();
  suspended_ = false;
  roundToken_.clear();
  outbox_ = std::move(outbox);
  replyId_ = retryId;
  if (clientCapabilities.is_object()) clientCapabilities_ = std::move(clientCapabilities);
  if (heldReply_) {
    Json reply = std::move(*heldReply_);
    heldReply_.reset();
    reply["id"] = replyId_;
    outbox_->send(std::move(reply), replyId_);
    return;
  }
  // Answers to keys kaja did not ask are ignored; a question left unanswered is asked again.
  std::vector<InputAsk> answered;
  std::vector<InputAsk> open;
  for (auto& ask : inputAsks_) {
    (inputResponses.contains(ask.key) ? answered : open).push_back(std::move(ask));
  }
  inputAsks_ = std::move(open);
  for (auto& ask : answered) ask.done(inputResponses[ask.key]);
  if (!inputAsks_.empty() && !suspended_ && !answered_ && !roundPosted_ && !ended_) {
    roundPosted_ = true;
    boost::asio::post(gateway_->io, [weak = weak_from_this()] {
      if (auto self = weak.lock()) self->sendInputRound();
    });
  }
}

void GatewaySession::expireRound() {
  if (gateway_->suspended.erase(roundToken_) != 0) {
    gateway_->suspendedBytes -= std::min(gateway_->suspendedBytes, roundBytes_);
  }
  suspended_ = false;
  roundToken_.clear();
  failAsks("the client did not answer within " + seconds(approvalTimeout()), ErrorCode::kTimeout);
  // Nobody holds a stream for the answer: the request ends here, and its server is told.
  end();
}

void GatewaySession::abandonRound() {
  suspended_ = false;
  roundToken_.clear();
  end();
}

void GatewaySession::retryStreamEnded(const std::shared_ptr<server::Outbox>& outbox) {
  // The client closed the retry's stream while the request ran: at 2026-07-28 that cancels it.
  if (!suspended_ && outbox_ == outbox) end();
}

void GatewaySession::failAsks(const std::string& why, ErrorCode code) {
  auto asks = std::exchange(inputAsks_, {});
  for (auto& ask : asks) ask.done(fail(code, why));
}

}  // namespace kaja::core::gateway
