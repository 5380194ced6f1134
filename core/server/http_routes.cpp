// The HTTP front's routes: which requests are admitted and what POST, GET and DELETE do.
#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/beast/http/read.hpp>
#include <cctype>

#include "core/mcp/json_rpc_envelope.h"
#include "core/server/http_checks.h"
#include "core/server/http_front_impl.h"
#include "core/server/wire.h"

namespace kaja::core::server {
namespace asio = boost::asio;
using mcp::Json;

namespace {

constexpr std::string_view kStateless = "2026-07-28";
constexpr std::int64_t kHeaderMismatch = -32020;
constexpr std::int64_t kUnsupportedVersion = -32022;

// An error answer; `id` is the request's, when its body was read.
std::string errorBody(std::int64_t code, std::string message, Json data = Json(),
                      Json id = Json()) {
  Json error = wire::errorObject(code, std::move(message));
  if (!data.is_null()) error["error"]["data"] = std::move(data);
  error["id"] = std::move(id);
  std::string body;
  wire::appendJson(error, body);
  return body;
}

std::string header(const http::request_header<>& request, std::string_view name) {
  const auto found = request.find(boost::beast::string_view(name.data(), name.size()));
  if (found == request.end()) return {};
  return std::string(found->value());
}

std::optional<std::string> optionalHeader(const http::request_header<>& request,
                                          std::string_view name) {
  const auto found = request.find(boost::beast::string_view(name.data(), name.size()));
  if (found == request.end()) return std::nullopt;
  return std::string(found->value());
}

// The versions a request could have used instead: the stateless one for a 2026-07-28 style
// request (as server/discover lists), else every one.
Json unsupportedVersionData(const std::string& requested, bool stateless) {
  Json supported = Json::array();
  for (const char* version : kServerProtocolVersions) {
    if (!stateless || version == kStateless) supported.push_back(version);
  }
  return Json{{"supported", supported}, {"requested", requested}};
}

std::string unsupportedVersionBody(const std::string& version, bool stateless, Json id) {
  return errorBody(kUnsupportedVersion,
                   "kaja does not speak MCP protocol version " + mcp::clip(version, 40) +
                       "; use one of those listed in data.supported.",
                   unsupportedVersionData(version, stateless), std::move(id));
}

// Every Mcp-Param-* header of `request`, by the lower-cased rest of its name.
ParamHeaders paramHeaders(const http::request_header<>& request) {
  constexpr std::string_view kPrefix = "mcp-param-";
  ParamHeaders found;
  for (const auto& field : request) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (name.size() <= kPrefix.size() || !name.starts_with(kPrefix)) continue;
    found[name.substr(kPrefix.size())].emplace_back(field.value());
  }
  return found;
}

std::string idKey(const mcp::Message& message) {
  if (const auto* request = std::get_if<mcp::Request>(&message)) return request->id.dump();
  return {};
}

}  // namespace

