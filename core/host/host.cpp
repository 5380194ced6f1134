#include "core/host/host.h"

#include "core/host/async_host.h"
#include "core/util/loop_thread.h"

namespace kaja::core {

struct Host::Impl {
  explicit Impl(HostOptions options) : host(loop.io(), std::move(options)) {}
  // The loop stops before the connections go, so no handler runs while they are destroyed.
  ~Impl() { loop.stop(); }

  template <class T>
  T onLoop(std::function<void(std::function<void(T)>)> job) {
    return loop.call<T>(std::move(job));
  }

  LoopThread loop;
  AsyncHost host;
};

Host::Host(HostOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Host::~Host() { closeAll(); }

std::vector<ConnectReport> Host::activate(std::vector<Activation> wanted) {
  return impl_->onLoop<std::vector<ConnectReport>>(
      [this, wanted = std::move(wanted)](std::function<void(std::vector<ConnectReport>)> done) {
        impl_->host.activate(wanted, std::move(done));
      });
}

std::vector<std::string> Host::connected() {
  return impl_->onLoop<std::vector<std::string>>(
      [this](auto done) { done(impl_->host.connected()); });
}

Result<std::vector<mcp::Tool>> Host::tools(const std::string& ability) {
  return impl_->onLoop<Result<std::vector<mcp::Tool>>>(
      [this, ability](auto done) { done(impl_->host.tools(ability)); });
}

Result<mcp::ToolResult> Host::callTool(const std::string& ability, const std::string& tool,
                                       const mcp::Json& arguments,
                                       std::chrono::milliseconds timeout) {
  return impl_->onLoop<Result<mcp::ToolResult>>(
      [this, ability, tool, arguments, timeout](std::function<void(Result<mcp::ToolResult>)> done) {
        HostCallOptions call;
        call.timeout = timeout;
        impl_->host.callTool(ability, tool, arguments, std::move(call), std::move(done));
      });
}

std::optional<pid_t> Host::serverPid(const std::string& ability) {
  return impl_->onLoop<std::optional<pid_t>>(
      [this, ability](auto done) { done(impl_->host.serverPid(ability)); });
}

void Host::closeAll() {
  impl_->onLoop<bool>([this](const std::function<void(bool)>& done) {
    impl_->host.closeAll([done] { done(true); });
  });
}

}  // namespace kaja::core
