#include "core/mcp/client.h"

#include <algorithm>
#include <boost/asio/post.hpp>

namespace kaja::core::mcp {
namespace asio = boost::asio;

namespace {

// A server whose cursors never end would otherwise page forever.
constexpr int kMaxToolPages = 1000;
// The least time between two re-listings of a server's tools after list_changed.
constexpr std::chrono::milliseconds kMinToolRefreshGap{500};

std::string formatDuration(std::chrono::milliseconds duration) {
  if (duration.count() % 1000 == 0) return std::to_string(duration.count() / 1000) + " s";
  return std::to_string(duration.count()) + " ms";
}

std::string formatBytes(std::size_t bytes) {
  constexpr std::size_t kMegabyte = std::size_t{1024} * 1024;
  if (bytes >= kMegabyte) return std::to_string((bytes + kMegabyte / 2) / kMegabyte) + " MB";
  if (bytes >= 1024) return std::to_string((bytes + 512) / 1024) + " KB";
  return std::to_string(bytes) + " bytes";
}

/// Returns "" while a listing of tools is within `options`' bounds, else the end of a sentence
/// that says which bound it passed.
std::string listingTooLarge(const ClientOptions& options, std::size_t pageBytes,
                            std::size_t totalBytes, int pages) {
  const bool page = pageBytes > options.maxListPageBytes;
  if (!page && totalBytes <= options.maxListingBytes) return "";
  return formatBytes(page ? pageBytes : totalBytes) + " of tools" +
         (page ? " in one page" : " in " + std::to_string(pages) + " pages") + ", more than the " +
         formatBytes(page ? options.maxListPageBytes : options.maxListingBytes) +
         " kaja reads; the server may be broken or hostile.";
}

std::string stringOr(const Json& object, const char* key, std::string fallback = {}) {
  if (!object.is_object()) return fallback;
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace

std::shared_ptr<Client> Client::create(asio::io_context& io, std::shared_ptr<Transport> transport,
                                       ClientOptions options) {
  return std::shared_ptr<Client>(new Client(io, std::move(transport), std::move(options)));
}

Client::Client(asio::io_context& io, std::shared_ptr<Transport> transport, ClientOptions options)
    : io_(io),
      transport_(std::move(transport)),
      options_(std::move(options)),
      pending_(io),
      connectTimer_(io),
      refreshTimer_(io),
      listenAckTimer_(io),
      listenTimer_(io) {
  // The ledger runs this only while it, and so this client, lives.
  pending_.setExpiredHandler(
      [this](std::int64_t id, const Pending& pending) { onTimeout(id, pending); });
}

Client::~Client() {
  // The transport outlives us while its work is pending; its handlers hold only weak
  // pointers here, so closing is enough to end the server.
  if (transport_ && transport_->isOpen()) transport_->close();
}

void Client::setRootsProvider(std::function<std::vector<Root>()> provider) {
  rootsProvider_ = std::move(provider);
}
void Client::setSamplingHandler(RequestHandler handler) { samplingHandler_ = std::move(handler); }
void Client::setElicitationHandler(RequestHandler handler) {
  elicitationHandler_ = std::move(handler);
}
void Client::setNotificationHandler(std::function<void(const Notification&)> handler) {
  notificationHandler_ = std::move(handler);
}
void Client::setLogHandler(std::function<void(const LogMessage&)> handler) {
  logHandler_ = std::move(handler);
}
void Client::setWarningHandler(std::function<void(const std::string&)> handler) {
  warningHandler_ = std::move(handler);
}
void Client::setToolsChangedHandler(std::function<void(const std::vector<Tool>&)> handler) {
  toolsChangedHandler_ = std::move(handler);
}
void Client::setClosedHandler(std::function<void(const Error&)> handler) {
  closedHandler_ = std::move(handler);
}

Error Client::makeError(ErrorCode code, std::string message) const {
  return Error{code, std::move(message), transport_->name(), {}};
}

Json Client::clientCapabilities() const {
  Json capabilities = Json::object();
  if (rootsProvider_) capabilities["roots"] = {{"listChanged", true}};
  if (samplingHandler_) capabilities["sampling"] = Json::object();
  if (elicitationHandler_) capabilities["elicitation"] = Json::object();
  return capabilities;
}

void Client::connect(std::function<void(Result<ServerInfo>)> done) {
  if (state_ != State::kIdle) {
    asio::post(io_, [done = std::move(done),
                     error = makeError(ErrorCode::kInternal, "connect() was called twice.")] {
      done(std::unexpected(error));
    });
    return;
  }
  state_ = State::kConnecting;
  std::weak_ptr<Client> weak = weak_from_this();
  transport_->start(TransportHandlers{[weak](Message message) {
                                        if (auto self = weak.lock())
                                          self->onMessage(std::move(message));
                                      },
                                      [weak](const std::string& warning) {
                                        if (auto self = weak.lock()) self->warn(warning);
                                      },
                                      [weak](const Error& error) {
                                        if (auto self = weak.lock()) self->onTransportClosed(error);
                                      },
                                      [weak](const Json& id, const Error& error) {
                                        if (auto self = weak.lock())
                                          self->onRequestFailed(id, error);
                                      }});

  // One callback reaches `done`: whichever of the reply, the error and the timer is first.
  auto once = std::make_shared<std::function<void(Result<ServerInfo>)>>(std::move(done));
  connectTimer_.expires_after(options_.connectTimeout);
  connectTimer_.async_wait([weak, once](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || !*once) return;
    auto callback = std::exchange(*once, nullptr);
    Error error = self->makeError(ErrorCode::kTimeout,
                                  self->describe() + " did not finish connecting within " +
                                      formatDuration(self->options_.connectTimeout) + ".");
    error.detail = self->transport_->diagnostics();
    callback(std::unexpected(std::move(error)));
    self->transport_->close();
  });

  if (options_.discover) {
    sendDiscover(once, 0);
  } else {
    sendInitialize(once);
  }
}

void Client::sendInitialize(const ConnectDone& once) {
  std::weak_ptr<Client> weak = weak_from_this();
  Json params = {
      {"protocolVersion", std::string(kLatestProtocolVersion)},
      {"capabilities", clientCapabilities()},
      {"clientInfo", {{"name", options_.clientName}, {"version", options_.clientVersion}}}};
  // The spec forbids cancelling initialize, so it has no timer of its own.
  startRequest("initialize", "initialize", std::move(params), std::chrono::milliseconds(-1),
               [weak, once](Result<Json> result) {
                 auto self = weak.lock();
                 if (!self || !*once) return;
                 self->onInitialized(std::move(result), std::exchange(*once, nullptr));
               },
               {});
}

void Client::onInitialized(Result<Json> result,
                           const std::function<void(Result<ServerInfo>)>& done) {
  connectTimer_.cancel();
  if (!result) {
    done(std::unexpected(result.error()));
    transport_->close();
    return;
  }
  ServerInfo info;
  info.raw = *result;
  info.protocolVersion = stringOr(*result, "protocolVersion");
  if (!isSupportedProtocolVersion(info.protocolVersion)) {
    done(std::unexpected(
        makeError(ErrorCode::kProtocol,
                  describe() + " speaks MCP version \"" + clip(info.protocolVersion, 40) +
                      "\", which kaja does not support (it speaks 2024-11-05 to 2025-11-25).")));
    transport_->close();
    return;
  }
  if (result->is_object()) {
    if (const auto caps = result->find("capabilities"); caps != result->end() && caps->is_object())
      info.capabilities = *caps;
    if (const auto server = result->find("serverInfo"); server != result->end()) {
      info.name = stringOr(*server, "name");
      info.version = stringOr(*server, "version");
    }
    info.instructions = stringOr(*result, "instructions");
  }
  serverInfo_ = std::move(info);
  state_ = State::kReady;
  transport_->send(Notification{"notifications/initialized", Json()});
  done(serverInfo_);
}

std::int64_t Client::request(const std::string& method, Json params,
                             std::chrono::milliseconds timeout, ResultCallback done,
                             std::function<void(const Progress&)> onProgress) {
  if (state_ != State::kReady) {
    const std::int64_t id = pending_.nextId();
    postFailure(std::move(done),
                closedError_ ? *closedError_
                             : makeError(ErrorCode::kConnect, describe() + " is not connected; " +
                                                                  method + " was not sent."));
    return id;
  }
  // At 2026-07-28 these may ask for input (input_required) as tools/call may.
  if (stateless_ && (method == "prompts/get" || method == "resources/read")) {
    CallOptions options;
    options.timeout = timeout;
    options.onProgress = std::move(onProgress);
    return requestWithInputs(method, method, std::move(params), std::move(options),
                             std::move(done));
  }
  // 2026-07-28 removed these; the listen stream and each request's _meta do their work.
  if (stateless_ && (method == "resources/subscribe" || method == "resources/unsubscribe")) {
    return subscribe(method, params, std::move(done));
  }
  if (stateless_ && method == "logging/setLevel") return setLogLevel(params, std::move(done));
  if (stateless_) {
    params = withMeta(std::move(params));
  } else if (params.is_object() && params.contains("_meta") && params["_meta"].is_object()) {
    // A level named for one request means nothing before 2026-07-28.
    params["_meta"].erase(kMetaLogLevel);
    if (params["_meta"].empty()) params.erase("_meta");
  }
  return startRequest(method, method, std::move(params), timeout, std::move(done),
                      std::move(onProgress));
}

std::int64_t Client::startRequest(const std::string& method, std::string label, Json params,
                                  std::chrono::milliseconds timeout, ResultCallback done,
                                  std::function<void(const Progress&)> onProgress,
                                  bool resetTimeoutOnProgress, std::string toolName,
                                  std::int64_t id) {
  // A call of several rounds names its first request before sending it (requestWithInputs).
  if (id == 0) id = pending_.nextId();
  if (!transport_->isOpen()) {
    postFailure(std::move(done), closedError_
                                     ? *closedError_
                                     : makeError(ErrorCode::kConnect, describe() + " is closed."));
    return id;
  }
  if (onProgress) {
    if (!params.is_object()) params = Json::object();
    params["_meta"]["progressToken"] = id;
  }
  const auto requestTimeout = timeout.count() == 0 ? options_.requestTimeout : timeout;
  auto latest = std::chrono::steady_clock::time_point::max();
  if (resetTimeoutOnProgress && options_.progressLimit.count() > 0) {
    latest = std::chrono::steady_clock::now() + std::max(options_.progressLimit, requestTimeout);
  }
  pending_.add(id,
               Pending{.method = method,
                       .label = std::move(label),
                       .toolName = std::move(toolName),
                       .done = std::move(done),
                       .onProgress = std::move(onProgress),
                       .timeout = requestTimeout,
                       .resetTimeoutOnProgress = resetTimeoutOnProgress,
                       .latest = latest},
               requestTimeout);
  transport_->send(Request{id, method, std::move(params)});
  return id;
}

std::string Client::Pending::describe() const {
  if (!label.empty()) return label;
  return toolName.empty() ? method : method + " '" + toolName + "'";
}

void Client::postFailure(ResultCallback done, Error error) {
  if (!done) return;
  asio::post(io_,
             [done = std::move(done), error = std::move(error)] { done(std::unexpected(error)); });
}

void Client::onTimeout(std::int64_t id, const Pending& pending) {
  const std::string waited =
      formatDuration(pending.budget.count() > 0 ? pending.budget : pending.timeout);
  notify("notifications/cancelled",
         {{"requestId", id}, {"reason", "kaja stopped waiting after " + waited}});
  Error error =
      makeError(ErrorCode::kTimeout, describe() + " did not answer " + pending.describe() +
                                         " within " + waited + "; kaja cancelled it.");
  error.detail = transport_->diagnostics();
  pending.done(std::unexpected(std::move(error)));
}

bool Client::cancel(std::int64_t requestId, const std::string& reason) {
  if (const auto call = inputCalls_.find(requestId); call != inputCalls_.end()) {
    // At 2026-07-28 each retry after input_required is a request of its own ("The JSON-RPC id
    // MUST be different between the initial request and the retry, as they are independent
    // requests", basic/patterns/mrtr), and a cancellation may name only a request that is
    // "believed to still be in-progress" (basic/patterns/cancellation). So the round the server
    // has now is the one cancelled; while kaja gathers the inputs, the server has none.
    if (call->second.inFlight == 0) {
      InputCall ended = std::move(call->second);
      inputCalls_.erase(call);
      postFailure(std::move(ended.done),
                  makeError(ErrorCode::kRefused, ended.label + " was cancelled (" + reason + ")."));
      return true;
    }
    requestId = call->second.inFlight;
  }
  const Pending* found = pending_.find(requestId);
  if (found == nullptr || found->method == "initialize") return false;
  Pending pending = std::move(*pending_.giveUp(requestId));
  notify("notifications/cancelled", {{"requestId", requestId}, {"reason", reason}});
  postFailure(
      std::move(pending.done),
      makeError(ErrorCode::kRefused, pending.describe() + " was cancelled (" + reason + ")."));
  return true;
}

void Client::notify(const std::string& method, Json params) {
  if (state_ == State::kReady || state_ == State::kConnecting) {
    transport_->send(Notification{method, std::move(params)});
  }
}

void Client::notifyRootsChanged() { notify("notifications/roots/list_changed"); }

void Client::ping(std::function<void(Result<void>)> done) {
  request("ping", Json::object(), std::chrono::milliseconds(0),
          [done = std::move(done)](Result<Json> result) {
            if (!result) {
              done(std::unexpected(result.error()));
            } else {
              done({});
            }
          });
}

std::int64_t Client::callTool(const std::string& name, Json arguments, CallOptions options,
                              std::function<void(Result<ToolResult>)> done) {
  Json params = {{"name", name}};
  if (!arguments.is_null()) params["arguments"] = std::move(arguments);
  if (stateless_ && options.capabilities.is_object()) {
    params["_meta"][kMetaClientCapabilities] = options.capabilities;
  }
  if (stateless_ && options.logLevel) {
    params["_meta"][kMetaLogLevel] =
        options.logLevel->empty() ? Json(nullptr) : Json(*options.logLevel);
  }
  auto onResult = [weak = weak_from_this(), name, done = std::move(done)](Result<Json> result) {
    if (!result) {
      done(std::unexpected(result.error()));
      return;
    }
    auto toolResult = ToolResult::fromJson(std::move(*result));
    if (!toolResult) {
      auto self = weak.lock();
      Error error = toolResult.error();
      if (self) {
        // "The result is malformed: content[0].text is a number, …" reads better inline.
        std::string why = error.message;
        if (why.starts_with(kMalformedResult)) why.erase(0, kMalformedResult.size());
        error = self->makeError(ErrorCode::kProtocol, self->describe() + " answered tools/call '" +
                                                          clip(name, 60) + "' with a result kaja " +
                                                          "cannot use: " + why);
      }
      done(std::unexpected(std::move(error)));
      return;
    }
    done(std::move(*toolResult));
  };
  if (state_ != State::kReady) {
    return request("tools/call", std::move(params), options.timeout, std::move(onResult));
  }
  if (stateless_) {
    return requestWithInputs("tools/call", "tools/call '" + name + "'", std::move(params),
                             std::move(options), std::move(onResult));
  }
  // The label "tools/call 'name'" is built from `name` only if an error needs it.
  return startRequest("tools/call", {}, std::move(params), options.timeout, std::move(onResult),
                      std::move(options.onProgress), options.resetTimeoutOnProgress, name);
}

void Client::listTools(std::function<void(Result<std::vector<Tool>>)> done) {
  if (state_ != State::kReady) {
    request(
        "tools/list", Json::object(), std::chrono::milliseconds(0),
        [done = std::move(done)](Result<Json> result) { done(std::unexpected(result.error())); });
    return;
  }
  listPage(std::nullopt, std::make_shared<std::vector<Tool>>(), 0, std::move(done));
}

void Client::listPage(std::optional<std::string> cursor,
                      const std::shared_ptr<std::vector<Tool>>& tools, int pages,
                      std::function<void(Result<std::vector<Tool>>)> done, std::size_t bytesSoFar) {
  Json params = Json::object();
  if (cursor) params["cursor"] = *cursor;
  request(
      "tools/list", std::move(params), std::chrono::milliseconds(0),
      [weak = weak_from_this(), tools, pages, cursor, bytesSoFar,
       done = std::move(done)](Result<Json> result) mutable {
        auto self = weak.lock();
        if (!self) return;
        if (!result) {
          done(std::unexpected(result.error()));
          return;
        }
        const std::size_t total = bytesSoFar + self->lastResponseBytes_;
        if (const std::string tooLarge =
                listingTooLarge(self->options_, self->lastResponseBytes_, total, pages + 1);
            !tooLarge.empty()) {
          done(std::unexpected(
              self->makeError(ErrorCode::kProtocol, self->describe() + " listed " + tooLarge)));
          return;
        }
        // The listing's first page says for how long it may be reused (2026-07-28).
        if (pages == 0) {
          const auto ttl = result->is_object() ? result->find("ttlMs") : result->end();
          self->toolsTtl_.reset();
          if (ttl != result->end() && ttl->is_number_unsigned()) {
            self->toolsTtl_ = std::chrono::milliseconds(
                std::min<std::uint64_t>(ttl->get<std::uint64_t>(), 1ULL << 40));
          }
        }
        const auto list = result->is_object() ? result->find("tools") : result->end();
        if (!result->is_object() || list == result->end() || !list->is_array()) {
          done(std::unexpected(
              self->makeError(ErrorCode::kProtocol,
                              self->describe() + " answered tools/list without a tools array.")));
          return;
        }
        for (const auto& item : *list) {
          auto tool = Tool::fromJson(item);
          if (!tool) {
            done(std::unexpected(self->makeError(ErrorCode::kProtocol,
                                                 self->describe() + ": " + tool.error().message)));
            return;
          }
          tools->push_back(std::move(*tool));
        }
        const auto cursorField = result->find("nextCursor");
        if (cursorField != result->end() && !cursorField->is_string() && !cursorField->is_null()) {
          done(std::unexpected(self->makeError(
              ErrorCode::kProtocol, self->describe() +
                                        " answered tools/list with a nextCursor that is a " +
                                        cursorField->type_name() + ", not a string.")));
          return;
        }
        const std::string next = stringOr(*result, "nextCursor");
        if (!next.empty()) {
          if (pages + 1 >= kMaxToolPages || (cursor && *cursor == next)) {
            done(std::unexpected(self->makeError(
                ErrorCode::kProtocol, self->describe() +
                                          " kept paging tools/list without end (cursor \"" +
                                          clip(next, 40) + "\").")));
            return;
          }
          self->listPage(next, tools, pages + 1, std::move(done), total);
          return;
        }
        self->dropDuplicateTools(*tools);
        if (self->stateless_) self->applyToolHeaders(*tools);
        self->tools_ = *tools;
        self->toolsListed_ = true;
        if (self->stateless_) self->listen();
        done(std::move(*tools));
      });
}

void Client::dropDuplicateTools(std::vector<Tool>& tools) {
  // Names are unique in a listing. When a server lists one twice, kaja cannot tell which
  // schema and annotations are meant, and a client may refuse the whole list: both go.
  std::map<std::string, int> seen;
  for (const auto& tool : tools) ++seen[tool.name];
  for (const auto& [name, count] : seen) {
    if (count > 1) {
      warn(describe() + " lists tool '" + clip(name, 60) + "' " + std::to_string(count) +
           " times; kaja offers none of them.");
    }
  }
  std::erase_if(tools, [&](const Tool& tool) { return seen[tool.name] > 1; });
}

void Client::refreshTools() {
  if (refreshing_) {
    refreshAgain_ = true;
    return;
  }
  if (refreshTimerArmed_) return;
  // A server that announces changes without pause would otherwise be re-listed back to
  // back for as long as it keeps on; one listing per kMinToolRefreshGap is plenty.
  const auto wait = lastRefresh_ + kMinToolRefreshGap - Clock::now();
  if (wait > Clock::duration::zero()) {
    refreshTimerArmed_ = true;
    refreshTimer_.expires_after(wait);
    refreshTimer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (ec || !self) return;
      self->refreshTimerArmed_ = false;
      if (self->isReady()) self->refreshTools();
    });
    return;
  }
  lastRefresh_ = Clock::now();
  refreshing_ = true;
  listTools([weak = weak_from_this()](Result<std::vector<Tool>> result) {
    auto self = weak.lock();
    if (!self) return;
    self->refreshing_ = false;
    if (!result) {
      self->warn(self->describe() +
                 " changed its tools, but listing them failed: " + result.error().message);
    } else if (self->toolsChangedHandler_) {
      self->toolsChangedHandler_(*result);
    }
    if (std::exchange(self->refreshAgain_, false) && self->isReady()) self->refreshTools();
  });
}

