#include "core/mcp/remote_transport.h"

#include "core/mcp/http_transport.h"
#include "core/mcp/sse_transport.h"

namespace kaja::core::mcp {

Result<std::shared_ptr<Transport>> makeRemoteTransport(boost::asio::io_context& io,
                                                       const RemotePlan& plan,
                                                       HttpOptions options) {
  if (plan.sse) {
    auto transport = SseTransport::create(io, plan, std::move(options));
    if (!transport) return std::unexpected(transport.error());
    return std::shared_ptr<Transport>(std::move(*transport));
  }
  auto transport = HttpTransport::create(io, plan, std::move(options));
  if (!transport) return std::unexpected(transport.error());
  return std::shared_ptr<Transport>(std::move(*transport));
}

}  // namespace kaja::core::mcp
