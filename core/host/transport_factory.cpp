#include "core/host/transport_factory.h"

#include "core/mcp/remote_transport.h"

namespace kaja::core {

Result<OpenedTransport> openTransport(boost::asio::io_context& io, const Ability& ability,
                                      const Resolution& resolution,
                                      std::chrono::milliseconds closeGrace) {
  if (resolution.launch) {
    mcp::StdioOptions options;
    options.serverName = ability.name;
    options.closeGrace = closeGrace;
    auto stdio = mcp::StdioTransport::spawn(io, *resolution.launch, options);
    if (!stdio) return std::unexpected(stdio.error());
    return OpenedTransport{*stdio, *stdio};
  }
  if (resolution.remote) {
    mcp::HttpOptions options;
    options.serverName = ability.name;
    // Every ability here comes from a manifest the user (or kaja's own marketplace) wrote,
    // so local servers are allowed; link-local and metadata addresses never are.
    options.addressPolicy.allowPrivate = true;
    options.via = resolution.remote->via;
    options.credentialsHint = resolution.remote->credentialsHint;
    auto remote = mcp::makeRemoteTransport(io, *resolution.remote, options);
    if (!remote) return std::unexpected(remote.error());
    return OpenedTransport{*remote, nullptr};
  }
  return fail(ErrorCode::kInternal, "the ability has no launch plan or URL", ability.name);
}

}  // namespace kaja::core
