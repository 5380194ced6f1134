// The tools a session offers and the calls it runs: through the catalog, or the proxy tool.
#include <algorithm>

#include "core/gateway/gateway_session.h"  // IWYU pragma: associated
#include "core/gateway/gateway_util.h"
#include "core/gateway/proxy_tool.h"
#include "core/mcp/client.h"
#include "core/server/http_checks.h"

namespace kaja::core::gateway {

using mcp::Json;

bool GatewaySession::refusedAsRunning(const Json& id, const std::string& key) {
  if (!inFlight_.contains(key)) return false;
  respondError(id, rpc::kInvalidRequest, "a request with this id is still running; use a new id");
  return true;
}

std::optional<std::string> GatewaySession::paramHeaderMismatch(
    const mcp::Request& request, const server::ParamHeaders& headers) const {
  if (request.method != "tools/call" || gateway_->options.proxy || !gateway_->catalog) {
    return std::nullopt;
  }
  const std::string name = stringAt(request.params, "name");
  const Json arguments = request.params.is_object()
                             ? request.params.value("arguments", Json::object())
                             : Json::object();
  for (const auto& entry : gateway_->catalog->list()) {
    if (entry.name == name) {
      return server::http_checks::paramHeaderMismatch(entry.tool.inputSchema, arguments, headers);
    }
  }
  return std::nullopt;  // the call itself answers that there is no such tool
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
      text += scope.ability.name + ": " + gateway_->stateOf(scope.ability.name) + "\n";
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
  if (refusedAsRunning(id, key)) return;
  inFlight_[key].ability = route->ability;
  gateway_->running.emplace(route->ability, RunningCall{weak_from_this(), id, requestLogLevel_});
  gateway_->use(route->ability);
  auto send = [weak = weak_from_this(), ability = route->ability, id, key, progressToken, name,
               logLevel = requestLogLevel_](const std::string& tool, const Json& values,
                                            std::function<void(Result<mcp::ToolResult>)> sent) {
    auto self = weak.lock();
    if (!self || self->ended_) {
      sent(fail(ErrorCode::kRefused, "the client went away before the call was sent"));
      return;
    }
    // An approval can take minutes, in which the persona may have dropped the tool.
    if (auto now = self->gateway_->catalog->route(name);
        !now || now->ability != ability || now->tool != tool) {
      sent(fail(ErrorCode::kRefused,
                "persona \"" + self->gateway_->config.persona + "\" no longer offers " + name +
                    " (its configuration changed while the call waited), so kaja did not send it"));
      return;
    }
    // A call the client cancelled while its approval was asked must not run on a late yes.
    if (auto it = self->inFlight_.find(key); it != self->inFlight_.end() && it->second.cancelled) {
      sent(fail(ErrorCode::kRefused, "the client cancelled the call before it was sent"));
      return;
    }
    // A lazy server starts here, on its first call, once the call is allowed.
    self->gateway_->whenRunning(
        ability, [weak, ability, id, key, progressToken, tool, values, logLevel,
                  sent = std::move(sent)](Result<void> ready) mutable {
          auto self = weak.lock();
          if (!ready || !self || self->ended_) {
            sent(ready ? fail(ErrorCode::kRefused, "the client went away before the call was sent")
                       : std::unexpected(ready.error()));
            return;
          }
          auto it = self->inFlight_.find(key);
          if (it != self->inFlight_.end() && it->second.cancelled) {
            sent(fail(ErrorCode::kRefused, "the client cancelled the call before it was sent"));
            return;
          }
          HostCallOptions options;
          // A server that reports progress is still working: its call is not timed out
          // meanwhile, whether or not the client asked to see the progress.
          options.resetTimeoutOnProgress = true;
          options.onProgress = progressRelay(weak, id, progressToken);
          options.capabilities = self->capabilitiesFor(ability);
          options.logLevel = logLevel;
          HostCall call = self->gateway_->host->callTool(ability, tool, values, std::move(options),
                                                         std::move(sent));
          if (it != self->inFlight_.end()) it->second.call = call;
        });
  };
  approver_.relatedTo = id;
  gateway_->catalog->call(route->ability, route->tool, std::move(arguments), approvals_,
                          gateway_->audit ? &*gateway_->audit : nullptr, std::move(send),
                          [weak = weak_from_this(), gateway = std::weak_ptr(gateway_),
                           ability = route->ability, id = id](const policy::CallOutcome& outcome) {
                            // The server is free again even when the session is gone.
                            if (auto impl = gateway.lock()) impl->release(ability);
                            if (auto self = weak.lock()) self->callFinished(id, outcome);
                          });
  approver_.relatedTo = nullptr;
}

void GatewaySession::forgetRunning(const std::string& ability, const Json& id) {
  auto range = gateway_->running.equal_range(ability);
  for (auto run = range.first; run != range.second; ++run) {
    if (run->second.requestId == id && run->second.session.lock().get() == this) {
      gateway_->running.erase(run);
      return;
    }
  }
}

void GatewaySession::callFinished(const Json& id, const policy::CallOutcome& outcome) {
  const std::string key = idKey(id);
  bool cancelled = false;
  if (auto it = inFlight_.find(key); it != inFlight_.end()) {
    cancelled = it->second.cancelled;
    forgetRunning(it->second.ability, id);
    inFlight_.erase(it);
  }
  // A cancelled request gets no answer (the client has stopped waiting for one).
  if (cancelled || ended_) return;
  if (outcome.refusal) {
    return respond(id, textResult("kaja refused the call (" + outcome.refusal->rule +
                                      "): " + outcome.refusal->message,
                                  true));
  }
  // A 2026-07-28 server's "you lack a capability" is the client's to hear as an error.
  if (outcome.error && outcome.error->rpcCode == rpc::kMissingCapability) {
    return respond(id, std::unexpected(*outcome.error));
  }
  if (outcome.error || !outcome.result) {
    std::string why = outcome.error ? outcome.error->describe() : "the call ended with no result";
    return respond(id, textResult("kaja: the call failed: " + why, true));
  }
  Json result = outcome.result->raw;
  // kaja's own key in _meta; a server's result was checked to hold an object there, but a
  // type error here would end the whole gateway, so that is checked again.
  if (!outcome.backups.empty() && result.is_object() &&
      (!result.contains("_meta") || result["_meta"].is_object())) {
    result["_meta"]["kaja/backups"] = outcome.backups;
  }
  respond(id, std::move(result));
}

}  // namespace kaja::core::gateway
