// kaja's client under the official MCP conformance suite (@modelcontextprotocol/conformance).
//
//   kaja-conformance-client [options…] URL
//
// The suite starts a scenario server and runs this program with the server's URL as the
// last argument, the scenario's name in MCP_CONFORMANCE_SCENARIO and, for some
// scenarios, JSON in MCP_CONFORMANCE_CONTEXT ({"toolCalls": [{name, arguments}]}). It
// connects with Client (server/discover first, falling back to initialize), lists the
// tools, then calls the context's tools, or add_numbers for tools_call, or every listed
// tool with arguments made from its schema; lists and reads resources and prompts when
// the server offers them. Elicitation is accepted with the schema's defaults (SEP-1034).
// Exits 0 when the connection and listing worked (a tool's own error is not a failure).
//
// For the auth/* scenarios it signs in as kaja does (core/auth), headlessly: instead of
// opening a browser it fetches the authorization URL itself, and delivers the redirect the
// authorization server answers with to kaja's loopback listener, so the state and iss checks
// run on a real redirect. The context may carry a pre-registered client_id and client_secret.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <iostream>
#include <string>
#include <thread>

#include "core/auth/oauth_flow.h"
#include "core/auth/token_source.h"
#include "core/mcp/client.h"
#include "core/mcp/remote_transport.h"
#include "core/net/blocking_http.h"

namespace {

using kaja::core::RemotePlan;
using kaja::core::Result;
using namespace kaja::core::mcp;
namespace asio = boost::asio;

// Runs `work` on the loop and waits for the value it hands its callback.
template <class T>
T await(asio::io_context& io, std::function<void(std::function<void(T)>)> work) {
  auto promise = std::make_shared<std::promise<T>>();
  auto future = promise->get_future();
  asio::post(io, [work = std::move(work), promise] {
    work([promise](T value) { promise->set_value(std::move(value)); });
  });
  return future.get();
}

// Accepts an elicitation with every default its schema gives (SEP-1034).
void acceptWithDefaults(const Json& params, const InputOrigin& /*origin*/,
                        std::function<void(Result<Json>)> respond) {
  Json content = Json::object();
  const Json schema = params.value("requestedSchema", Json::object());
  const Json properties = schema.value("properties", Json::object());
  for (const auto& [name, property] : properties.items()) {
    if (property.is_object() && property.contains("default")) content[name] = property["default"];
  }
  respond(Json{{"action", "accept"}, {"content", std::move(content)}});
}

// Returns arguments for `tool` that satisfy its required properties.
Json argumentsFor(const Tool& tool) {
  Json arguments = Json::object();
  const Json properties = tool.inputSchema.value("properties", Json::object());
  for (const auto& name : tool.inputSchema.value("required", Json::array())) {
    if (!name.is_string() || !properties.contains(name.get<std::string>())) continue;
    const Json& property = properties[name.get<std::string>()];
    const std::string type = property.is_object() ? property.value("type", "string") : "string";
    if (type == "integer") {
      arguments[name.get<std::string>()] = 1;
    } else if (type == "number") {
      arguments[name.get<std::string>()] = 1.5;
    } else if (type == "boolean") {
      arguments[name.get<std::string>()] = true;
    } else if (type == "object") {
      arguments[name.get<std::string>()] = Json::object();
    } else if (type == "array") {
      arguments[name.get<std::string>()] = Json::array();
    } else {
      arguments[name.get<std::string>()] = "test";
    }
  }
  return arguments;
}

// Follows authorization URLs as a browser would for a person who approves at once: the
// authorization server's redirect is delivered to the loopback listener on a thread of its
// own, since the listener only reads it once the opener has returned.
class HeadlessBrowser {
 public:
  ~HeadlessBrowser() {
    for (auto& delivery : deliveries_) delivery.join();
  }

  Result<void> open(const std::string& url) {
    kaja::core::net::HttpRequest request;
    request.url = url;
    const kaja::core::net::AddressPolicy policy{.allowPrivate = true};
    auto reply = kaja::core::net::fetchBlocking(request, policy);
    if (!reply) return std::unexpected(reply.error());
    const std::string location = reply->header("location");
    if (reply->status / 100 != 3 || location.empty()) {
      return kaja::core::fail(kaja::core::ErrorCode::kProtocol,
                              "the authorization endpoint answered HTTP " +
                                  std::to_string(reply->status) + " without a redirect");
    }
    if (!location.starts_with("http://127.0.0.1:")) {
      return kaja::core::fail(kaja::core::ErrorCode::kRefused,
                              "the authorization endpoint redirected elsewhere than kaja");
    }
    deliveries_.emplace_back([location, policy] {
      kaja::core::net::HttpRequest callback;
      callback.url = location;
      (void)kaja::core::net::fetchBlocking(callback, policy);
    });
    return {};
  }

 private:
  std::vector<std::thread> deliveries_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: kaja-conformance-client URL\n";
    return 2;
  }
  const std::string url = argv[argc - 1];
  const char* scenarioEnv = std::getenv("MCP_CONFORMANCE_SCENARIO");
  const std::string scenario = scenarioEnv != nullptr ? scenarioEnv : "";
  const char* contextEnv = std::getenv("MCP_CONFORMANCE_CONTEXT");
  const Json context =
      contextEnv != nullptr ? Json::parse(contextEnv, nullptr, false) : Json::object();

  asio::io_context io;
  auto guard = asio::make_work_guard(io);
  std::thread loop([&io] { io.run(); });
  auto stop = [&](int code) {
    guard.reset();
    io.stop();
    loop.join();
    return code;
  };

