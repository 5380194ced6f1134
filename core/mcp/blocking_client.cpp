#include "core/mcp/blocking_client.h"

namespace kaja::core::mcp {

namespace {

Error notConnected() {
  return Error{ErrorCode::kConnect, "Not connected to a server; connect first.", {}, {}};
}

}  // namespace

BlockingClient::BlockingClient(ClientOptions options) : options_(std::move(options)) {}

BlockingClient::~BlockingClient() {
  close();
  loop_.stop();
}

template <class T>
T BlockingClient::runOnLoop(std::function<void(std::function<void(T)>)> work) {
  return loop_.call<T>(std::move(work));
}

Result<ServerInfo> BlockingClient::connect(const LaunchPlan& plan, StdioOptions stdio) {
  close();
  return runOnLoop<Result<ServerInfo>>(
      [this, &plan, stdio = std::move(stdio)](std::function<void(Result<ServerInfo>)> done) {
        auto transport = StdioTransport::spawn(loop_.io(), plan, stdio);
        if (!transport) {
          done(std::unexpected(transport.error()));
          return;
        }
        client_ = Client::create(loop_.io(), std::move(*transport), options_);
        if (rootsProvider_) client_->setRootsProvider(rootsProvider_);
        if (warningHandler_) {
          client_->setWarningHandler(warningHandler_);
          // A server's log messages are capped like its warnings, so a flood is not echoed.
          auto logged = std::make_shared<std::size_t>(0);
          client_->setLogHandler([handler = warningHandler_, logged,
                                  limit = options_.maxWarnings](const LogMessage& log) {
            if (++*logged > limit) {
              if (*logged == limit + 1) handler("further log messages are not shown");
              return;
            }
            handler("[" + clip(log.level, 20) + "] " +
                    (log.data.is_string() ? log.data.get<std::string>() : log.data.dump()));
          });
        }
        client_->connect(std::move(done));
      });
}

Result<std::vector<Tool>> BlockingClient::listTools() {
  return runOnLoop<Result<std::vector<Tool>>>(
      [this](std::function<void(Result<std::vector<Tool>>)> done) {
        if (!client_) {
          done(std::unexpected(notConnected()));
          return;
        }
        client_->listTools(std::move(done));
      });
}

Result<ToolResult> BlockingClient::callTool(const std::string& name, const Json& arguments,
                                            std::chrono::milliseconds timeout,
                                            std::function<void(const Progress&)> onProgress) {
  return runOnLoop<Result<ToolResult>>(
      [this, &name, &arguments, timeout,
       onProgress = std::move(onProgress)](std::function<void(Result<ToolResult>)> done) mutable {
        if (!client_) {
          done(std::unexpected(notConnected()));
          return;
        }
        client_->callTool(name, arguments, CallOptions{timeout, std::move(onProgress)},
                          std::move(done));
      });
}

Result<void> BlockingClient::ping() {
  return runOnLoop<Result<void>>([this](std::function<void(Result<void>)> done) {
    if (!client_) {
      done(std::unexpected(notConnected()));
      return;
    }
    client_->ping(std::move(done));
  });
}

void BlockingClient::notifyRootsChanged() {
  runOnLoop<bool>([this](const std::function<void(bool)>& done) {
    if (client_) client_->notifyRootsChanged();
    done(true);
  });
}

bool BlockingClient::isConnected() {
  return runOnLoop<bool>(
      [this](const std::function<void(bool)>& done) { done(client_ && client_->isReady()); });
}

void BlockingClient::close() {
  runOnLoop<bool>([this](const std::function<void(bool)>& done) {
    if (!client_) {
      done(true);
      return;
    }
    auto client = std::move(client_);
    client_.reset();
    // Keep the client alive until its transport has ended the server.
    client->close([client, done] { done(true); });
  });
}

}  // namespace kaja::core::mcp
