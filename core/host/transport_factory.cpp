#include "core/host/transport_factory.h"

namespace kaja::core {

Result<OpenedTransport> openTransport(boost::asio::io_context& io, const Ability& ability,
                                      const Resolution& resolution) {
  if (resolution.launch) {
    mcp::StdioOptions options;
    options.serverName = ability.name;
    auto stdio = mcp::StdioTransport::spawn(io, *resolution.launch, options);
    if (!stdio) return std::unexpected(stdio.error());
    return OpenedTransport{*stdio, *stdio};
  }
  if (resolution.remote) {
    return fail(ErrorCode::kConnect,
                "remote abilities (http, sse) cannot be connected by this build yet", ability.name);
  }
  return fail(ErrorCode::kInternal, "the ability has no launch plan or URL", ability.name);
}

}  // namespace kaja::core