  HttpOptions http;
  http.serverName = "conformance";
  http.addressPolicy.allowPrivate = true;
  RemotePlan plan{url, false, {}};
  HeadlessBrowser browser;
  std::shared_ptr<kaja::core::auth::TokenSource> tokens;
  if (scenario.starts_with("auth/")) {
    auto serverUrl = kaja::core::net::parseUrl(url);
    if (!serverUrl) {
      std::cerr << serverUrl.error().message << "\n";
      return stop(1);
    }
    kaja::core::auth::ClientSettings settings;
    settings.clientName = "kaja-conformance-client";
    // The suite's Client ID Metadata Document URL; used where the server supports them.
    settings.clientMetadataUrl = "https://conformance-test.local/client-metadata.json";
    if (context.is_object()) {
      settings.clientId = context.value("client_id", "");
      settings.clientSecret = context.value("client_secret", "");
      settings.privateKeyPem = context.value("private_key_pem", "");
      settings.signingAlgorithm = context.value("signing_algorithm", "ES256");
    }
    if (context.is_object()) {
      settings.jwtBearerAssertion = context.value("valid_jwt", "");
      settings.idpIdToken = context.value("idp_id_token", "");
      settings.idpTokenEndpoint = context.value("idp_token_endpoint", "");
      settings.idpClientId = context.value("idp_client_id", "");
    }
    settings.clientCredentials = scenario.starts_with("auth/client-credentials") ||
                                 !settings.jwtBearerAssertion.empty() ||
                                 !settings.idpIdToken.empty();
    kaja::core::auth::OAuthFlow flow(
        *serverUrl, "the conformance server", settings,
        kaja::core::auth::defaultHttp({.allowPrivate = true}),
        [&browser](const std::string& authorize) { return browser.open(authorize); });
    kaja::core::auth::TokenSource::Options sourceOptions;
    sourceOptions.signInOnChallenge = true;
    tokens = kaja::core::auth::TokenSource::make(std::move(flow), std::nullopt, sourceOptions);
    tokens->attach(plan);
  }
  auto transport = makeRemoteTransport(io, plan, http);
  if (!transport) {
    std::cerr << transport.error().message << "\n";
    return stop(1);
  }
  ClientOptions options;
  options.clientName = "kaja-conformance-client";
  options.discover = true;
  auto client = Client::create(io, *transport, options);
  client->setElicitationHandler(acceptWithDefaults);
  client->setSamplingHandler(
      [](const Json&, const InputOrigin&, std::function<void(Result<Json>)> respond) {
        respond(Json{{"role", "assistant"},
                     {"content", {{"type", "text"}, {"text", "ok"}}},
                     {"model", "kaja-conformance"}});
      });
  client->setRootsProvider([] { return std::vector<Root>{}; });
  client->setWarningHandler(
      [](const std::string& text) { std::cerr << "warning: " << text << "\n"; });

  auto info = await<Result<ServerInfo>>(io, [&](auto done) { client->connect(done); });
  const auto signInError = [&] {
    const std::string error = tokens ? tokens->lastError() : "";
    return error.empty() ? std::string() : " (sign-in: " + error + ")";
  };
  if (!info) {
    std::cerr << "connect: " << info.error().message << signInError() << "\n";
    return stop(1);
  }
  std::cerr << "connected at " << info->protocolVersion
            << (client->isStateless() ? " (stateless)" : "") << "\n";
  auto tools = await<Result<std::vector<Tool>>>(io, [&](auto done) { client->listTools(done); });
  if (!tools) {
    std::cerr << "tools/list: " << tools.error().message << signInError() << "\n";
    return stop(1);
  }

  std::vector<std::pair<std::string, Json>> calls;
  if (context.is_object() && context.contains("toolCalls")) {
    for (const auto& call : context["toolCalls"])
      calls.emplace_back(call.value("name", ""), call.value("arguments", Json::object()));
  } else if (scenario == "tools_call") {
    calls.emplace_back("add_numbers", Json{{"a", 5}, {"b", 3}});
  } else if (scenario != "initialize") {
    for (const auto& tool : *tools) calls.emplace_back(tool.name, argumentsFor(tool));
  }
  for (const auto& [name, arguments] : calls) {
    auto result = await<Result<ToolResult>>(
        io, [&](auto done) { client->callTool(name, arguments, CallOptions{}, done); });
    std::cerr << "tools/call " << name << ": "
              << (result ? result->raw.dump() : "error: " + result.error().message) << "\n";
  }

  const auto listAndGet = [&](const char* capability, const char* list, const char* key,
                              const char* get, const char* field) {
    if (scenario == "initialize" || !info->capabilities.contains(capability)) return;
    auto listed = await<Result<Json>>(io, [&](auto done) {
      client->request(list, Json::object(), std::chrono::milliseconds(0), done);
    });
    if (!listed || !listed->contains(key) || (*listed)[key].empty()) return;
    const Json first = (*listed)[key][0];
    auto got = await<Result<Json>>(io, [&](auto done) {
      client->request(get, Json{{field, first.value(field, "")}}, std::chrono::milliseconds(0),
                      done);
    });
    std::cerr << get << ": " << (got ? "ok" : got.error().message) << "\n";
  };
  listAndGet("resources", "resources/list", "resources", "resources/read", "uri");
  listAndGet("prompts", "prompts/list", "prompts", "prompts/get", "name");

  await<bool>(io, [&](auto done) { client->close([done] { done(true); }); });
  return stop(0);
}
