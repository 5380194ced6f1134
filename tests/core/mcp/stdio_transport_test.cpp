// The stdio framing on its own, with small Unix programs as the "server".
#include "core/mcp/stdio_transport.h"

#include <gtest/gtest.h>

#include "tests/core/mcp/test_servers.h"

namespace kaja::core::mcp {
namespace {

using namespace std::chrono_literals;
using kaja::testing::minimalPlan;
using kaja::testing::runUntil;

struct Recorder {
  std::vector<Message> messages;
  std::vector<std::string> warnings;
  std::optional<Error> closed;

  TransportHandlers handlers() {
    return {[this](Message message) { messages.push_back(std::move(message)); },
            [this](const std::string& warning) { warnings.push_back(warning); },
            [this](const Error& error) { closed = error; }};
  }
};

StdioOptions named(const std::string& name) {
  StdioOptions options;
  options.serverName = name;
  options.closeGrace = 200ms;
  return options;
}

TEST(StdioTransportTest, LargeLinesUnderTheLimitPassBothWays) {
  boost::asio::io_context io;
  // cat echoes every line back: what goes out must come back as the same message.
  auto transport = StdioTransport::spawn(io, minimalPlan({"/bin/cat"}), named("cat"));
  ASSERT_TRUE(transport);
  Recorder recorder;
  (*transport)->start(recorder.handlers());
  const std::string big(3 * 1024 * 1024, 'k');
  (*transport)->send(Request{Json(1), "tools/call", Json{{"blob", big}}});
  (*transport)->send(Notification{"notifications/initialized", Json()});
  ASSERT_TRUE(runUntil(io, [&] { return recorder.messages.size() == 2; }));
  EXPECT_EQ(std::get<Request>(recorder.messages[0]).params["blob"], big);
  EXPECT_EQ(std::get<Notification>(recorder.messages[1]).method, "notifications/initialized");
  (*transport)->close();
  ASSERT_TRUE(runUntil(io, [&] { return recorder.closed.has_value(); }));
  EXPECT_EQ(recorder.closed->message, "server 'cat' was closed.");
  EXPECT_FALSE((*transport)->isOpen());
}

TEST(StdioTransportTest, LastMessageWithoutNewlineIsDeliveredThenTheExit) {
  boost::asio::io_context io;
  auto transport = StdioTransport::spawn(
      io,
      minimalPlan({"/bin/sh", "-c",
                   R"(printf 'oops\n' >&2; printf '{"jsonrpc":"2.0","method":"bye"}'; exit 2)"}),
      named("shell"));
  ASSERT_TRUE(transport);
  Recorder recorder;
  (*transport)->start(recorder.handlers());
  ASSERT_TRUE(runUntil(io, [&] { return recorder.closed.has_value(); }));
  ASSERT_EQ(recorder.messages.size(), 1u);
  EXPECT_EQ(std::get<Notification>(recorder.messages[0]).method, "bye");
  EXPECT_EQ(recorder.closed->code, ErrorCode::kConnect);
  EXPECT_EQ(recorder.closed->message,
            "server 'shell' exited with status 2 (its last stderr line: \"oops\").");
  EXPECT_EQ(recorder.closed->context, "shell");
}

TEST(StdioTransportTest, ConfiguredLineLimitIsEnforced) {
  boost::asio::io_context io;
  StdioOptions options = named("chatty");
  options.maxLineBytes = 1000;
  auto transport = StdioTransport::spawn(
      io, minimalPlan({"/bin/sh", "-c", "head -c 5000 /dev/zero | tr '\\0' x; sleep 30"}), options);
  ASSERT_TRUE(transport);
  Recorder recorder;
  (*transport)->start(recorder.handlers());
  ASSERT_TRUE(runUntil(
      io, [&] { return recorder.closed.has_value(); }, 5s));
  EXPECT_EQ(recorder.closed->code, ErrorCode::kProtocol);
  EXPECT_EQ(recorder.closed->message,
            "server 'chatty' wrote a line longer than 1000 bytes without a newline, so kaja "
            "stopped it.");
  EXPECT_TRUE(kaja::testing::zombieChildren().empty());
}

TEST(StdioTransportTest, CloseBeforeStartStillEndsTheChild) {
  boost::asio::io_context io;
  auto transport = StdioTransport::spawn(io, minimalPlan({"/bin/sleep", "30"}), named("sleepy"));
  ASSERT_TRUE(transport);
  const pid_t pid = (*transport)->pid();
  (*transport)->close();
  transport->reset();
  io.run_for(1s);
  EXPECT_FALSE(kaja::testing::isRunning(pid));
  EXPECT_TRUE(kaja::testing::zombieChildren().empty());
}

}  // namespace
}  // namespace kaja::core::mcp