bool HttpFront::Impl::admit(const std::shared_ptr<HttpConnection>& connection,
                            const http::request_parser<http::string_body>& parser) {
  const auto& request = parser.get();
  auto refuse = [&](http::status status, std::string body, const HeaderList& headers = {}) {
    connection->respond(status, std::move(body), headers, true);
    return false;
  };
  if (options.router) {
    RouteDecision decision = route(request);
    if (decision.status != 0) {
      return refuse(static_cast<http::status>(decision.status), std::move(decision.body),
                    decision.headers);
    }
  } else if (!options.bearerToken.empty() &&
             !http_checks::bearerMatches(header(request, "Authorization"), options.bearerToken)) {
    return refuse(http::status::unauthorized,
                  errorBody(-32000,
                            "This kaja server needs an Authorization: Bearer token; "
                            "send the one it was started with."),
                  {{"WWW-Authenticate", "Bearer"}});
  }
  // Replies stream as chunked SSE, which HTTP/1.0 does not have.
  if (request.version() < 11) {
    return refuse(http::status::http_version_not_supported,
                  errorBody(-32000,
                            "kaja speaks MCP over HTTP/1.1; send the request as "
                            "HTTP/1.1."));
  }
  // HTTP/1.1 requires Host; without it the loopback names check below would not run.
  if (request.count(http::field::host) != 1) {
    return refuse(http::status::bad_request,
                  errorBody(-32000,
                            "The request must have exactly one Host header, as HTTP/1.1 "
                            "requires."));
  }
  if (const auto origin = optionalHeader(request, "Origin");
      origin && !http_checks::originAllowed(*origin, options.allowedOrigins)) {
    return refuse(http::status::forbidden,
                  errorBody(-32000, "Requests from the origin " + mcp::clip(*origin, 100) +
                                        " are not allowed; only loopback origins and those kaja "
                                        "was told to allow may call it."));
  }
  if (const auto host = optionalHeader(request, "Host");
      host && !options.router && http_checks::isLoopbackAddress(options.host) &&
      !http_checks::hostAllowed(*host, options.allowedOrigins)) {
    return refuse(http::status::forbidden,
                  errorBody(-32000, "Requests for the host " + mcp::clip(*host, 100) +
                                        " are not allowed: kaja listens on loopback and answers "
                                        "loopback names only (--allow-origin adds one)."));
  }
  const std::string_view target(request.target().data(), request.target().size());
  if (!options.router && target.substr(0, target.find('?')) != options.path) {
    return refuse(http::status::not_found,
                  errorBody(-32000, "There is nothing at " + mcp::clip(target, 100) +
                                        "; kaja's MCP endpoint is " + options.path + "."));
  }
  const auto method = request.method();
  if (method != http::verb::post && method != http::verb::get && method != http::verb::delete_) {
    return refuse(http::status::method_not_allowed,
                  errorBody(-32000, "kaja's MCP endpoint takes POST, GET and DELETE only."),
                  {{"Allow", "GET, POST, DELETE"}});
  }
  // A POST's version is checked once its body is read, so that the answer carries its id.
  const std::string version = header(request, "MCP-Protocol-Version");
  if (method != http::verb::post && !version.empty() && !supportedVersion(version)) {
    return refuse(http::status::bad_request, unsupportedVersionBody(version, false, Json()));
  }
  const std::string accept = header(request, "Accept");
  if (method == http::verb::post) {
    if (parser.content_length() && *parser.content_length() > options.maxMessageBytes) {
      return refuse(http::status::payload_too_large,
                    errorBody(-32000, "The request body is larger than kaja's limit of " +
                                          wire::formatBytes(options.maxMessageBytes) +
                                          "; send smaller messages."));
    }
    if (!http_checks::accepts(accept, "application/json") &&
        !http_checks::accepts(accept, "text/event-stream")) {
      return refuse(http::status::not_acceptable,
                    errorBody(-32000,
                              "The client must accept application/json and "
                              "text/event-stream (its Accept header allows neither)."));
    }
    const std::string type = header(request, "Content-Type");
    if (!type.empty() && !http_checks::accepts(type, "application/json")) {
      return refuse(http::status::unsupported_media_type,
                    errorBody(-32000, "The request body must be application/json."));
    }
  } else if (method == http::verb::get && !http_checks::accepts(accept, "text/event-stream")) {
    return refuse(http::status::not_acceptable,
                  errorBody(-32000,
                            "A GET must accept text/event-stream (its Accept header "
                            "does not)."));
  }
  return true;
}

RouteDecision HttpFront::Impl::route(const http::request_header<>& request) const {
  const std::string_view target(request.target().data(), request.target().size());
  if (!options.router) {
    RouteDecision decision;
    decision.sessions = factory;
    return decision;
  }
  const std::string_view method(request.method_string().data(), request.method_string().size());
  RouteRequest view{method, target.substr(0, target.find('?')),
                    [&request](std::string_view name) { return header(request, name); }};
  return options.router(view);
}

bool HttpFront::Impl::ownerFull(const std::shared_ptr<HttpConnection>& connection,
                                const RouteDecision& route) {
  if (options.maxSessionsPerOwner == 0 || route.owner.empty()) return false;
  const auto found = ownerSessions.find(route.owner);
  if (found == ownerSessions.end() || found->second < options.maxSessionsPerOwner) return false;
  connection->respond(http::status::too_many_requests,
                      errorBody(-32000, "There are " + std::to_string(found->second) +
                                            " open sessions for " + mcp::clip(route.owner, 64) +
                                            " already; end one with DELETE or wait for one "
                                            "to expire."),
                      {{"Retry-After", "30"}});
  return true;
}

