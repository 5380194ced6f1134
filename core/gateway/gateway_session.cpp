#include "core/gateway/gateway_session.h"

#include <algorithm>

#include "core/gateway/proxy_tool.h"
#include "core/policy/refusal.h"
#include "core/policy/terminal_approver.h"
#include "core/util/quote.h"

namespace kaja::core::gateway {
namespace {

using mcp::Json;
namespace rpc = mcp::rpc_error;

// How much of a call's arguments an approval question shows before cutting.
constexpr std::size_t kArgumentsShown = 4000;
// The pages of one list kaja reads from each server.
constexpr int kMaxPages = 20;

const char* const kMetaVersion = "io.modelcontextprotocol/protocolVersion";
const char* const kMetaCapabilities = "io.modelcontextprotocol/clientCapabilities";
const char* const kMetaServerInfo = "io.modelcontextprotocol/serverInfo";

std::string idKey(const Json& id) {
  return id.dump(-1, ' ', false, Json::error_handler_t::replace);
}

bool supported(const std::string& version) {
  return std::any_of(std::begin(server::kServerProtocolVersions),
                     std::end(server::kServerProtocolVersions),
                     [&](const char* known) { return version == known; });
}

Json textResult(const std::string& text, bool isError) {
  return {{"content", Json::array({{{"type", "text"}, {"text", text}}})}, {"isError", isError}};
}

std::string stringAt(const Json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

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

bool ElicitingApprover::isPerson() const { return session_.clientHas("elicitation"); }

void ElicitingApprover::ask(const policy::ApprovalRequest& request,
                            std::function<void(policy::ApprovalReply)> done) {
  using policy::ApprovalAnswer;
  if (!session_.clientHas("elicitation")) {
    done({ApprovalAnswer::kNo,
          std::string("needs a person's approval, and this client cannot ask one (") +
              (session_.stateless() ? "kaja cannot yet ask a 2026-07-28 client during a call"
                                    : "it did not declare elicitation") +
              "); run it with `kaja call " + request.server + " " + request.tool +
              "` in a terminal, or set approval = \"never\" in the ability's mcp.toml if you "
              "trust it"});
    return;
  }
  Json choices = Json::array({"once"});
  Json names = Json::array({"Allow once"});
  if (!request.confirmListed) {
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
      [done = std::move(done), confirmListed = request.confirmListed](Result<Json> reply) {
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
          if (answer == "once" || (answer == "session" && !confirmListed)) {
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
      approvals_(approver_) {}

GatewaySession::~GatewaySession() = default;

bool GatewaySession::clientHas(const std::string& capability) const {
  return !ended_ && !stateless_ && clientCapabilities_.is_object() &&
         clientCapabilities_.contains(capability);
}

void GatewaySession::receive(mcp::Message message) {
  if (ended_) return;
  if (auto* request = std::get_if<mcp::Request>(&message)) {
    onRequest(std::move(*request));
  } else if (auto* notification = std::get_if<mcp::Notification>(&message)) {
    onNotification(*notification);
  } else {
    onResponse(std::get<mcp::Response>(message));
  }
}

void GatewaySession::end() {
  if (std::exchange(ended_, true)) return;
  // A client that went away takes its calls with it: each server is told to stop.
  for (auto& [key, call] : inFlight_) {
    call.cancelled = true;
    gateway_->host->cancel(call.call, "the client went away");
  }
  auto asked = std::move(asked_);
  for (auto& [id, pending] : asked) {
    pending.timer->cancel();
    if (pending.done) pending.done(fail(ErrorCode::kConnect, "the client went away"));
  }
}

void GatewaySession::sendNotification(const std::string& method, Json params,
                                      const Json& relatedTo) {
  if (ended_) return;
  Json message = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) message["params"] = std::move(params);
  outbox_->send(std::move(message), relatedTo);
}

void GatewaySession::sendRequest(const std::string& method, Json params, const Json& relatedTo,
                                 std::chrono::milliseconds timeout,
                                 std::function<void(Result<Json>)> done) {
  if (ended_) {
    done(fail(ErrorCode::kConnect, "the client went away"));
    return;
  }
  const std::int64_t id = nextId_++;
  Asked& pending = asked_[id];
  pending.done = std::move(done);
  pending.timer = std::make_unique<boost::asio::steady_timer>(gateway_->io, timeout);
  pending.timer->async_wait(
      [weak = weak_from_this(), id, timeout](const boost::system::error_code& ec) {
        auto self = weak.lock();
        if (ec || !self) return;
        auto it = self->asked_.find(id);
        if (it == self->asked_.end()) return;
        auto answer = std::move(it->second.done);
        self->asked_.erase(it);
        answer(fail(ErrorCode::kTimeout,
                    "no answer within " + std::to_string(timeout.count() / 1000) + " s"));
      });
  outbox_->send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}},
                relatedTo);
}

void GatewaySession::onResponse(const mcp::Response& response) {
  if (!response.id.is_number_integer()) return;
  auto it = asked_.find(response.id.get<std::int64_t>());
  if (it == asked_.end()) return;
  Asked pending = std::move(it->second);
  asked_.erase(it);
  pending.timer->cancel();
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
  outbox_->send({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(body)}}, id);
}

void GatewaySession::respondError(const Json& id, std::int64_t code, const std::string& message,
                                  Json data) {
  if (ended_) return;
  Json error = {{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = std::move(data);
  outbox_->send({{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}}, id);
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
  auto caps = meta->find(kMetaCapabilities);
  if (caps != meta->end() && caps->is_object()) clientCapabilities_ = *caps;
}

void GatewaySession::initialize(const mcp::Request& request) {
  const std::string asked = stringAt(request.params, "protocolVersion");
  version_ = supported(asked) && asked != mcp::kStatelessProtocolVersion
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

void GatewaySession::onRequest(mcp::Request request) {
  adoptMeta(request.params);
  const std::string& method = request.method;
  if (method == "initialize") return initialize(request);
  if (method == "server/discover") return discover(request);
  if (method == "ping") return respond(request.id, Json::object());
  if (!started_) {
    return respondError(request.id, rpc::kInvalidRequest,
                        "the session has not been initialized; send initialize first");
  }
  if (method == "tools/list") return listTools(request);
  if (method == "tools/call") return callTool(request);
  if (method == "resources/list") return listEverywhere(request, "resources", "resources");
  if (method == "resources/templates/list") {
    return listEverywhere(request, "resources", "resourceTemplates");
  }
  if (method == "prompts/list") return listEverywhere(request, "prompts", "prompts");
  if (method == "logging/setLevel") {
    for (const auto& ability : gateway_->abilitiesWith("logging")) {
      gateway_->host->request(ability, method, request.params, std::chrono::milliseconds(0),
                              [](const Result<Json>&) {});
    }
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

void GatewaySession::listTools(const mcp::Request& request) {
  Json tools = Json::array();
  if (gateway_->options.proxy) {
    tools.push_back(proxyToolDefinition());
    return respond(request.id, Json{{"tools", std::move(tools)}});
  }
  for (const auto& entry : gateway_->catalog->list()) {
    Json tool = entry.tool.raw.is_object() ? entry.tool.raw : Json::object();
    tool["name"] = entry.name;
    if (!tool.contains("inputSchema")) tool["inputSchema"] = {{"type", "object"}};
    tools.push_back(std::move(tool));
  }
  respond(request.id, Json{{"tools", std::move(tools)}});
}

void GatewaySession::callTool(const mcp::Request& request) {
  const Json& params = request.params;
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
    return respondError(request.id, rpc::kInvalidParams, "tools/call needs a string \"name\"");
  }
  Json arguments = params.value("arguments", Json::object());
  if (arguments.is_null()) arguments = Json::object();
  if (!arguments.is_object()) {
    return respondError(request.id, rpc::kInvalidParams,
                        "tools/call \"arguments\" must be an object");
  }
  Json progressToken;
  if (auto meta = params.find("_meta"); meta != params.end() && meta->is_object()) {
    progressToken = meta->value("progressToken", Json());
  }
  const std::string name = params["name"].get<std::string>();
  if (gateway_->options.proxy) {
    if (name != kProxyToolName) {
      return respond(request.id, textResult("kaja offers one tool here, \"mcp\": call it with "
                                            "operation=search to find \"" +
                                                mcp::clip(name, 80) + "\"",
                                            true));
    }
    return proxyCall(request.id, arguments, progressToken);
  }
  runCall(request.id, name, std::move(arguments), progressToken);
}

void GatewaySession::proxyCall(const Json& id, const Json& arguments, const Json& progressToken) {
  const std::string operation = stringAt(arguments, "operation");
  const std::vector<CatalogTool> tools = gateway_->catalog->list();
  if (operation == "search") {
    std::size_t limit = kDefaultSearchResults;
    if (auto it = arguments.find("limit"); it != arguments.end() && it->is_number_integer()) {
      limit = static_cast<std::size_t>(std::max<std::int64_t>(1, it->get<std::int64_t>()));
    }
    std::string text;
    Json found = Json::array();
    for (const auto& hit : searchTools(tools, stringAt(arguments, "query"), limit)) {
      const std::string line =
          hit.tool->tool.description.substr(0, hit.tool->tool.description.find('\n'));
      text += hit.tool->name + (line.empty() ? "" : ": " + mcp::clip(line, 160)) + "\n";
      found.push_back({{"name", hit.tool->name}, {"description", mcp::clip(line, 160)}});
    }
    if (found.empty()) text = "No tool matches; try other words, or operation=status.";
    Json result = textResult(text, false);
    result["structuredContent"] = {{"tools", found}};
    return respond(id, std::move(result));
  }
  if (operation == "call" || operation == "describe") {
    if (stringAt(arguments, "name").empty()) {
      return respond(id, textResult(operation + " needs \"name\": a tool name from search", true));
    }
  }
  if (operation == "describe") {
    const std::string name = stringAt(arguments, "name");
    for (const auto& tool : tools) {
      if (tool.name != name) continue;
      Json shown = {{"name", tool.name},
                    {"description", tool.tool.description},
                    {"inputSchema", tool.tool.inputSchema},
                    {"readOnly", tool.readOnly}};
      return respond(id,
                     textResult(shown.dump(2, ' ', false, Json::error_handler_t::replace), false));
    }
    return respond(id, textResult(gateway_->catalog->route(name).error().message, true));
  }
  if (operation == "call") {
    Json callArguments = arguments.value("arguments", Json::object());
    if (!callArguments.is_object()) callArguments = Json::object();
    return runCall(id, stringAt(arguments, "name"), std::move(callArguments), progressToken);
  }
  if (operation == "status") {
    std::string text;
    for (const auto& scope : gateway_->config.scopes) {
      const std::string& ability = scope.ability.name;
      auto listed = gateway_->host->tools(ability);
      auto failed = gateway_->failures.find(ability);
      text += ability + ": " +
              (listed ? "ready, " + std::to_string(listed->size()) + " tools"
               : failed != gateway_->failures.end() ? "failed: " + failed->second
                                                    : "not running") +
              "\n";
    }
    for (const auto& why : gateway_->config.skipped) text += why + "\n";
    return respond(id, textResult(text, false));
  }
  respond(id, textResult("operation must be search, describe, call or status", true));
}

void GatewaySession::runCall(const Json& id, const std::string& name, Json arguments,
                             const Json& progressToken) {
  auto route = gateway_->catalog->route(name);
  if (!route) return respond(id, textResult(route.error().message, true));
  const std::string key = idKey(id);
  if (inFlight_.contains(key)) {
    return respondError(id, rpc::kInvalidRequest,
                        "a request with this id is still running; use a new id");
  }
  inFlight_[key].ability = route->ability;
  gateway_->running.emplace(route->ability, RunningCall{weak_from_this(), id});
  auto send = [weak = weak_from_this(), ability = route->ability, id, key, progressToken](
                  const std::string& tool, const Json& values,
                  std::function<void(Result<mcp::ToolResult>)> sent) {
    auto self = weak.lock();
    if (!self || self->ended_) {
      sent(fail(ErrorCode::kRefused, "the client went away before the call was sent"));
      return;
    }
    // A call the client cancelled while its approval was asked must not run on a late yes.
    if (auto it = self->inFlight_.find(key); it != self->inFlight_.end() && it->second.cancelled) {
      sent(fail(ErrorCode::kRefused, "the client cancelled the call before it was sent"));
      return;
    }
    HostCallOptions options;
    // A server that reports progress is still working: its call is not timed out meanwhile,
    // whether or not the client asked to see the progress.
    options.resetTimeoutOnProgress = true;
    options.onProgress = [weak, id, progressToken](const mcp::Progress& progress) {
      auto alive = weak.lock();
      if (!alive || progressToken.is_null()) return;
      Json update = {{"progressToken", progressToken}, {"progress", progress.progress}};
      if (progress.total) update["total"] = *progress.total;
      if (!progress.message.empty()) update["message"] = progress.message;
      alive->sendNotification("notifications/progress", std::move(update), id);
    };
    HostCall call =
        self->gateway_->host->callTool(ability, tool, values, std::move(options), std::move(sent));
    if (auto it = self->inFlight_.find(key); it != self->inFlight_.end()) it->second.call = call;
  };
  approver_.relatedTo = id;
  gateway_->catalog->call(route->ability, route->tool, std::move(arguments), approvals_,
                          gateway_->audit ? &*gateway_->audit : nullptr, std::move(send),
                          [weak = weak_from_this(), id = id](policy::CallOutcome outcome) {
                            if (auto self = weak.lock()) self->callFinished(id, outcome);
                          });
  approver_.relatedTo = nullptr;
}

void GatewaySession::callFinished(const Json& id, const policy::CallOutcome& outcome) {
  const std::string key = idKey(id);
  bool cancelled = false;
  if (auto it = inFlight_.find(key); it != inFlight_.end()) {
    cancelled = it->second.cancelled;
    auto range = gateway_->running.equal_range(it->second.ability);
    for (auto run = range.first; run != range.second; ++run) {
      if (run->second.requestId == id && run->second.session.lock().get() == this) {
        gateway_->running.erase(run);
        break;
      }
    }
    inFlight_.erase(it);
  }
  // A cancelled request gets no answer (the client has stopped waiting for one).
  if (cancelled || ended_) return;
  if (outcome.refusal) {
    return respond(id, textResult("kaja refused the call (" + outcome.refusal->rule +
                                      "): " + outcome.refusal->message,
                                  true));
  }
  if (outcome.error || !outcome.result) {
    std::string why = outcome.error ? outcome.error->describe() : "the call ended with no result";
    return respond(id, textResult("kaja: the call failed: " + why, true));
  }
  Json result = outcome.result->raw;
  if (!outcome.backups.empty()) result["_meta"]["kaja/backups"] = outcome.backups;
  respond(id, std::move(result));
}

namespace {

// Gathers one list from several servers: every page of each, in ability order.
struct Gathering {
  std::vector<std::string> abilities;
  std::vector<Json> items;  ///< per ability
  std::size_t remaining = 0;
  std::function<void()> done;
};

void listPages(AsyncHost& host, const std::shared_ptr<Gathering>& gathering, std::size_t index,
               const std::string& method, const std::string& key, Json cursor, int page) {
  Json params = Json::object();
  if (!cursor.is_null()) params["cursor"] = cursor;
  host.request(gathering->abilities[index], method, std::move(params), std::chrono::milliseconds(0),
               [&host, gathering, index, method, key, page](Result<Json> result) {
                 if (result && result->is_object()) {
                   auto list = result->find(key);
                   if (list != result->end() && list->is_array()) {
                     for (auto& item : *list) {
                       if (item.is_object()) gathering->items[index].push_back(std::move(item));
                     }
                   }
                   auto next = result->find("nextCursor");
                   if (next != result->end() && next->is_string() && page + 1 < kMaxPages) {
                     listPages(host, gathering, index, method, key, *next, page + 1);
                     return;
                   }
                 }
                 if (--gathering->remaining == 0) gathering->done();
               });
}

}  // namespace

void GatewaySession::listEverywhere(const mcp::Request& request, const std::string& capability,
                                    const std::string& key) {
  auto gathering = std::make_shared<Gathering>();
  gathering->abilities = gateway_->abilitiesWith(capability);
  gathering->items.assign(gathering->abilities.size(), Json::array());
  gathering->remaining = gathering->abilities.size();
  gathering->done = [weak = weak_from_this(), gathering, id = request.id, key] {
    auto self = weak.lock();
    if (!self) return;
    Gateway::Impl& gateway = *self->gateway_;
    Json all = Json::array();
    std::map<std::string, std::string> seen;  // a URI or name to the ability that has it
    for (std::size_t i = 0; i < gathering->abilities.size(); ++i) {
      const std::string& ability = gathering->abilities[i];
      for (auto& item : gathering->items[i]) {
        if (key == "prompts") {
          const std::string name = stringAt(item, "name");
          const std::string shown = gateway.options.names == NameStyle::kBare
                                        ? name
                                        : exposedName(gateway.options.names, ability, name);
          if (name.empty() || !seen.emplace(shown, ability).second) continue;
          gateway.promptRoutes[shown] = {ability, name};
          item["name"] = shown;
        } else {
          const std::string uri = stringAt(item, key == "resources" ? "uri" : "uriTemplate");
          if (uri.empty()) continue;
          // Two abilities with one URI would be ambiguous: the first in the persona keeps it.
          if (!seen.emplace(uri, ability).second) {
            gateway.log(ability + " offers " + mcp::clip(uri, 120) + ", which " + seen[uri] +
                        " offers too; kaja leaves " + ability + "'s out");
            continue;
          }
          if (key == "resources") gateway.resourceRoutes[uri] = ability;
        }
        all.push_back(std::move(item));
      }
    }
    self->respond(id, Json{{key, std::move(all)}});
  };
  if (gathering->abilities.empty()) {
    gathering->remaining = 1;
    if (--gathering->remaining == 0) gathering->done();
    return;
  }
  const std::string method = key == "resourceTemplates" ? "resources/templates/list"
                             : key == "prompts"         ? "prompts/list"
                                                        : "resources/list";
  for (std::size_t i = 0; i < gathering->abilities.size(); ++i) {
    listPages(*gateway_->host, gathering, i, method, key, Json(), 0);
  }
}

void GatewaySession::forward(const mcp::Request& request) {
  Json params = request.params.is_object() ? request.params : Json::object();
  Gateway::Impl& gateway = *gateway_;
  std::string ability;
  std::string capability = request.method.starts_with("prompts") ? "prompts" : "resources";
  std::string promptName = stringAt(params, "name");
  std::string uri = stringAt(params, "uri");
  if (request.method == "completion/complete") {
    const Json ref = params.value("ref", Json::object());
    capability = stringAt(ref, "type") == "ref/prompt" ? "prompts" : "resources";
    promptName = stringAt(ref, "name");
    uri = stringAt(ref, "uri");
  }
  if (capability == "prompts") {
    std::string serverName;
    if (auto it = gateway.promptRoutes.find(promptName); it != gateway.promptRoutes.end()) {
      ability = it->second.first;
      serverName = it->second.second;
    } else if (gateway.options.names != NameStyle::kBare) {
      // Before any listing, a plain "<ability>__<prompt>" still says where it goes.
      for (const auto& candidate : gateway.abilitiesWith("prompts")) {
        const std::string prefix = exposedName(gateway.options.names, candidate, "");
        if (promptName.size() > prefix.size() && promptName.starts_with(prefix) &&
            candidate.size() > ability.size()) {
          ability = candidate;
          serverName = promptName.substr(prefix.size());
        }
      }
    }
    if (!ability.empty()) {
      if (request.method == "completion/complete") {
        params["ref"]["name"] = serverName;
      } else {
        params["name"] = serverName;
      }
    }
  } else if (auto it = gateway.resourceRoutes.find(uri); it != gateway.resourceRoutes.end()) {
    ability = it->second;
  }
  // Before any listing, or for a URI made from a template, one server with the capability
  // is the only place it can go.
  if (ability.empty()) {
    auto candidates = gateway.abilitiesWith(capability);
    if (candidates.size() == 1) ability = candidates.front();
  }
  if (ability.empty()) {
    return respondError(request.id, rpc::kInvalidParams,
                        "no ability of persona \"" + gateway.config.persona + "\" offers " +
                            mcp::clip(capability == "prompts" ? promptName : uri, 120) + "; list " +
                            capability + " first");
  }
  std::function<void(const mcp::Progress&)> onProgress;
  Json progressToken = params.value("_meta", Json::object()).value("progressToken", Json());
  if (!progressToken.is_null()) {
    onProgress = [weak = weak_from_this(), id = request.id, progressToken](const mcp::Progress& p) {
      auto self = weak.lock();
      if (!self) return;
      Json update = {{"progressToken", progressToken}, {"progress", p.progress}};
      if (p.total) update["total"] = *p.total;
      self->sendNotification("notifications/progress", std::move(update), id);
    };
  }
  params.erase("_meta");
  const std::string key = idKey(request.id);
  if (inFlight_.contains(key)) {
    return respondError(request.id, rpc::kInvalidRequest,
                        "a request with this id is still running; use a new id");
  }
  // The client may cancel it like a call: the server is told, and no answer follows.
  HostCall call = gateway.host->request(
      ability, request.method, std::move(params), std::chrono::milliseconds(0),
      [weak = weak_from_this(), id = request.id, key](Result<Json> result) {
        auto self = weak.lock();
        if (!self) return;
        auto it = self->inFlight_.find(key);
        const bool cancelled = it != self->inFlight_.end() && it->second.cancelled;
        if (it != self->inFlight_.end()) self->inFlight_.erase(it);
        if (!cancelled) self->respond(id, std::move(result));
      },
      std::move(onProgress));
  inFlight_[key] = InFlight{ability, call, false};
}

std::shared_ptr<server::Session> makeSession(const std::shared_ptr<Gateway::Impl>& gateway,
                                             std::shared_ptr<server::Outbox> outbox) {
  auto session = std::make_shared<GatewaySession>(gateway, std::move(outbox));
  std::erase_if(gateway->sessions, [](const auto& weak) { return weak.expired(); });
  gateway->sessions.push_back(session);
  return session;
}

}  // namespace kaja::core::gateway
