#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "core/mcp/http_support.h"
#include "core/mcp/transport.h"
#include "core/runner/launch_plan.h"

namespace kaja::core::mcp {

/// Returns the transport for `plan`: SseTransport when `plan.sse`, else HttpTransport.
/// Nothing is sent until the Client starts it. Every connection it makes goes through
/// the address guard with `options.addressPolicy`. Fails with kInvalidConfig for a URL
/// that is not absolute http(s).
Result<std::shared_ptr<Transport>> makeRemoteTransport(boost::asio::io_context& io,
                                                       const RemotePlan& plan,
                                                       HttpOptions options = {});

}  // namespace kaja::core::mcp
