#include "core/net/blocking_http.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <optional>

namespace kaja::core::net {

std::string HttpReply::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return "";
}

Result<HttpReply> fetchBlocking(HttpRequest request, const AddressPolicy& policy, bool headOnly) {
  boost::asio::io_context io;
  HttpWorker worker(io, policy);
  const std::size_t limit = request.maxBodyBytes;
  HttpReply reply;
  std::optional<Result<void>> done;
  std::uint64_t id = 0;
  HttpHandlers handlers;
  handlers.onHead = [&](const HttpHead& head) {
    reply.status = head.status;
    reply.headers = head.headers;
    if (headOnly) {
      worker.cancel(id);
      done = Result<void>{};
    }
  };
  handlers.onBody = [&](std::string_view chunk) {
    if (done) return;
    // The worker does not bound an event stream's body, so the bound is kept here too.
    if (reply.body.size() + chunk.size() > limit) {
      worker.cancel(id);
      done = fail(ErrorCode::kProtocol,
                  "the answer was larger than " + std::to_string(limit / 1024) + " KB");
      return;
    }
    reply.body.append(chunk);
  };
  handlers.onDone = [&](Result<void> result) {
    if (!done) done = std::move(result);
  };
  // The worker posts from its own thread, so the io_context must not run out of work.
  auto work = boost::asio::make_work_guard(io);
  id = worker.start(std::move(request), std::move(handlers));
  while (!done && io.run_one() > 0) {
  }
  work.reset();
  if (!done) return fail(ErrorCode::kInternal, "the request ended without an answer");
  if (!*done) return std::unexpected(done->error());
  return reply;
}

}  // namespace kaja::core::net
