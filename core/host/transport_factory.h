#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>

#include "core/error.h"
#include "core/manifest/ability.h"
#include "core/mcp/stdio_transport.h"
#include "core/mcp/transport.h"
#include "core/runner/runner_resolver.h"

namespace kaja::core {

/// A started transport; `stdio` is set too when it is a child process (for its pid and
/// stderr tail).
struct OpenedTransport {
  std::shared_ptr<mcp::Transport> transport;
  std::shared_ptr<mcp::StdioTransport> stdio;
};

/// Opens the transport `resolution` describes: spawns a stdio server or prepares a remote
/// connection. `resolution` must be on. `closeGrace` is how long a stdio server gets at each
/// step of closing (stdin closed, then SIGTERM) before the next.
Result<OpenedTransport> openTransport(boost::asio::io_context& io, const Ability& ability,
                                      const Resolution& resolution,
                                      std::chrono::milliseconds closeGrace);

}  // namespace kaja::core
