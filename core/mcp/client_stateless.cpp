// Client's side of the stateless protocol 2026-07-28: server/discover with a fallback to
// the initialize handshake, the _meta every request carries, input_required results
// (multi-round-trip requests, SEP-2322) and the tools whose arguments become headers.
#include <algorithm>
#include <boost/asio/post.hpp>
#include <cstdint>

#include "core/mcp/client.h"

namespace kaja::core::mcp {
namespace asio = boost::asio;

namespace {

// A server that keeps asking for more input would otherwise hold a call forever.
constexpr int kMaxInputRounds = 16;
// The most inputs one input_required round may ask for, the most bytes they may take, and
// the most bytes of the state kaja holds and sends back for the server.
constexpr std::size_t kMaxInputRequests = 16;
constexpr std::size_t kMaxInputRequestBytes = 1024UL * 1024;
constexpr std::size_t kMaxRequestStateBytes = 1024UL * 1024;

std::string formatDuration(std::chrono::milliseconds duration) {
  if (duration.count() % 1000 == 0) return std::to_string(duration.count() / 1000) + " s";
  return std::to_string(duration.count()) + " ms";
}

/// Returns "" when an input_required result can be followed, else why not.
std::string checkInputRequired(const Json& result) {
  const auto requests = result.find("inputRequests");
  if (requests != result.end() && !requests->is_object()) {
    return std::string("its inputRequests is a ") + requests->type_name() + ", not an object";
  }
  if (requests != result.end() && requests->size() > kMaxInputRequests) {
    return "it asks for " + std::to_string(requests->size()) + " inputs at once, more than the " +
           std::to_string(kMaxInputRequests) + " kaja answers";
  }
  if (requests != result.end()) {
    const std::size_t bytes = requests->dump(-1, ' ', false, Json::error_handler_t::replace).size();
    if (bytes > kMaxInputRequestBytes) {
      return "its inputRequests take " + std::to_string(bytes) + " bytes, more than the " +
             std::to_string(kMaxInputRequestBytes) + " kaja passes on";
    }
  }
  if (const auto state = result.find("requestState"); state != result.end()) {
    if (!state->is_string()) {
      return std::string("its requestState is a ") + state->type_name() + ", not a string";
    }
    if (state->get_ref<const std::string&>().size() > kMaxRequestStateBytes) {
      return "its requestState is " + std::to_string(state->get_ref<const std::string&>().size()) +
             " bytes, more than the " + std::to_string(kMaxRequestStateBytes) + " kaja keeps";
    }
  }
  return "";
}

bool listsVersion(const Json& object, const char* key, std::string_view version) {
  if (!object.is_object()) return false;
  const auto list = object.find(key);
  if (list == object.end() || !list->is_array()) return false;
  return std::any_of(list->begin(), list->end(),
                     [version](const Json& item) { return item.is_string() && item == version; });
}

std::string stringAt(const Json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Json Client::withMeta(Json params) const {
  if (!params.is_object()) params = Json::object();
  Json& meta = params["_meta"];
  if (!meta.is_object()) meta = Json::object();
  meta["io.modelcontextprotocol/protocolVersion"] = std::string(kStatelessProtocolVersion);
  // A caller may declare less than kaja could answer (a gateway declares its client's).
  if (auto given = meta.find(kMetaClientCapabilities); given == meta.end() || !given->is_object()) {
    meta[kMetaClientCapabilities] = clientCapabilities();
  }
  meta["io.modelcontextprotocol/clientInfo"] = {{"name", options_.clientName},
                                                {"version", options_.clientVersion}};
  // The level a logging/setLevel chose, unless the caller named one for this request (a null
  // one names none).
  if (auto named = meta.find(kMetaLogLevel); named != meta.end()) {
    if (named->is_null()) meta.erase(named);
  } else if (!logLevel_.empty()) {
    meta[kMetaLogLevel] = logLevel_;
  }
  return params;
}

void Client::sendDiscover(const ConnectDone& once, int attempt) {
  transport_->setProtocolVersion(std::string(kStatelessProtocolVersion));
  startRequest("server/discover", "server/discover", withMeta(Json::object()),
               std::chrono::milliseconds(-1),
               [weak = weak_from_this(), once, attempt](Result<Json> result) {
                 auto self = weak.lock();
                 if (!self || !*once) return;
                 self->onDiscovered(std::move(result), once, attempt);
               },
               {});
}

void Client::onDiscovered(Result<Json> result, const ConnectDone& once, int attempt) {
  if (!transport_->isOpen()) {
    connectTimer_.cancel();
    auto callback = std::exchange(*once, nullptr);
    callback(std::unexpected(result ? makeError(ErrorCode::kConnect, describe() + " is closed.")
                                    : result.error()));
    return;
  }
  if (!result) {
    // An UnsupportedProtocolVersionError lists what the server speaks in its data; when
    // that includes our version the rejection was spurious, so ask once more.
    const Json data = Json::parse(result.error().detail, nullptr, false);
    if (attempt == 0 && listsVersion(data, "supported", kStatelessProtocolVersion)) {
      sendDiscover(once, attempt + 1);
      return;
    }
    transport_->setProtocolVersion("");
    sendInitialize(once);
    return;
  }
  if (!listsVersion(*result, "supportedVersions", kStatelessProtocolVersion)) {
    transport_->setProtocolVersion("");
    sendInitialize(once);
    return;
  }
  connectTimer_.cancel();
  ServerInfo info;
  info.raw = *result;
  info.protocolVersion = std::string(kStatelessProtocolVersion);
  if (const auto caps = result->find("capabilities"); caps != result->end() && caps->is_object())
    info.capabilities = *caps;
  Json server = result->value("serverInfo", Json::object());
  if (const auto meta = result->find("_meta"); !server.is_object() || server.empty()) {
    if (meta != result->end() && meta->is_object())
      server = meta->value("io.modelcontextprotocol/serverInfo", Json::object());
  }
  info.name = stringAt(server, "name");
  info.version = stringAt(server, "version");
  info.instructions = stringAt(*result, "instructions");
  serverInfo_ = std::move(info);
  stateless_ = true;
  state_ = State::kReady;
  auto callback = std::exchange(*once, nullptr);
  callback(serverInfo_);
}

std::int64_t Client::requestWithInputs(const std::string& method, std::string label, Json params,
                                       CallOptions options, ResultCallback done) {
  // The call is known by its first request's id, which cancel() takes to the round in flight.
  const std::int64_t callId = pending_.nextId();
  inputCalls_[callId] = InputCall{.label = std::move(label), .done = std::move(done)};
  sendRound(callId, 0, method, std::move(params), std::move(options), Clock::time_point{});
  return callId;
}

void Client::sendRound(std::int64_t callId, int round, const std::string& method, Json params,
                       CallOptions options, Clock::time_point deadline) {
  const auto call = inputCalls_.find(callId);
  if (call == inputCalls_.end()) return;
  const std::string label = call->second.label;
  auto onProgress = options.onProgress;
  const bool reset = options.resetTimeoutOnProgress;
  const auto timeout = options.timeout.count() == 0 ? options_.requestTimeout : options.timeout;
  // Every round shares the call's one deadline; a later round gets only what is left of it.
  if (round == 0 && timeout.count() > 0) deadline = Clock::now() + timeout;
  auto left = timeout;
  if (round > 0 && timeout.count() > 0) {
    left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      endInputCall(callId,
                   std::unexpected(makeError(ErrorCode::kTimeout,
                                             describe() + " did not finish " + label + " within " +
                                                 formatDuration(timeout) + "; kaja gave up.")));
      return;
    }
  }
  auto next = [weak = weak_from_this(), callId, round, method, params, options = std::move(options),
               deadline](Result<Json> result) mutable {
    if (auto self = weak.lock()) {
      self->onRoundAnswered(callId, round, method, std::move(params), std::move(options), deadline,
                            std::move(result));
    }
  };
  const std::int64_t id = round == 0 ? callId : pending_.nextId();
  startRequest(method, label, withMeta(params), left, std::move(next), std::move(onProgress), reset,
               {}, id);
  if (Pending* pending = pending_.find(id); pending != nullptr && round > 0) {
    pending->budget = timeout;
  }
  if (const auto it = inputCalls_.find(callId); it != inputCalls_.end()) it->second.inFlight = id;
}

void Client::onRoundAnswered(std::int64_t callId, int round, const std::string& method, Json params,
                             CallOptions options, Clock::time_point deadline, Result<Json> result) {
  const auto call = inputCalls_.find(callId);
  if (call == inputCalls_.end()) return;
  const std::string label = call->second.label;
  const auto type = result && result->is_object() ? result->find("resultType") : Json::iterator();
  const bool typed = result && result->is_object() && type != result->end();
  if (typed && !type->is_string()) {
    endInputCall(callId, std::unexpected(makeError(ErrorCode::kProtocol,
                                                   describe() + " answered " + label +
                                                       " with a resultType that is a " +
                                                       type->type_name() + ", not a string.")));
    return;
  }
  if (typed && *type != "input_required" && *type != "complete") {
    endInputCall(callId, std::unexpected(makeError(
                             ErrorCode::kProtocol,
                             describe() + " answered " + label + " with resultType \"" +
                                 clip(type->get<std::string>(), 40) +
                                 "\", which is neither \"complete\" nor \"input_required\".")));
    return;
  }
  if (!typed || *type != "input_required") {
    // Questions and state outside a round mean nothing, and must not reach anyone as if
    // they did (a roots/list among them would go to a client unanswered by kaja).
    if (result && result->is_object()) {
      result->erase("inputRequests");
      result->erase("requestState");
    }
    endInputCall(callId, std::move(result));
    return;
  }
  if (const std::string wrong = checkInputRequired(*result); !wrong.empty()) {
    endInputCall(callId,
                 std::unexpected(makeError(ErrorCode::kProtocol,
                                           describe() + " asked for input in " + label +
                                               " that kaja cannot follow: " + wrong + ".")));
    return;
  }
  if (round + 1 >= kMaxInputRounds) {
    endInputCall(callId, std::unexpected(makeError(ErrorCode::kProtocol,
                                                   describe() + " asked for more input " +
                                                       std::to_string(kMaxInputRounds) +
                                                       " times in " + label + "; kaja gave up.")));
    return;
  }
  // This round is over at the server; until the retry is sent, no request of the call is.
  call->second.inFlight = 0;
  // The retry carries exactly this round's answers and state, never an older round's.
  params.erase("inputResponses");
  params.erase("requestState");
  if (const auto state = result->find("requestState"); state != result->end())
    params["requestState"] = *state;
  answerInputs(callId, result->value("inputRequests", Json::object()),
               [weak = weak_from_this(), callId, round, method, params = std::move(params),
                options = std::move(options), deadline](Result<Json> responses) mutable {
                 auto self = weak.lock();
                 // A call cancelled while its inputs were gathered sends no retry.
                 if (!self || !self->inputCalls_.contains(callId)) return;
                 if (!responses) {
                   self->endInputCall(callId, std::unexpected(responses.error()));
                   return;
                 }
                 params["inputResponses"] = std::move(*responses);
                 self->sendRound(callId, round + 1, method, std::move(params), std::move(options),
                                 deadline);
               });
}

void Client::endInputCall(std::int64_t callId, Result<Json> result) {
  const auto call = inputCalls_.find(callId);
  if (call == inputCalls_.end()) return;
  auto done = std::move(call->second.done);
  inputCalls_.erase(call);
  done(std::move(result));
}

void Client::answerInputs(std::int64_t callId, const Json& inputRequests,
                          std::function<void(Result<Json>)> done) {
  struct Gather {
    Json responses = Json::object();
    std::size_t remaining = 0;
    std::function<void(Result<Json>)> done;
  };
  auto gather = std::make_shared<Gather>();
  gather->done = std::move(done);
  if (!inputRequests.is_object() || inputRequests.empty()) {
    asio::post(io_, [gather] { gather->done(gather->responses); });
    return;
  }
  gather->remaining = inputRequests.size();
  auto finish = [gather](const std::string& key, Result<Json> answer) {
    if (!gather->done) return;
    if (!answer) {
      std::exchange(gather->done, nullptr)(std::unexpected(answer.error()));
      return;
    }
    gather->responses[key] = std::move(*answer);
    if (--gather->remaining == 0) std::exchange(gather->done, nullptr)(gather->responses);
  };
  for (const auto& [key, input] : inputRequests.items()) {
    const std::string method = stringAt(input, "method");
    const Json params = input.is_object() ? input.value("params", Json::object()) : Json::object();
    if (method == "roots/list" && rootsProvider_) {
      Json roots = rootsToJson(rootsProvider_());
      asio::post(io_, [finish, key, roots = std::move(roots)] {
        finish(key, Json{{"roots", roots}});
      });
      continue;
    }
    const RequestHandler* handler = nullptr;
    if (method == "elicitation/create" && elicitationHandler_) handler = &elicitationHandler_;
    if (method == "sampling/createMessage" && samplingHandler_) handler = &samplingHandler_;
    if (handler == nullptr) {
      asio::post(io_, [finish, key,
                       error = makeError(ErrorCode::kProtocol,
                                         describe() + " asked for input kaja cannot give (" +
                                             clip(method, 60) + ").")] {
        finish(key, std::unexpected(error));
      });
      continue;
    }
    // The host may answer later or (by mistake) twice; only the first answer counts.
    auto answered = std::make_shared<bool>(false);
    (*handler)(params, InputOrigin{key, callId}, [finish, key, answered](Result<Json> answer) {
      if (!std::exchange(*answered, true)) finish(key, std::move(answer));
    });
  }
}

void Client::applyToolHeaders(std::vector<Tool>& tools) {
  ToolParamHeaders headers;
  std::erase_if(tools, [&](const Tool& tool) {
    auto params = paramHeaders(tool.inputSchema);
    if (!params) {
      warn(describe() + " offers tool '" + clip(tool.name, 60) +
           "', which kaja leaves out: " + params.error().message);
      return true;
    }
    if (!params->empty()) headers[tool.name] = std::move(*params);
    return false;
  });
  transport_->setToolParamHeaders(std::move(headers));
}

}  // namespace kaja::core::mcp
