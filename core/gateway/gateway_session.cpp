#include "core/gateway/gateway_session.h"

#include <algorithm>

#include "core/gateway/gateway_util.h"
#include "core/gateway/proxy_tool.h"
#include "core/mcp/client.h"
#include "core/policy/refusal.h"
#include "core/policy/terminal_approver.h"
#include "core/util/quote.h"

namespace kaja::core::gateway {

using mcp::Json;
namespace {

/// Returns `level` when it is one of MCP's eight log levels, else "".
std::string validLogLevel(const std::string& level) {
  return logLevelRank(level) < 0 ? std::string() : level;
}

// How much of a call's arguments an approval question shows before cutting.
constexpr std::size_t kArgumentsShown = 4000;

const char* const kMetaVersion = "io.modelcontextprotocol/protocolVersion";
const char* const kMetaServerInfo = "io.modelcontextprotocol/serverInfo";

// The question a person sees: the ability, the tool, the exact arguments and where it writes.
std::string question(const policy::ApprovalRequest& request) {
  std::string arguments = request.arguments.dump(2, ' ', false, Json::error_handler_t::replace);
  if (arguments.size() > kArgumentsShown) {
    arguments = arguments.substr(0, kArgumentsShown) + "\n… (" +
                std::to_string(arguments.size() - kArgumentsShown) + " more bytes)";
  }
  std::string text = "kaja: " + escapeForMessage(request.server) + " wants to run " +
                     escapeForMessage(request.tool) + " with these arguments:\n" +
                     policy::escapeInvisibles(arguments);
  if (!request.writesTo.empty()) {
    text += "\nIt would write to:";
    for (const auto& path : request.writesTo) text += "\n  " + escapeForMessage(path);
  }
  return text + "\nAllow it?";
}

}  // namespace

std::function<void(const mcp::Progress&)> progressRelay(std::weak_ptr<GatewaySession> session,
                                                        Json requestId, Json progressToken) {
  return [session = std::move(session), requestId = std::move(requestId),
          progressToken = std::move(progressToken)](const mcp::Progress& progress) {
    auto alive = session.lock();
    if (!alive || progressToken.is_null()) return;
    Json update = {{"progressToken", progressToken}, {"progress", progress.progress}};
    if (progress.total) update["total"] = *progress.total;
    if (!progress.message.empty()) update["message"] = progress.message;
    alive->sendNotification("notifications/progress", std::move(update), requestId);
  };
}

bool ElicitingApprover::isPerson() const { return session_.clientHas("elicitation"); }

void ElicitingApprover::ask(const policy::ApprovalRequest& request,
                            std::function<void(policy::ApprovalReply)> done) {
  using policy::ApprovalAnswer;
  if (!session_.clientHas("elicitation")) {
    done({ApprovalAnswer::kNo,
          "needs a person's approval, and this client cannot ask one (it did not declare "
          "elicitation); run it with `kaja call " +
              request.server + " " + request.tool +
              "` in a terminal, or set approval = \"never\" in the ability's mcp.toml if you "
              "trust it"});
    return;
  }
  Json choices = Json::array({"once"});
  Json names = Json::array({"Allow once"});
  // A stateless client has no session for "the rest of the session" to mean anything in.
  const bool sessionOffered = !request.confirmListed && !session_.stateless();
  if (sessionOffered) {
    choices.push_back("session");
    names.push_back("Allow this tool for the rest of the session");
  }
  Json params = {
      {"message", question(request)},
      {"requestedSchema",
       {{"type", "object"},
        {"properties",
         {{"answer",
           {{"type", "string"}, {"title", "Answer"}, {"enum", choices}, {"enumNames", names}}}}},
        {"required", Json::array({"answer"})}}}};
  session_.sendRequest(
      "elicitation/create", std::move(params), relatedTo, session_.approvalTimeout(),
      [done = std::move(done), sessionOffered](Result<Json> reply) {
        if (!reply) {
          done({ApprovalAnswer::kNo,
                "got no answer from the client (" + reply.error().message + ")"});
          return;
        }
        const std::string action = stringAt(*reply, "action");
        if (action == "accept") {
          // Only one of the offered answers approves; anything else is no answer at all.
          const Json content =
              reply->is_object() ? reply->value("content", Json::object()) : Json::object();
          const std::string answer = stringAt(content, "answer");
          if (answer == "once" || (answer == "session" && sessionOffered)) {
            done({answer == "session" ? ApprovalAnswer::kYesForSession : ApprovalAnswer::kYes, {}});
            return;
          }
          done({ApprovalAnswer::kNo, "got an answer that is neither of the offered ones"});
          return;
        }
        done({ApprovalAnswer::kNo,
              action == "decline" ? "was declined by the user" : "was not approved by the user"});
      });
}

GatewaySession::GatewaySession(std::shared_ptr<Gateway::Impl> gateway,
                               std::shared_ptr<server::Outbox> outbox)
    : gateway_(std::move(gateway)),
      outbox_(std::move(outbox)),
      approver_(*this),
      approvals_(approver_),
      asked_(gateway_->io) {
  // The ledger runs this only while it, and so this session, lives.
  asked_.setExpiredHandler(
      [this](std::int64_t id, const Asked& asked) { onAskExpired(id, asked); });
}

GatewaySession::~GatewaySession() = default;

bool GatewaySession::clientHas(const std::string& capability) const {
  return !ended_ && clientCapabilities_.is_object() && clientCapabilities_.contains(capability);
}

void GatewaySession::receive(mcp::Message message) {
  if (ended_) return;
  if (auto* request = std::get_if<mcp::Request>(&message)) {
    onRequest(*request);
  } else if (auto* notification = std::get_if<mcp::Notification>(&message)) {
    onNotification(*notification);
  } else {
    onResponse(std::get<mcp::Response>(message));
  }
}

void GatewaySession::end() {
  // The stream of a request that answered input_required has closed; the retry brings another.
  if (suspended_) return;
  if (std::exchange(ended_, true)) return;
  if (auto carried = std::exchange(carrying_, nullptr)) carried->retryStreamEnded(outbox_);
  if (roundTimer_) roundTimer_->cancel();
  failAsks("the client went away", ErrorCode::kConnect);
  releaseSubscriptions();
  // Its level may have been the most talkative one.
  if (!logLevel_.empty()) gateway_->sendLogLevel();
  // A client that went away takes its calls with it: each server is told to stop.
  for (auto& [key, call] : inFlight_) {
    call.cancelled = true;
    gateway_->host->cancel(call.call, "the client went away");
  }
  for (auto& [id, pending] : asked_.takeAll()) {
    if (pending.done) pending.done(fail(ErrorCode::kConnect, "the client went away"));
  }
}

void GatewaySession::releaseSubscriptions() {
  std::map<std::string, std::string> followed = std::exchange(subscribed_, {});
  if (listening_) {
    for (const auto& uri : listening_->uris) followed.emplace(uri, resourceAbility(uri));
    listening_.reset();
  }
  for (const auto& [uri, ability] : followed) gateway_->unsubscribeUnlessHeld(ability, uri);
}

void GatewaySession::sendNotification(const std::string& method, Json params,
                                      const Json& relatedTo) {
  if (ended_) return;
  Json message = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) message["params"] = std::move(params);
  deliver(std::move(message), relatedTo);
}