std::shared_ptr<SessionState> HttpFront::Impl::findSession(const std::string& id,
                                                           const RouteDecision& route) const {
  const auto found = sessions.find(id);
  if (found == sessions.end() || found->second->endpoint != route.endpoint) return nullptr;
  return found->second;
}

void HttpFront::Impl::handle(const std::shared_ptr<HttpConnection>& connection,
                             http::request<http::string_body>& request) {
  if (stopped) {
    connection->close();
    return;
  }
  // Asked again: a token may have expired while the body was read.
  RouteDecision decision = route(request);
  if (decision.status != 0) {
    connection->respond(static_cast<http::status>(decision.status), std::move(decision.body),
                        decision.headers, true);
    return;
  }
  if (request.method() == http::verb::post) {
    handlePost(connection, request, decision);
  } else if (request.method() == http::verb::get) {
    handleGet(connection, request, decision);
  } else {
    handleDelete(connection, request, decision);
  }
}

void HttpFront::Impl::handlePost(const std::shared_ptr<HttpConnection>& connection,
                                 http::request<http::string_body>& request,
                                 const RouteDecision& route) {
  const std::string& body = request.body();
  auto parsed = mcp::parseMessages(body);
  if (!parsed) {
    const std::int64_t code = wire::parseErrorCode(parsed.error());
    connection->respond(
        http::status::bad_request,
        errorBody(code, parsed.error().message, Json(),
                  code == mcp::rpc_error::kParseError ? Json() : mcp::refusedRequestId(body)));
    return;
  }
  std::vector<mcp::Message> messages = std::move(*parsed);
  const bool batch = body.find_first_not_of(" \t\r\n") != std::string::npos &&
                     body[body.find_first_not_of(" \t\r\n")] == '[';
  const std::string version = header(request, "MCP-Protocol-Version");
  const Json first = mcp::toJson(messages.front());
  const bool discover = std::holds_alternative<mcp::Request>(messages.front()) &&
                        std::get<mcp::Request>(messages.front()).method == "server/discover";
  // Only a 2026-07-28 style request names its version in _meta.
  if (!batch &&
      (version == kStateless || !http_checks::metaProtocolVersion(first).empty() || discover)) {
    handleStateless(connection, request, std::move(messages.front()), route);
    return;
  }
  if (!version.empty() && !supportedVersion(version)) {
    connection->respond(
        http::status::bad_request,
        unsupportedVersionBody(version, false, batch ? Json() : first.value("id", Json())));
    return;
  }
  if (batch && !version.empty() && version != "2025-03-26") {
    connection->respond(http::status::bad_request,
                        errorBody(mcp::rpc_error::kInvalidRequest,
                                  "Protocol version " + version +
                                      " does not allow batches; send one message per POST."));
    return;
  }
  const bool initialize = !batch && std::holds_alternative<mcp::Request>(messages.front()) &&
                          std::get<mcp::Request>(messages.front()).method == "initialize";
  const std::string sessionId = header(request, "Mcp-Session-Id");
  std::shared_ptr<SessionState> state;
  HeaderList headers;
  if (sessionId.empty()) {
    if (!initialize) {
      connection->respond(http::status::bad_request,
                          errorBody(-32000,
                                    "This request needs the Mcp-Session-Id header that "
                                    "kaja returned for initialize."));
      return;
    }
    if (ownerFull(connection, route)) return;
    if (sessions.size() >= options.maxSessions) makeSessionRoom();
    if (sessions.size() >= options.maxSessions) {
      connection->respond(http::status::service_unavailable,
                          errorBody(-32000,
                                    "kaja has too many sessions, each with a request or "
                                    "stream in progress; end one with DELETE or try again "
                                    "later."));
      return;
    }
    auto id = http_checks::newSessionId();
    if (!id) {
      connection->respond(http::status::internal_server_error,
                          errorBody(-32603, id.error().message));
      return;
    }
    state = newSession(false, route);
    state->id = *id;
    state->initializeKey = idKey(messages.front());
    sessions.emplace(state->id, state);
    headers.emplace_back("Mcp-Session-Id", state->id);
  } else {
    state = findSession(sessionId, route);
    if (!state) {
      connection->respond(
          http::status::not_found,
          errorBody(-32001, "kaja has no session " + mcp::clip(sessionId, 80) +
                                "; it ended or never existed, so initialize again."));
      return;
    }
  }
  state->lastActive = std::chrono::steady_clock::now();
  std::string streamVersion = version.empty() ? state->protocolVersion : version;
  if (initialize) {
    const auto& params = std::get<mcp::Request>(messages.front()).params;
    if (params.is_object()) streamVersion = params.value("protocolVersion", "");
  }
  const bool sse = http_checks::accepts(header(request, "Accept"), "text/event-stream");
  openReply(connection, state, std::move(messages), sse, batch, headers, streamVersion);
}

