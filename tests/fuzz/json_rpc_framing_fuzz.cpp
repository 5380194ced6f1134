// Newline-delimited JSON-RPC framing, through kaja's real stdio front on a pipe: the bytes,
// written in the chunks the fuzzer picks, reach the session as exactly the messages that
// parsing each whole line gives (a last line without its newline at the end of input
// included), never half a line, and a line over the limit is skipped whole, whatever the
// size of the front's reads.
#include <fcntl.h>
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/mcp/json_rpc.h"
#include "core/server/session.h"
#include "core/server/stdio_front.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace mcp = kaja::core::mcp;
namespace server = kaja::core::server;

constexpr std::size_t kMaxMessage = 512;

class Recorder final : public server::Session {
 public:
  explicit Recorder(std::vector<std::string>& seen) : seen_(seen) {}
  void receive(mcp::Message message) override { seen_.push_back(mcp::serialize(message)); }
  void end() override {}

 private:
  std::vector<std::string>& seen_;
};

// What the session must see: each whole line, parsed on its own.
std::vector<std::string> expectedMessages(std::string_view stream) {
  std::vector<std::string> out;
  while (!stream.empty()) {
    const auto newline = stream.find('\n');
    std::string_view line = stream.substr(0, newline);
    stream.remove_prefix(newline == std::string_view::npos ? stream.size() : newline + 1);
    if (line.size() > kMaxMessage) continue;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (auto messages = mcp::parseMessages(line)) {
      for (const auto& message : *messages) out.push_back(mcp::serialize(message));
    }
  }
  return out;
}

std::vector<std::string> deliver(std::string_view stream, const std::vector<std::size_t>& cuts,
                                 std::size_t readSize) {
  std::vector<std::string> seen;
  int pipeFds[2];
  KAJA_FUZZ_CHECK(::pipe2(pipeFds, O_CLOEXEC) == 0, "a pipe");
  const int sink = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  KAJA_FUZZ_CHECK(sink >= 0, "/dev/null opens");
  boost::asio::io_context io;
  server::StdioFrontOptions options;
  options.maxMessageBytes = kMaxMessage;
  options.readBufferBytes = readSize;
  auto front = server::StdioFront::create(
      io, pipeFds[0], sink,
      [&seen](std::shared_ptr<server::Outbox>) { return std::make_shared<Recorder>(seen); },
      options);
  ::close(pipeFds[0]);
  ::close(sink);
  KAJA_FUZZ_CHECK(front.has_value(), "the front starts");
  bool done = false;
  (*front)->start([&done] { done = true; });
  std::size_t at = 0;
  for (std::size_t i = 0; at < stream.size(); ++i) {
    std::size_t size = i < cuts.size() ? cuts[i] : stream.size() - at;
    size = std::min(size, stream.size() - at);
    // The front reads what is in the pipe, up to its buffer's size: run it dry after each
    // chunk so no read spans two chunks.
    KAJA_FUZZ_CHECK(::write(pipeFds[1], stream.data() + at, size) == static_cast<ssize_t>(size),
                    "a chunk fits the pipe");
    at += size;
    while (io.poll() > 0) {
    }
  }
  ::close(pipeFds[1]);
  io.run();
  KAJA_FUZZ_CHECK(done, "the front finishes at the end of input");
  return seen;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  FuzzedDataProvider input(bytes, size);
  std::vector<std::size_t> cuts;
  // Up to the longest input: a read can end inside a chunk, or take all of one.
  const auto readSize = input.ConsumeIntegralInRange<std::size_t>(1, 2048);
  const auto count = input.ConsumeIntegralInRange<std::size_t>(0, 6);
  for (std::size_t i = 0; i < count; ++i) {
    cuts.push_back(input.ConsumeIntegralInRange<std::size_t>(1, 300));
  }
  const std::string stream = input.ConsumeRemainingBytesAsString();
  const std::vector<std::string> expected = expectedMessages(stream);
  const std::vector<std::string> split = deliver(stream, cuts, readSize);
  KAJA_FUZZ_CHECK(split.size() == expected.size(), "as many messages as whole lines hold");
  for (std::size_t i = 0; i < expected.size(); ++i) {
    KAJA_FUZZ_CHECK(split[i] == expected[i], "the same messages, whatever the split");
  }
  return 0;
}
