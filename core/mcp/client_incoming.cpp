// Client's handling of what the server sends: replies (matched to their requests, or
// reported), requests (ping, roots/list, sampling, elicitation) and notifications (progress,
// logging, list_changed).
#include <algorithm>
#include <utility>

#include "core/mcp/client.h"

namespace kaja::core::mcp {
namespace {

/// Returns `sentence` with its first letter lower-cased, to follow a colon.
std::string lowerFirst(std::string sentence) {
  if (!sentence.empty() && sentence[0] >= 'A' && sentence[0] <= 'Z') sentence[0] += 'a' - 'A';
  return sentence;
}

/// Returns the subscription id a listen stream's notification carries in its _meta, if any.
const Json* subscriptionIdOf(const Json& params) {
  if (!params.is_object()) return nullptr;
  const auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return nullptr;
  const auto id = meta->find(kMetaSubscriptionId);
  return id == meta->end() ? nullptr : &*id;
}

}  // namespace

void Client::onMessage(Message message) {
  if (auto* response = std::get_if<Response>(&message)) {
    onResponse(std::move(*response));
  } else if (auto* request = std::get_if<Request>(&message)) {
    onServerRequest(*request);
  } else {
    onNotification(std::get<Notification>(message));
  }
}

void Client::onRequestFailed(const Json& id, const Error& error) {
  if (auto pending = pending_.take(id)) pending->done(std::unexpected(error));
}

void Client::warn(const std::string& text) {
  if (!warningHandler_ || warnings_ > options_.maxWarnings) return;
  if (++warnings_ > options_.maxWarnings) {
    warningHandler_(describe() + " caused more than " + std::to_string(options_.maxWarnings) +
                    " warnings; further ones are not shown.");
    return;
  }
  warningHandler_(text);
}

void Client::onUnmatched(const Response& response) {
  if (response.unreadable) {
    const std::string id =
        response.id.is_null() ? "" : " (id " + clip(response.id.dump(), 40) + ")";
    warn(describe() + " sent a message that kaja cannot read" + id +
         ", so it was skipped: " + lowerFirst(response.unreadable->message));
    return;
  }
  // Normal after a timeout or cancel: the answer raced the notifications/cancelled.
  if (pending_.wasGivenUp(response.id)) return;
  const std::string what =
      response.error ? "an error (" + clip(response.error->message, 120) + ")" : "a result";
  warn(describe() + " sent " + what + " for a request kaja is not waiting for (id " +
       clip(response.id.dump(), 40) + "), so it was skipped.");
}

void Client::onResponse(Response&& response) {
  auto taken = pending_.take(response.id);
  if (!taken) {
    onUnmatched(response);
    return;
  }
  Pending pending = std::move(*taken);
  if (response.unreadable) {
    pending.done(std::unexpected(makeError(
        ErrorCode::kProtocol,
        describe() + " answered " + pending.describe() +
            " with a reply kaja cannot read: " + lowerFirst(response.unreadable->message))));
    return;
  }
  lastResponseBytes_ = response.bytes;
  if (response.error) {
    Error error =
        makeError(ErrorCode::kProtocol, describe() + " answered " + pending.describe() +
                                            " with error " + std::to_string(response.error->code) +
                                            ": " + clip(response.error->message, 300));
    if (!response.error->data.is_null()) error.detail = response.error->data.dump();
    error.rpcCode = response.error->code;
    pending.done(std::unexpected(std::move(error)));
    return;
  }
  pending.done(response.result ? std::move(*response.result) : Json::object());
}

void Client::respond(const Json& id, Result<Json> result) {
  if (!transport_->isOpen()) return;
  if (result) {
    transport_->send(makeResultResponse(id, std::move(*result)));
    return;
  }
  // A handler's Error becomes a JSON-RPC error; kUsage means the params were wrong.
  const int code = result.error().code == ErrorCode::kUsage ? rpc_error::kInvalidParams
                                                            : rpc_error::kInternalError;
  transport_->send(makeErrorResponse(id, code, result.error().message));
}

void Client::onServerRequest(const Request& request) {
  const auto& method = request.method;
  if (method == "ping") {
    respond(request.id, Json::object());
    return;
  }
  if (method == "roots/list" && rootsProvider_) {
    Json roots = rootsToJson(rootsProvider_());
    respond(request.id, Json{{"roots", std::move(roots)}});
    return;
  }
  const RequestHandler* handler = nullptr;
  if (method == "sampling/createMessage" && samplingHandler_) handler = &samplingHandler_;
  if (method == "elicitation/create" && elicitationHandler_) handler = &elicitationHandler_;
  if (handler == nullptr) {
    transport_->send(makeErrorResponse(request.id, rpc_error::kMethodNotFound,
                                       "Method not found: " + clip(method, 80)));
    return;
  }
  // A server that asks faster than the host answers is told no, so the asks do not pile up.
  if (serverRequestsInFlight_ >= options_.maxServerRequestsInFlight) {
    transport_->send(
        makeErrorResponse(request.id, rpc_error::kInternalError,
                          "kaja is already answering " + std::to_string(serverRequestsInFlight_) +
                              " requests from this server; ask again once they are answered."));
    return;
  }
  ++serverRequestsInFlight_;
  // The host may answer later, or (by mistake) twice; only the first answer is sent.
  auto answered = std::make_shared<bool>(false);
  (*handler)(request.params, InputOrigin{},
             [weak = weak_from_this(), id = request.id, answered](Result<Json> result) {
               auto self = weak.lock();
               if (!self || std::exchange(*answered, true)) return;
               --self->serverRequestsInFlight_;
               self->respond(id, std::move(result));
             });
}

void Client::onNotification(const Notification& notification) {
  const auto& method = notification.method;
  const Json& params = notification.params;
  const Json* subscriptionId = stateless_ ? subscriptionIdOf(params) : nullptr;
  // A stream kaja closed may still be heard from (a server that ignored the cancel, or a
  // notification already on its way): only the open one counts, or each update came twice.
  // Ids compare as whole numbers: a server may echo 7 as 7.0.
  if (subscriptionId != nullptr &&
      (!listening_ || !subscriptionId->is_number() ||
       subscriptionId->get<double>() != static_cast<double>(listenId_))) {
    return;
  }
  if (method == "notifications/subscriptions/acknowledged" && subscriptionId != nullptr) {
    onListenAcknowledged();
  }
  if (method == "notifications/progress" && params.is_object()) {
    const auto token = params.find("progressToken");
    if (token != params.end() && token->is_number_integer()) {
      const std::int64_t id = token->get<std::int64_t>();
      const Pending* pending = pending_.find(id);
      if (pending != nullptr && pending->onProgress) {
        Progress progress;
        if (const auto value = params.find("progress"); value != params.end() && value->is_number())
          progress.progress = value->get<double>();
        if (const auto total = params.find("total"); total != params.end() && total->is_number())
          progress.total = total->get<double>();
        if (const auto text = params.find("message"); text != params.end() && text->is_string())
          progress.message = text->get<std::string>();
        if (pending->resetTimeoutOnProgress) {
          pending_.restartDeadline(id, pending->timeout, pending->latest);
        }
        // A copy: the callback may cancel its own call, which destroys the original.
        const auto onProgress = pending->onProgress;
        onProgress(progress);
      }
    }
  } else if (method == "notifications/message" && params.is_object() && logHandler_) {
    LogMessage log;
    if (const auto level = params.find("level"); level != params.end() && level->is_string())
      log.level = level->get<std::string>();
    if (const auto logger = params.find("logger"); logger != params.end() && logger->is_string())
      log.logger = logger->get<std::string>();
    if (const auto data = params.find("data"); data != params.end()) log.data = *data;
    logHandler_(log);
  } else if (state_ == State::kReady &&
             ((method == "notifications/tools/list_changed" && toolsListed_) ||
              // A reopened listen stream is back: what changed while it was closed went
              // unannounced, so the tools are listed as if they had changed.
              (method == "notifications/subscriptions/acknowledged" &&
               std::exchange(relistOnListen_, false)))) {
    refreshTools();
  }
  if (!notificationHandler_) return;
  // The id of kaja's own listen stream means nothing to whoever hears of the change.
  if (subscriptionId != nullptr) {
    Notification untagged = notification;
    untagged.params["_meta"].erase(kMetaSubscriptionId);
    if (untagged.params["_meta"].empty()) untagged.params.erase("_meta");
    notificationHandler_(untagged);
    return;
  }
  notificationHandler_(notification);
}

}  // namespace kaja::core::mcp