void GatewaySession::deliver(Json message, const Json& relatedTo) {
  if (ended_) return;
  const bool round = !roundRequestId_.is_null() && relatedTo == roundRequestId_;
  if (!round) {
    outbox_->send(std::move(message), relatedTo);
    return;
  }
  if (message.contains("id") && !message.contains("method")) {
    // The request's answer goes to its latest retry; one that comes while the client has no
    // stream open waits for the retry.
    message["id"] = replyId_;
    answered_ = true;
    if (roundTimer_) roundTimer_->cancel();
    failAsks("the request has ended", ErrorCode::kRefused);
    if (suspended_) {
      heldReply_ = std::move(message);
      return;
    }
  } else if (suspended_) {
    return;  // progress or a log line while no stream is open has nowhere to go
  }
  outbox_->send(std::move(message), replyId_);
}

void GatewaySession::sendRequest(const std::string& method, Json params, const Json& relatedTo,
                                 std::chrono::milliseconds timeout,
                                 std::function<void(Result<Json>)> done,
                                 const std::string& inputKey) {
  if (ended_) {
    done(fail(ErrorCode::kConnect, "the client went away"));
    return;
  }
  // A 2026-07-28 client is asked in an input_required result instead.
  if (stateless_) {
    askInput(method, std::move(params), std::move(done), inputKey);
    return;
  }
  const std::int64_t id = asked_.nextId();
  asked_.add(id, Asked{.done = std::move(done), .timeout = timeout, .relatedTo = relatedTo},
             timeout);
  outbox_->send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}},
                relatedTo);
}

void GatewaySession::onAskExpired(std::int64_t id, const Asked& asked) {
  // The sender of a request it gives up on should say so (basic/utilities/cancellation).
  if (!ended_) {
    outbox_->send(
        {{"jsonrpc", "2.0"},
         {"method", "notifications/cancelled"},
         {"params", {{"requestId", id}, {"reason", "kaja stopped waiting for an answer"}}}},
        asked.relatedTo);
  }
  asked.done(fail(ErrorCode::kTimeout,
                  "no answer within " + std::to_string(asked.timeout.count() / 1000) + " s"));
}