void HttpFront::Impl::openReply(const std::shared_ptr<HttpConnection>& connection,
                                const std::shared_ptr<SessionState>& state,
                                std::vector<mcp::Message> messages, bool sse, bool batch,
                                const HeaderList& headers, const std::string& version) {
  std::set<std::string> pending;
  for (const auto& message : messages) {
    const std::string key = idKey(message);
    if (key.empty()) continue;
    if (state->byRequest.contains(key) || !pending.insert(key).second) {
      connection->respond(http::status::bad_request,
                          errorBody(mcp::rpc_error::kInvalidRequest,
                                    "The request id " + mcp::clip(key, 60) +
                                        " is already in use in this session; use a new id."),
                          headers);
      return;
    }
  }
  if (pending.empty()) {
    receiveAll(state, std::move(messages));
    connection->respond(http::status::accepted, "", headers);
    if (state->stateless) endSession(state);
    return;
  }
  auto stream = std::make_shared<ReplyStream>();
  stream->number = nextStream++;
  stream->json = !sse;
  stream->batch = batch;
  stream->withIds = !state->stateless;
  stream->pending = pending;
  stream->standing = state->stateless && messages.size() == 1 &&
                     std::holds_alternative<mcp::Request>(messages.front()) &&
                     std::get<mcp::Request>(messages.front()).method == "subscriptions/listen";
  state->streams.emplace(stream->number, stream);
  for (const auto& key : pending) state->byRequest.emplace(key, stream);
  if (sse && state->stateless) {
    stream->deferred = true;
    connection->awaitReply();
  } else if (sse) {
    connection->beginSse(headers);
  } else {
    connection->awaitReply();
  }
  attach(state, stream, connection, 0);
  limitStreams(*state);
  // From 2025-11-25 an SSE reply starts with an event that has only an id, so that a client
  // whose connection breaks before the first message can still resume.
  if (sse && stream->withIds && version >= "2025-11-25") {
    connection->pushEvent("id: " + std::to_string(stream->number) + "-0\ndata: \n\n");
  }
  receiveAll(state, std::move(messages));
}

void HttpFront::Impl::handleStateless(const std::shared_ptr<HttpConnection>& connection,
                                      const http::request<http::string_body>& request,
                                      mcp::Message message, const RouteDecision& route) {
  const Json json = mcp::toJson(message);
  const auto* call = std::get_if<mcp::Request>(&message);
  const Json id = call != nullptr ? call->id : Json();
  // Checked in this order: what the body lacks, how the headers disagree with it, then
  // whether kaja speaks the version both name.
  if (call != nullptr) {
    if (auto problem = http_checks::requestMetaProblem(json)) {
      connection->respond(http::status::bad_request,
                          errorBody(mcp::rpc_error::kInvalidParams, *problem, Json(), id));
      return;
    }
  }
  http_checks::StandardHeaders standard{header(request, "MCP-Protocol-Version"),
                                        optionalHeader(request, "Mcp-Method"),
                                        optionalHeader(request, "Mcp-Name")};
  if (auto mismatch = http_checks::standardHeaderMismatch(json, standard)) {
    connection->respond(http::status::bad_request,
                        errorBody(kHeaderMismatch, *mismatch, Json(), id));
    return;
  }
  const std::string meta = http_checks::metaProtocolVersion(json);
  if (const std::string& version = meta.empty() ? standard.protocolVersion : meta;
      version != kStateless) {
    connection->respond(http::status::bad_request, unsupportedVersionBody(version, true, id));
    return;
  }
  if (std::holds_alternative<mcp::Response>(message)) {
    connection->respond(http::status::bad_request,
                        errorBody(mcp::rpc_error::kInvalidRequest,
                                  "A 2026-07-28 client does not send responses over HTTP."));
    return;
  }
  if (ownerFull(connection, route)) return;
  auto state = newSession(true, route);
  statelessSessions.emplace(state->key, state);
  if (call != nullptr && state->session) {
    if (auto mismatch = state->session->paramHeaderMismatch(*call, paramHeaders(request))) {
      endSession(state);
      connection->respond(http::status::bad_request,
                          errorBody(kHeaderMismatch, *mismatch, Json(), id));
      return;
    }
  }
  std::vector<mcp::Message> messages;
  messages.push_back(std::move(message));
  const bool sse = http_checks::accepts(header(request, "Accept"), "text/event-stream");
  openReply(connection, state, std::move(messages), sse, false, {}, std::string(kStateless));
}

