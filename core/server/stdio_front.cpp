#include "core/server/stdio_front.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "core/mcp/json_rpc_envelope.h"
#include "core/server/wire.h"

namespace kaja::core::server {
namespace asio = boost::asio;

namespace {

// A write buffer grown past this by a large reply is released after the write.
constexpr std::size_t kKeepWriteCapacity = 256UL * 1024;

Result<int> duplicate(int fd, const char* name) {
  const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (copy < 0) {
    return fail(ErrorCode::kIo,
                std::string("fcntl(F_DUPFD_CLOEXEC) on ") + name + ": " + std::strerror(errno));
  }
  return copy;
}

}  // namespace

struct StdioFront::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& io, int in, int out, SessionFactory factory, StdioFrontOptions options)
      : io(io),
        options(options),
        factory(std::move(factory)),
        input(io, in),
        output(io, out),
        bufferSize(std::max<std::size_t>(options.readBufferBytes, 1)),
        buffer(std::make_unique_for_overwrite<char[]>(bufferSize)) {}

  void start(std::function<void()> done);
  void readMore();
  void onRead(std::size_t bytes);
  void handleLine(std::string_view line);
  void refuseOversized();
  void onInputEnd();
  void send(const Json& message);
  void writeNext();
  void endSession();
  void shutdown();
  void maybeFinish();

  asio::io_context& io;
  StdioFrontOptions options;
  SessionFactory factory;
  asio::posix::stream_descriptor input;
  asio::posix::stream_descriptor output;
  std::shared_ptr<Session> session;
  std::function<void()> onDone;

  std::size_t bufferSize;
  std::unique_ptr<char[]> buffer;  // not cleared: only what a read wrote is looked at
  std::string partial;
  bool discarding = false;  // inside a line that was refused for its size
  bool reading = false;
  bool inputDone = false;

  std::string queue;
  std::string inFlight;
  bool writing = false;
  bool outputFailed = false;

  bool ended = false;
  bool finished = false;
};

namespace {

/// The session's way out: a weak link, so that a session kept alive elsewhere does not keep
/// the front alive.
class StdioOutbox final : public Outbox {
 public:
  explicit StdioOutbox(std::weak_ptr<StdioFront::Impl> impl) : impl_(std::move(impl)) {}
  void send(Json message, const Json& /*relatedTo*/) override {
    if (auto impl = impl_.lock()) impl->send(message);
  }

 private:
  std::weak_ptr<StdioFront::Impl> impl_;
};

}  // namespace

void StdioFront::Impl::start(std::function<void()> done) {
  onDone = std::move(done);
  session = factory(std::make_shared<StdioOutbox>(weak_from_this()));
  readMore();
}

void StdioFront::Impl::readMore() {
  if (reading || inputDone || ended || !input.is_open()) return;
  // A client that does not read its replies is not read either, so its requests cannot grow
  // the queue without bound.
  if (queue.size() + inFlight.size() > options.maxQueuedBytes) return;
  reading = true;
  input.async_read_some(
      asio::buffer(buffer.get(), bufferSize),
      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t bytes) {
        self->reading = false;
        if (self->ended || self->inputDone) return;
        if (ec) {
          self->onInputEnd();
          return;
        }
        self->onRead(bytes);
      });
}

void StdioFront::Impl::onRead(std::size_t bytes) {
  std::string_view chunk(buffer.get(), bytes);
  while (!chunk.empty() && !ended) {
    const auto newline = chunk.find('\n');
    const std::size_t take = newline == std::string_view::npos ? chunk.size() : newline;
    if (discarding) {
      if (newline == std::string_view::npos) break;
      discarding = false;
      chunk.remove_prefix(newline + 1);
      continue;
    }
    if (partial.size() + take > options.maxMessageBytes) {
      refuseOversized();
      std::string().swap(partial);
      if (newline == std::string_view::npos) {
        discarding = true;
        break;
      }
      chunk.remove_prefix(newline + 1);
      continue;
    }
    if (newline == std::string_view::npos) {
      // A long line gets one allocation of the limit, touched only as far as the line goes:
      // growing by doubling would hold two copies at once and leave holes the allocator keeps.
      if (partial.size() + chunk.size() > bufferSize &&
          partial.capacity() < options.maxMessageBytes) {
        partial.reserve(options.maxMessageBytes);
      }
      partial.append(chunk);
      break;
    }
    if (partial.empty()) {
      handleLine(chunk.substr(0, newline));
    } else {
      partial.append(chunk.substr(0, newline));
      const std::string line = std::move(partial);
      partial.clear();
      handleLine(line);
    }
    chunk.remove_prefix(newline + 1);
  }
  readMore();
}