void GatewaySession::onResponse(const mcp::Response& response) {
  auto taken = asked_.take(response.id);
  if (!taken) {
    // What could not be read as a request, a notification or a reply (`{"id": 8}`, `[1]`, a
    // value nested past the limit) and answers nothing kaja asked is an invalid request: the
    // client hears so, under its id when one could be read. A readable reply to nothing is
    // dropped, as JSON-RPC asks.
    if (response.unreadable) {
      respondError(
          response.id, rpc::kInvalidRequest,
          "kaja could not read the message as a JSON-RPC request: " + response.unreadable->message);
    }
    return;
  }
  Asked pending = std::move(*taken);
  if (response.result) {
    pending.done(*response.result);
  } else if (response.error) {
    pending.done(fail(ErrorCode::kProtocol, mcp::clip(response.error->message)));
  } else {
    pending.done(fail(ErrorCode::kProtocol, "the client's answer could not be read"));
  }
}

void GatewaySession::respond(const Json& id, Result<Json> result) {
  if (ended_) return;
  if (!result) {
    const Error& error = result.error();
    // A server's own error code (say -32602 for an unknown resource) reaches the client.
    std::int64_t code = error.rpcCode != 0                   ? error.rpcCode
                        : error.code == ErrorCode::kNotFound ? rpc::kInvalidParams
                        : error.code == ErrorCode::kUsage    ? rpc::kInvalidParams
                                                             : rpc::kInternalError;
    Json data = error.rpcCode != 0 && !error.detail.empty()
                    ? Json::parse(error.detail, nullptr, false)
                    : Json();
    if (data.is_discarded()) data = Json();
    respondError(id, code, error.describe(), std::move(data));
    return;
  }
  Json body = std::move(*result);
  if (!body.is_object()) body = Json::object();
  finishBody(body);
  deliver({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(body)}}, id);
}

void GatewaySession::finishBody(Json& body) const {
  if (stateless_) {
    if (!body.contains("resultType")) body["resultType"] = "complete";
    // A list or a resource can change at any time, so a client may not cache it.
    if (body.contains("tools") || body.contains("prompts") || body.contains("resources") ||
        body.contains("resourceTemplates") || body.contains("supportedVersions") ||
        body.contains("contents")) {
      body["ttlMs"] = 0;
      body["cacheScope"] = "private";
    }
    body["_meta"][kMetaServerInfo] = serverInfo();
  } else {
    body.erase("resultType");
  }
}