void HttpFront::Impl::handleGet(const std::shared_ptr<HttpConnection>& connection,
                                const http::request<http::string_body>& request,
                                const RouteDecision& route) {
  const std::string sessionId = header(request, "Mcp-Session-Id");
  if (header(request, "MCP-Protocol-Version") == kStateless || sessionId.empty()) {
    connection->respond(http::status::method_not_allowed,
                        errorBody(-32000,
                                  "A GET stream belongs to a session: send initialize "
                                  "first, then GET with its Mcp-Session-Id."),
                        {{"Allow", "GET, POST, DELETE"}});
    return;
  }
  const auto state = findSession(sessionId, route);
  if (!state) {
    connection->respond(http::status::not_found,
                        errorBody(-32001, "kaja has no session " + mcp::clip(sessionId, 80) +
                                              "; it ended or never existed, so initialize again."));
    return;
  }
  state->lastActive = std::chrono::steady_clock::now();
  auto stream = state->standalone;
  std::uint64_t after = stream->delivered;
  const std::string lastEventId = header(request, "Last-Event-ID");
  if (const auto dash = lastEventId.find('-'); dash != std::string::npos) {
    const std::uint64_t number = std::strtoull(lastEventId.c_str(), nullptr, 10);
    const auto resumed = state->streams.find(number);
    // A JSON reply has no events to resume.
    if (resumed != state->streams.end() && !resumed->second->json) {
      stream = resumed->second;
      after = std::strtoull(lastEventId.c_str() + dash + 1, nullptr, 10);
    }
  }
  if (stream->connection && stream->connection->isOpen()) {
    connection->respond(http::status::conflict,
                        errorBody(-32000,
                                  "This session's stream is already open on another "
                                  "connection; close it before opening another."));
    return;
  }
  connection->beginSse({{"Mcp-Session-Id", state->id}}, true);
  if (stream->standalone && state->protocolVersion >= "2025-11-25") {
    connection->pushEvent("id: " + std::to_string(stream->number) + "-" +
                          std::to_string(stream->nextSeq - 1) + "\ndata: \n\n");
  }
  attach(state, stream, connection, after);
  if (stream->complete) {
    // A finished POST stream: what it missed, then its end.
    connection->setOnBroken(nullptr);
    stream->connection.reset();
    state->streams.erase(stream->number);
    connection->endSse();
  }
}

void HttpFront::Impl::handleDelete(const std::shared_ptr<HttpConnection>& connection,
                                   const http::request<http::string_body>& request,
                                   const RouteDecision& route) {
  const std::string sessionId = header(request, "Mcp-Session-Id");
  if (sessionId.empty()) {
    connection->respond(http::status::bad_request,
                        errorBody(-32000,
                                  "DELETE needs the Mcp-Session-Id of the session to "
                                  "end."));
    return;
  }
  const auto state = findSession(sessionId, route);
  if (!state) {
    connection->respond(http::status::not_found,
                        errorBody(-32001, "kaja has no session " + mcp::clip(sessionId, 80) +
                                              "; it ended or never existed."));
    return;
  }
  endSession(state);
  connection->respond(http::status::no_content, "");
}

}  // namespace kaja::core::server