void Client::close(std::function<void()> done) {
  if (state_ == State::kIdle) {
    // Never started, so the transport has no handlers to report its end to us.
    state_ = State::kClosed;
    transport_->close();
  }
  if (state_ == State::kClosed && !transport_->isOpen()) {
    if (done) asio::post(io_, std::move(done));
    return;
  }
  if (done) closeWaiters_.push_back(std::move(done));
  connectTimer_.cancel();
  transport_->close();
}

void Client::onTransportClosed(const Error& error) {
  state_ = State::kClosed;
  closedError_ = error;
  connectTimer_.cancel();
  refreshTimer_.cancel();
  listenTimer_.cancel();
  listenAckTimer_.cancel();
  auto pending = pending_.takeAll();
  for (auto& [id, request] : pending) {
    Error failure = error;
    if (failure.code != ErrorCode::kTimeout && !failure.message.empty() &&
        request.method != "initialize") {
      failure.message = request.describe() + " failed: " + failure.message;
    }
    request.done(std::unexpected(std::move(failure)));
  }
  // A change of the listen filter that had not gone out yet.
  failListenWaiters(error);
  if (closedHandler_) closedHandler_(error);
  for (auto& waiter : std::exchange(closeWaiters_, {})) waiter();
}

}  // namespace kaja::core::mcp