void GatewaySession::respondError(const Json& id, std::int64_t code, const std::string& message,
                                  Json data) {
  if (ended_) return;
  Json error = {{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = std::move(data);
  deliver({{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}}, id);
}

Json GatewaySession::serverInfo() const {
  return {{"name", gateway_->options.serverName}, {"version", gateway_->options.serverVersion}};
}

Json GatewaySession::capabilities() const {
  Json caps = {{"tools", {{"listChanged", true}}}, {"logging", Json::object()}};
  if (!gateway_->abilitiesWith("resources").empty()) {
    caps["resources"] = {{"listChanged", true}, {"subscribe", true}};
  }
  if (!gateway_->abilitiesWith("prompts").empty()) caps["prompts"] = {{"listChanged", true}};
  if (!gateway_->abilitiesWith("completions").empty()) caps["completions"] = Json::object();
  return caps;
}

// A 2026-07-28 client says who it is and what it can do in every request's _meta.
void GatewaySession::adoptMeta(const Json& params) {
  if (!params.is_object()) return;
  auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return;
  const std::string version = stringAt(*meta, kMetaVersion);
  if (version != mcp::kStatelessProtocolVersion) return;
  stateless_ = true;
  started_ = true;
  version_ = version;
  auto caps = meta->find(mcp::kMetaClientCapabilities);
  if (caps != meta->end() && caps->is_object()) clientCapabilities_ = *caps;
}

void GatewaySession::initialize(const mcp::Request& request) {
  // What a session agreed stays: a second initialize cannot switch its version or claim
  // capabilities (elicitation, and with it approvals) that the first did not.
  if (initialized_) {
    return respondError(request.id, rpc::kInvalidRequest,
                        "the session is already initialized (protocol " + version_ +
                            "); start a new session for another version or capabilities");
  }
  initialized_ = true;
  const std::string asked = stringAt(request.params, "protocolVersion");
  version_ = server::supportedVersion(asked) && asked != mcp::kStatelessProtocolVersion
                 ? asked
                 : std::string(mcp::kLatestProtocolVersion);
  auto caps =
      request.params.is_object() ? request.params.find("capabilities") : request.params.end();
  if (request.params.is_object() && caps != request.params.end() && caps->is_object()) {
    clientCapabilities_ = *caps;
  }
  started_ = true;
  respond(request.id, Json{{"protocolVersion", version_},
                           {"capabilities", capabilities()},
                           {"serverInfo", serverInfo()},
                           {"instructions", "kaja serves persona \"" + gateway_->config.persona +
                                                "\": every call passes its rules."}});
}

void GatewaySession::discover(const mcp::Request& request) {
  Json versions = Json::array();
  for (const char* version : server::kServerProtocolVersions) {
    if (std::string_view(version) == mcp::kStatelessProtocolVersion) versions.push_back(version);
  }
  stateless_ = true;
  started_ = true;
  respond(request.id, Json{{"supportedVersions", versions},
                           {"capabilities", capabilities()},
                           {"serverInfo", serverInfo()}});
}

void GatewaySession::onRequest(const mcp::Request& request) {
  adoptMeta(request.params);
  requestLogLevel_ = logLevel_;
  if (stateless_) {
    const Json meta = request.params.is_object() ? request.params.value("_meta", Json()) : Json();
    const auto named = meta.is_object() ? meta.find(mcp::kMetaLogLevel) : meta.end();
    if (meta.is_object() && named != meta.end()) {
      requestLogLevel_ = named->is_string() ? validLogLevel(named->get<std::string>()) : "";
      if (requestLogLevel_.empty()) {
        return respondError(request.id, rpc::kInvalidParams,
                            std::string("_meta \"") + mcp::kMetaLogLevel +
                                "\" must be one of debug, info, notice, warning, error, "
                                "critical, alert, emergency");
      }
    } else {
      requestLogLevel_.clear();
    }
  }
  const std::string& method = request.method;
  // 2026-07-28 removed these: a stateless client has no session to set up, keep alive,
  // tune or subscribe on (subscriptions/listen replaces the last two).
  if (stateless_ && (method == "initialize" || method == "ping" || method == "logging/setLevel" ||
                     method == "resources/subscribe" || method == "resources/unsubscribe")) {
    return respondError(request.id, rpc::kMethodNotFound,
                        "protocol version 2026-07-28 has no method " + method);
  }
  if (takeRetry(request)) return;
  noteRoundRequest(request);
  if (method == "initialize") return initialize(request);
  if (method == "server/discover") return discover(request);
  if (method == "ping") return respond(request.id, Json::object());
  if (!started_) {
    return respondError(request.id, rpc::kInvalidRequest,
                        "the session has not been initialized; send initialize first");
  }
  if (method == "tools/list") return listTools(request);
  if (method == "tools/call") return callTool(request);
  if (method == "subscriptions/listen" && stateless_) return listen(request);
  if (method == "resources/list") return listEverywhere(request, "resources", "resources");
  if (method == "resources/templates/list") {
    return listEverywhere(request, "resources", "resourceTemplates");
  }
  if (method == "prompts/list") return listEverywhere(request, "prompts", "prompts");
  if (method == "logging/setLevel") {
    // This client's calls ask for log messages from this level up; the server is told too, as
    // a 2025-11-25 server filters by the one level of kaja's connection.
    const std::string level = validLogLevel(stringAt(request.params, "level"));
    if (level.empty()) {
      return respondError(request.id, rpc::kInvalidParams,
                          "logging/setLevel needs a \"level\": one of debug, info, notice, "
                          "warning, error, critical, alert, emergency");
    }
    logLevel_ = level;
    gateway_->sendLogLevel();
    return respond(request.id, Json::object());
  }
  if (method == "resources/read" || method == "resources/subscribe" ||
      method == "resources/unsubscribe" || method == "prompts/get" ||
      method == "completion/complete") {
    return forward(request);
  }
  respondError(request.id, rpc::kMethodNotFound,
               "kaja's gateway does not serve " + mcp::clip(method, 80));
}

void GatewaySession::onNotification(const mcp::Notification& notification) {
  if (notification.method == "notifications/initialized") return;
  if (notification.method == "notifications/cancelled") {
    const Json id =
        notification.params.is_object() ? notification.params.value("requestId", Json()) : Json();
    auto it = inFlight_.find(idKey(id));
    if (it == inFlight_.end()) return;
    it->second.cancelled = true;
    gateway_->host->cancel(it->second.call,
                           stringAt(notification.params, "reason").empty()
                               ? "cancelled by the client"
                               : mcp::clip(stringAt(notification.params, "reason")));
  }
  // Roots from the client never reach a server: kaja gives each server the persona's folders.
}

std::shared_ptr<server::Session> makeSession(const std::shared_ptr<Gateway::Impl>& gateway,
                                             std::shared_ptr<server::Outbox> outbox) {
  auto session = std::make_shared<GatewaySession>(gateway, std::move(outbox));
  std::erase_if(gateway->sessions, [](const auto& weak) { return weak.expired(); });
  gateway->sessions.push_back(session);
  return session;
}

}  // namespace kaja::core::gateway
