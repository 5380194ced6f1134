#pragma once

// A Session that answers from its own messages, for testing the fronts without a gateway.
//
//   initialize        -> a result that echoes the requested protocolVersion
//   server/discover   -> supportedVersions (2026-07-28 and the 2025 ones)
//   tools/list        -> one tool, "echo", whose "region" argument travels in Mcp-Param-Region
//   tools/call        -> notifications/progress first when _meta.progressToken is set, then
//                        text content holding the arguments
//   test/elicit       -> an elicitation/create request related to it; its answer becomes
//                        this request's result
//   test/notify       -> notifications/message unrelated to any request, then {}
//   test/hold         -> no answer until a test/release request arrives (then {"held":true})
//   test/fail         -> a progress notification when params.progress is set, then an error
//                        with code params.code
//   anything else     -> its params as the result

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/server/http_checks.h"
#include "core/server/session.h"

namespace kaja::testing {

/// What every EchoSession of one factory saw: tests read it.
struct EchoLog {
  std::atomic<int> created = 0;  ///< atomic: HTTP tests read it beside the front's thread
  std::atomic<int> ended = 0;
  std::vector<std::string> notifications;  ///< methods of the notifications received
};

/// The input schema of the echo tool.
inline core::mcp::Json echoSchema() {
  return {{"type", "object"},
          {"properties", {{"region", {{"type", "string"}, {"x-mcp-header", "Region"}}}}}};
}

class EchoSession final : public core::server::Session {
 public:
  EchoSession(std::shared_ptr<core::server::Outbox> outbox, std::shared_ptr<EchoLog> log)
      : outbox_(std::move(outbox)), log_(std::move(log)) {
    ++log_->created;
  }

  void receive(core::mcp::Message message) override {
    using core::mcp::Json;
    if (ended_) return;
    if (auto* note = std::get_if<core::mcp::Notification>(&message)) {
      log_->notifications.push_back(note->method);
      return;
    }
    if (auto* response = std::get_if<core::mcp::Response>(&message)) {
      for (auto it = elicits_.begin(); it != elicits_.end(); ++it) {
        if (it->first != response->id) continue;
        const Json original = it->second;
        elicits_.erase(it);
        reply(original, response->result.value_or(Json{{"error", "unreadable"}}));
        return;
      }
      return;
    }
    auto& request = std::get<core::mcp::Request>(message);
    const Json& params = request.params;
    // A 2026-07-28 request's result says it is complete (not an input request).
    modern_ = params.is_object() && params.contains("_meta") && params["_meta"].is_object() &&
              params["_meta"].value("io.modelcontextprotocol/protocolVersion", "") == "2026-07-28";
    if (request.method == "initialize") {
      const std::string version =
          params.is_object() ? params.value("protocolVersion", "2025-11-25") : "2025-11-25";
      reply(request.id, Json{{"protocolVersion", version},
                             {"capabilities", {{"tools", Json::object()}}},
                             {"serverInfo", {{"name", "echo"}, {"version", "1.0.0"}}}});
    } else if (request.method == "server/discover") {
      reply(request.id, Json{{"supportedVersions", {"2026-07-28", "2025-11-25"}},
                             {"capabilities", {{"tools", Json::object()}}},
                             {"serverInfo", {{"name", "echo"}, {"version", "1.0.0"}}}});
    } else if (request.method == "tools/list") {
      reply(request.id, Json{{"tools",
                              {{{"name", "echo"},
                                {"description", "Returns its arguments"},
                                {"inputSchema", echoSchema()}}}}});
    } else if (request.method == "tools/call") {
      callTool(request);
    } else if (request.method == "test/elicit") {
      const Json id = "elicit-" + std::to_string(++elicitCount_);
      elicits_.emplace_back(id, request.id);
      outbox_->send(
          Json{{"jsonrpc", "2.0"},
               {"id", id},
               {"method", "elicitation/create"},
               {"params",
                {{"message", "Allow?"},
                 {"requestedSchema", {{"type", "object"}, {"properties", Json::object()}}}}}},
          request.id);
    } else if (request.method == "test/notify") {
      outbox_->send(Json{{"jsonrpc", "2.0"},
                         {"method", "notifications/message"},
                         {"params", {{"level", "info"}, {"data", params}}}},
                    Json());
      reply(request.id, Json::object());
    } else if (request.method == "test/hold") {
      held_.push_back(request.id);
    } else if (request.method == "test/fail") {
      if (params.value("progress", false)) {
        outbox_->send(Json{{"jsonrpc", "2.0"},
                           {"method", "notifications/progress"},
                           {"params", {{"progressToken", 1}, {"progress", 1}}}},
                      request.id);
      }
      outbox_->send(
          Json{{"jsonrpc", "2.0"},
               {"id", request.id},
               {"error", {{"code", params.value("code", -32603)}, {"message", "failed"}}}},
          request.id);
    } else if (request.method == "test/release") {
      for (const auto& id : std::exchange(held_, {})) reply(id, Json{{"held", true}});
      reply(request.id, Json::object());
    } else {
      reply(request.id, params.is_null() ? Json::object() : params);
    }
  }

  [[nodiscard]] std::optional<std::string> paramHeaderMismatch(
      const core::mcp::Request& request, const core::server::ParamHeaders& headers) const override {
    if (request.method != "tools/call" || !request.params.is_object()) return std::nullopt;
    return core::server::http_checks::paramHeaderMismatch(
        echoSchema(), request.params.value("arguments", core::mcp::Json::object()), headers);
  }

  void end() override {
    if (ended_) return;
    ended_ = true;
    ++log_->ended;
  }

 private:
  void callTool(const core::mcp::Request& request) {
    using core::mcp::Json;
    const Json& params = request.params;
    if (params.is_object() && params.contains("_meta") && params["_meta"].is_object() &&
        params["_meta"].contains("progressToken")) {
      outbox_->send(Json{{"jsonrpc", "2.0"},
                         {"method", "notifications/progress"},
                         {"params",
                          {{"progressToken", params["_meta"]["progressToken"]},
                           {"progress", 1},
                           {"total", 2}}}},
                    request.id);
    }
    const Json arguments = params.is_object() ? params.value("arguments", Json::object()) : Json();
    reply(request.id, Json{{"content", {{{"type", "text"}, {"text", arguments.dump()}}}}});
  }

  void reply(const core::mcp::Json& id, core::mcp::Json result) {
    if (modern_ && result.is_object()) {
      result["resultType"] = "complete";
      if (result.contains("tools")) {
        result["ttlMs"] = 0;
        result["cacheScope"] = "private";
      }
    }
    outbox_->send(core::mcp::Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}},
                  id);
  }

  std::shared_ptr<core::server::Outbox> outbox_;
  std::shared_ptr<EchoLog> log_;
  std::vector<std::pair<core::mcp::Json, core::mcp::Json>> elicits_;  // elicit id, request id
  std::vector<core::mcp::Json> held_;
  int elicitCount_ = 0;
  bool ended_ = false;
  bool modern_ = false;
};

/// Returns a factory of EchoSessions that all report to `log`.
inline core::server::SessionFactory echoFactory(std::shared_ptr<EchoLog> log) {
  return [log](std::shared_ptr<core::server::Outbox> outbox) {
    return std::make_shared<EchoSession>(std::move(outbox), log);
  };
}

}  // namespace kaja::testing
