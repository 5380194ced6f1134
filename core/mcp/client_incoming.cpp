// Client's handling of what the server sends on its own: requests (ping, roots/list,
// sampling, elicitation) and notifications (progress, logging, list_changed).
#include "core/mcp/client.h"

namespace kaja::core::mcp {

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
  // The host may answer later, or (by mistake) twice; only the first answer is sent.
  auto answered = std::make_shared<bool>(false);
  (*handler)(request.params,
             [weak = weak_from_this(), id = request.id, answered](Result<Json> result) {
               auto self = weak.lock();
               if (!self || std::exchange(*answered, true)) return;
               self->respond(id, std::move(result));
             });
}

void Client::onNotification(const Notification& notification) {
  const auto& method = notification.method;
  const Json& params = notification.params;
  if (method == "notifications/progress" && params.is_object()) {
    const auto token = params.find("progressToken");
    if (token != params.end() && token->is_number_integer()) {
      const auto it = pending_.find(token->get<std::int64_t>());
      if (it != pending_.end() && it->second.onProgress) {
        Progress progress;
        if (const auto value = params.find("progress"); value != params.end() && value->is_number())
          progress.progress = value->get<double>();
        if (const auto total = params.find("total"); total != params.end() && total->is_number())
          progress.total = total->get<double>();
        if (const auto text = params.find("message"); text != params.end() && text->is_string())
          progress.message = text->get<std::string>();
        if (it->second.resetTimeoutOnProgress) restartDeadline(it->second);
        // A copy: the callback may cancel its own call, which destroys the original.
        const auto onProgress = it->second.onProgress;
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
  } else if (method == "notifications/tools/list_changed" && state_ == State::kReady &&
             toolsListed_) {
    refreshTools();
  }
  if (notificationHandler_) notificationHandler_(notification);
}

}  // namespace kaja::core::mcp