void StdioFront::Impl::refuseOversized() {
  send(wire::errorObject(mcp::rpc_error::kInvalidRequest,
                         "The message is larger than kaja's limit of " +
                             wire::formatBytes(options.maxMessageBytes) +
                             ", so kaja skipped it; send smaller messages."));
}

void StdioFront::Impl::handleLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;
  auto messages = mcp::parseMessages(line);
  if (!messages) {
    const std::int64_t code = wire::parseErrorCode(messages.error());
    Json refusal = wire::errorObject(code, messages.error().message);
    if (code != mcp::rpc_error::kParseError) refusal["id"] = mcp::refusedRequestId(line);
    send(refusal);
    return;
  }
  for (auto& message : *messages) {
    if (ended) return;
    const auto keep = session;
    keep->receive(std::move(message));
  }
}

void StdioFront::Impl::onInputEnd() {
  inputDone = true;
  if (!partial.empty() && !discarding) {
    const std::string last = std::move(partial);
    partial.clear();
    handleLine(last);
  }
  endSession();
  maybeFinish();
}

void StdioFront::Impl::send(const Json& message) {
  if (ended || outputFailed || finished) return;
  wire::appendJson(message, queue);
  queue += '\n';
  if (!writing) writeNext();
}

void StdioFront::Impl::writeNext() {
  if (queue.empty() || outputFailed) {
    writing = false;
    maybeFinish();
    readMore();
    return;
  }
  writing = true;
  inFlight.swap(queue);
  asio::async_write(output, asio::buffer(inFlight),
                    [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                      self->inFlight.clear();
                      if (self->inFlight.capacity() > kKeepWriteCapacity) {
                        std::string().swap(self->inFlight);
                      }
                      if (ec) {
                        // The client closed its end: nobody is left to answer.
                        self->writing = false;
                        self->outputFailed = true;
                        self->queue.clear();
                        self->endSession();
                        boost::system::error_code ignored;
                        self->input.close(ignored);
                        self->maybeFinish();
                        return;
                      }
                      self->readMore();
                      self->writeNext();
                    });
}

void StdioFront::Impl::endSession() {
  if (ended) return;
  auto ending = std::move(session);
  session.reset();
  // Replies the session sends while it ends (cancelled calls) still go out.
  if (ending) ending->end();
  ended = true;
}

void StdioFront::Impl::shutdown() {
  endSession();
  boost::system::error_code ignored;
  input.close(ignored);
  maybeFinish();
}

void StdioFront::Impl::maybeFinish() {
  if (finished || !ended || writing || (!queue.empty() && !outputFailed)) return;
  finished = true;
  if (onDone) asio::post(io, std::exchange(onDone, nullptr));
}

Result<std::unique_ptr<StdioFront>> StdioFront::create(asio::io_context& io, int inFd, int outFd,
                                                       SessionFactory factory,
                                                       StdioFrontOptions options) {
  auto in = duplicate(inFd, "the input fd");
  if (!in) return std::unexpected(in.error());
  auto out = duplicate(outFd, "the output fd");
  if (!out) {
    ::close(*in);
    return std::unexpected(out.error());
  }
  auto impl = std::make_shared<Impl>(io, *in, *out, std::move(factory), options);
  return std::unique_ptr<StdioFront>(new StdioFront(std::move(impl)));
}

StdioFront::StdioFront(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

StdioFront::~StdioFront() {
  impl_->onDone = nullptr;
  impl_->shutdown();
  boost::system::error_code ignored;
  impl_->output.close(ignored);
}

void StdioFront::start(std::function<void()> onDone) { impl_->start(std::move(onDone)); }

void StdioFront::stop() { impl_->shutdown(); }

}  // namespace kaja::core::server
