// The stdio front on real pipes, with an echo Session behind it.
#include "core/server/stdio_front.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <chrono>

#include "tests/core/mcp/test_servers.h"
#include "tests/core/server/echo_front_process.h"
#include "tests/core/server/echo_session.h"
#include "tests/support/run_command.h"

namespace kaja::core::server {
namespace {

using kaja::testing::EchoLog;
using kaja::testing::runUntil;
using mcp::Json;

/// A front between two pipes: the test writes requests into one and reads replies from the
/// other.
struct StdioHarness {
  explicit StdioHarness(StdioFrontOptions options = {}) {
    int in[2];
    int out[2];
    EXPECT_EQ(::pipe2(in, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    auto made = StdioFront::create(io, in[0], out[1], kaja::testing::echoFactory(log), options);
    EXPECT_TRUE(made);
    front = std::move(*made);
    ::close(in[0]);
    ::close(out[1]);
    toFront = in[1];
    fromFront = out[0];
    ::fcntl(fromFront, F_SETFL, O_NONBLOCK);
    front->start([this] { done = true; });
  }
  ~StdioHarness() {
    front.reset();
    if (toFront >= 0) ::close(toFront);
    ::close(fromFront);
  }

  void write(const std::string& text) const {
    std::size_t sent = 0;
    while (sent < text.size()) {
      const auto n = ::write(toFront, text.data() + sent, text.size() - sent);
      ASSERT_GT(n, 0);
      sent += static_cast<std::size_t>(n);
    }
  }
  void closeInput() {
    ::close(toFront);
    toFront = -1;
  }
  /// Reads what the front wrote so far, then splits it into complete lines.
  void drain() {
    std::array<char, 65536> buffer{};
    for (;;) {
      const auto n = ::read(fromFront, buffer.data(), buffer.size());
      if (n <= 0) break;
      pending.append(buffer.data(), static_cast<std::size_t>(n));
    }
    std::size_t newline = 0;
    while ((newline = pending.find('\n')) != std::string::npos) {
      lines.push_back(Json::parse(pending.substr(0, newline)));
      pending.erase(0, newline + 1);
    }
  }
  bool waitLines(std::size_t count) {
    return runUntil(io, [&] {
      drain();
      return lines.size() >= count;
    });
  }

  boost::asio::io_context io;
  std::shared_ptr<EchoLog> log = std::make_shared<EchoLog>();
  std::unique_ptr<StdioFront> front;
  int toFront = -1;
  int fromFront = -1;
  bool done = false;
  std::string pending;
  std::vector<Json> lines;
};

TEST(StdioFrontTest, AnswersRequestsAndPassesNotifications) {
  StdioHarness h;
  h.write(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})"
      "\n"
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
      "\n"
      R"({"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"echo","arguments":{"x":1},"_meta":{"progressToken":7}}})"
      "\r\n");
  ASSERT_TRUE(h.waitLines(3));
  EXPECT_EQ(h.lines[0]["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(h.lines[1]["method"], "notifications/progress");
  EXPECT_EQ(h.lines[1]["params"]["progressToken"], 7);
  EXPECT_EQ(h.lines[2]["id"], "two");
  EXPECT_EQ(h.lines[2]["result"]["content"][0]["text"], R"({"x":1})");
  ASSERT_EQ(h.log->notifications.size(), 1U);
  EXPECT_EQ(h.log->notifications[0], "notifications/initialized");
}

TEST(StdioFrontTest, MalformedLinesGetAnErrorAndTheSessionGoesOn) {
  StdioHarness h;
  h.write(
      "this is not json\n{\"jsonrpc\":\"2.0\",\"id\":\n\n[]\n"
      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n");
  ASSERT_TRUE(h.waitLines(4));
  EXPECT_EQ(h.lines[0]["error"]["code"], -32700);
  EXPECT_TRUE(h.lines[0]["id"].is_null());
  EXPECT_EQ(h.lines[1]["error"]["code"], -32700);
  EXPECT_EQ(h.lines[2]["error"]["code"], -32600);  // an empty batch
  EXPECT_EQ(h.lines[3]["id"], 3);
  EXPECT_TRUE(h.lines[3].contains("result"));
  EXPECT_EQ(h.log->created, 1);
  EXPECT_EQ(h.log->ended, 0);
}

TEST(StdioFrontTest, AnOversizedLineIsRefusedAndSkippedToItsNewline) {
  StdioFrontOptions options;
  options.maxMessageBytes = 1024;
  StdioHarness h(options);
  // Over the limit in one read, then over it across several reads.
  h.write(R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"p":")" + std::string(5000, 'a') +
          "\"}}\n");
  ASSERT_TRUE(h.waitLines(1));
  h.write(std::string(30000, 'b'));
  runUntil(
      h.io, [] { return false; }, std::chrono::milliseconds(50));
  h.write(std::string(30000, 'c') + "\n" + R"({"jsonrpc":"2.0","id":2,"method":"ok"})" + "\n");
  ASSERT_TRUE(h.waitLines(3));
  EXPECT_EQ(h.lines[0]["error"]["code"], -32600);
  EXPECT_NE(h.lines[0]["error"]["message"].get<std::string>().find("1 KB"), std::string::npos);
  EXPECT_EQ(h.lines[1]["error"]["code"], -32600);
  EXPECT_EQ(h.lines[2]["id"], 2);
}

TEST(StdioFrontTest, ReadsSmallerThanALineGiveTheSameMessages) {
  // With a 7-byte read buffer every line, its CR LF and an oversized line's end arrive in
  // pieces: the session still gets whole messages only, and the refused line is skipped.
  StdioFrontOptions options;
  options.maxMessageBytes = 64;
  options.readBufferBytes = 7;
  StdioHarness h(options);
  h.write(R"({"jsonrpc":"2.0","id":1,"method":"ping"})"
          "\r\n" +
          std::string(100, 'x') + "\n" +
          R"({"jsonrpc":"2.0","id":2,"method":"ping"})"
          "\n");
  ASSERT_TRUE(h.waitLines(3));
  EXPECT_EQ(h.lines[0]["id"], 1);
  EXPECT_TRUE(h.lines[0].contains("result"));
  EXPECT_EQ(h.lines[1]["error"]["code"], -32600);
  EXPECT_EQ(h.lines[2]["id"], 2);
  EXPECT_TRUE(h.lines[2].contains("result"));
}

TEST(StdioFrontTest, ServerRequestsGoOutAndTheirAnswersComeBack) {
  StdioHarness h;
  h.write(R"({"jsonrpc":"2.0","id":5,"method":"test/elicit"})"
          "\n");
  ASSERT_TRUE(h.waitLines(1));
  ASSERT_EQ(h.lines[0]["method"], "elicitation/create");
  const Json answer = {
      {"jsonrpc", "2.0"}, {"id", h.lines[0]["id"]}, {"result", {{"action", "accept"}}}};
  h.write(answer.dump() + "\n");
  ASSERT_TRUE(h.waitLines(2));
  EXPECT_EQ(h.lines[1]["id"], 5);
  EXPECT_EQ(h.lines[1]["result"]["action"], "accept");
}

TEST(StdioFrontTest, EndOfInputEndsTheSessionAfterTheLastReply) {
  StdioHarness h;
  // The last line has no newline: it is still answered.
  h.write(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  h.closeInput();
  ASSERT_TRUE(runUntil(h.io, [&] { return h.done; }));
  h.drain();
  EXPECT_EQ(h.log->ended, 1);
  ASSERT_EQ(h.pending.size() + h.lines.size(), 1U);
  EXPECT_EQ(h.lines.at(0)["id"], 1);
}

TEST(StdioFrontTest, AClientThatDoesNotReadIsNotReadEither) {
  StdioFrontOptions options;
  options.maxQueuedBytes = 256 * 1024;
  StdioHarness h(options);
  ::fcntl(h.toFront, F_SETFL, O_NONBLOCK);
  const std::string request = R"({"jsonrpc":"2.0","id":1,"method":"big","params":{"p":")" +
                              std::string(8000, 'z') + "\"}}\n";
  // Nobody reads the replies: the front must stop taking requests, so the input pipe fills.
  std::size_t accepted = 0;
  std::size_t offset = 0;
  for (int round = 0; round < 2000; ++round) {
    const auto n = ::write(h.toFront, request.data() + offset, request.size() - offset);
    if (n > 0) {
      accepted += static_cast<std::size_t>(n);
      offset = (offset + static_cast<std::size_t>(n)) % request.size();
    }
    h.io.restart();
    h.io.poll();
  }
  // Pipes hold 64 KB each way; the queue 256 KB (plus one read's worth of requests).
  EXPECT_LT(accepted, 2UL * 1024 * 1024);
  EXPECT_GT(accepted, 100UL * 1024);
  const std::size_t whole = accepted / request.size();
  ASSERT_TRUE(h.waitLines(whole));
  EXPECT_EQ(h.lines.back()["id"], 1);
}

TEST(StdioFrontTest, ATenMegabyteLineLeavesMemoryBounded) {
  testing::EchoFrontProcess front("stdio");
  const std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"ping"})"
                           "\n";
  ASSERT_TRUE(front.write(ping));
  EXPECT_EQ(Json::parse(front.readLine())["id"], 1);
  const long before = front.peakKb();
  ASSERT_GT(before, 0);
  // 10 MB, then 40 MB: a front that kept such a line would grow by at least that much.
  ASSERT_TRUE(front.write(R"({"jsonrpc":"2.0","id":0,"method":"x","params":{"p":")" +
                          std::string(10UL << 20, 'h') + "\"}}\n"));
  ASSERT_TRUE(front.write(std::string(40UL << 20, '[') + "\n" + ping));
  EXPECT_EQ(Json::parse(front.readLine())["error"]["code"], -32600);
  EXPECT_EQ(Json::parse(front.readLine())["error"]["code"], -32600);
  EXPECT_EQ(Json::parse(front.readLine())["id"], 1);
  const long after = front.peakKb();
  // The 4 MB limit bounds what is held: one buffer of the limit, touched as it fills.
  if (kaja::testing::kMemoryIsMeasured) {
    EXPECT_LT(after - before, 7 * 1024) << "before " << before << " KB, after " << after << " KB";
  }
}

}  // namespace
}  // namespace kaja::core::server
