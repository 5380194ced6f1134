// Runs one of kaja's server fronts with an echo Session, for tests that drive it from outside.
//
//   kaja_front_echo stdio        serves stdin/stdout until stdin ends
//   kaja_front_echo http [ARGS]  serves http://127.0.0.1:<port>/mcp and prints "PORT <n>";
//                                ARGS: --token T, --max-bytes N, --origin O; ends when stdin
//                                ends
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "core/server/http_front.h"
#include "core/server/stdio_front.h"
#include "tests/core/server/echo_session.h"

namespace {

using kaja::core::server::HttpFront;
using kaja::core::server::HttpFrontOptions;
using kaja::core::server::StdioFront;

int serveStdio() {
  boost::asio::io_context io;
  auto log = std::make_shared<kaja::testing::EchoLog>();
  auto front = StdioFront::create(io, 0, 1, kaja::testing::echoFactory(log));
  if (!front) {
    std::fprintf(stderr, "%s\n", front.error().message.c_str());
    return 1;
  }
  bool done = false;
  (*front)->start([&] { done = true; });
  io.run();
  return done ? 0 : 1;
}

int serveHttp(int argc, char** argv) {
  HttpFrontOptions options;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--token") options.bearerToken = value;
    if (flag == "--max-bytes") options.maxMessageBytes = std::stoul(value);
    if (flag == "--origin") options.allowedOrigins.push_back(value);
  }
  boost::asio::io_context io;
  auto log = std::make_shared<kaja::testing::EchoLog>();
  auto front = HttpFront::create(io, kaja::testing::echoFactory(log), options);
  if (!front) {
    std::fprintf(stderr, "%s\n", front.error().message.c_str());
    return 1;
  }
  (*front)->start();
  std::printf("PORT %u\n", static_cast<unsigned>((*front)->port()));
  std::fflush(stdout);
  // The parent ends this program by closing its stdin.
  boost::asio::posix::stream_descriptor input(io, ::dup(0));
  char byte = 0;
  std::function<void()> watch = [&] {
    input.async_read_some(boost::asio::buffer(&byte, 1),
                          [&](const boost::system::error_code& ec, std::size_t) {
                            if (ec) {
                              (*front)->stop();
                              io.stop();
                              return;
                            }
                            watch();
                          });
  };
  watch();
  io.run();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "stdio") return serveStdio();
  if (mode == "http") return serveHttp(argc, argv);
  std::fprintf(stderr, "usage: kaja_front_echo stdio | http [--token T] [--max-bytes N]\n");
  return 2;
}
