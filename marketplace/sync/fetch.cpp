#include "marketplace/sync/fetch.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <filesystem>
#include <optional>

#include "core/net/address_guard.h"
#include "core/net/http_worker.h"
#include "core/net/url.h"
#include "core/paths.h"
#include "core/util/quote.h"
#include "core/util/sys.h"

namespace kaja::marketplace::sync {
namespace {

using core::ErrorCode;
namespace net = core::net;

bool isLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  auto address = net::parseIpAddress(host);
  return address && net::classify(*address) == net::AddressClass::kLoopback;
}

struct Response {
  long status = 0;
  std::string location;
  std::string body;
};

core::Result<Response> fetchOnce(const net::Url& url, const FetchLimits& limits,
                                 const HttpGet& get) {
  boost::asio::io_context io;
  net::HttpWorker worker(io, net::AddressPolicy{.allowPrivate = true});
  net::HttpRequest request;
  request.url = url.text;
  request.timeout = limits.timeout;
  request.totalTimeout = limits.timeout;
  request.maxBodyBytes = limits.maxBytes;
  request.headers.emplace_back("Accept", get.accept);
  request.headers.emplace_back("User-Agent", "kaja/" KAJA_VERSION);
  Response response;
  std::optional<core::Result<void>> done;
  std::uint64_t id = 0;
  net::HttpHandlers handlers;
  handlers.onHead = [&](const net::HttpHead& head) {
    response.status = head.status;
    response.location = head.header("location");
  };
  handlers.onBody = [&](std::string_view chunk) {
    // A redirect's or an error's body is not what was asked for; keep only a 200's.
    if (response.status != 200 || done) return;
    // The worker does not bound an event stream's body, so the bound is kept here too.
    if (response.body.size() + chunk.size() > limits.maxBytes) {
      worker.cancel(id);
      done = core::fail(ErrorCode::kProtocol,
                        "the response was larger than " +
                            std::to_string(limits.maxBytes / (1024UL * 1024)) + " MB");
      return;
    }
    response.body.append(chunk);
  };
  handlers.onDone = [&](core::Result<void> result) { done = std::move(result); };
  // The worker posts from its own thread, so the io_context must not run out of work.
  auto work = boost::asio::make_work_guard(io);
  id = worker.start(std::move(request), std::move(handlers));
  while (!done && io.run_one() > 0) {
  }
  work.reset();
  if (!done) return core::fail(ErrorCode::kInternal, "the download ended without an answer");
  if (!*done) {
    core::Error error = done->error();
    if (error.code != ErrorCode::kRefused) {
      error.message = "cannot fetch " + url.text + ": " + error.message;
    }
    return std::unexpected(std::move(error));
  }
  return response;
}

}  // namespace

bool isUrlSource(const std::string& source) {
  return source.starts_with("https://") || source.starts_with("http://");
}

core::Result<std::string> normaliseSource(const std::string& source, const std::string& home,
                                          const std::string& workingDir) {
  if (source.empty()) {
    return core::fail(ErrorCode::kUsage, "SOURCE is empty; give an https URL or an archive's path");
  }
  if (isUrlSource(source)) {
    auto url = net::parseUrl(source);
    if (!url) return core::fail(ErrorCode::kUsage, url.error().message);
    if (url->scheme == "http" && !isLoopbackHost(url->host)) {
      return core::fail(ErrorCode::kUsage,
                        "a marketplace is fetched over https (plain http only from this "
                        "machine's loopback); change " +
                            core::quoteForMessage(source) + " to https://");
    }
    return url->text;
  }
  if (source.find("://") != std::string::npos) {
    return core::fail(ErrorCode::kUsage,
                      core::quoteForMessage(source) +
                          " is neither an https URL nor a file; kaja fetches only those");
  }
  std::filesystem::path path(core::expandHome(source, home));
  if (path.is_relative()) path = std::filesystem::path(workingDir) / path;
  return path.lexically_normal().string();
}

core::Result<std::string> fetchSource(const std::string& source, const FetchLimits& limits) {
  if (!isUrlSource(source)) {
    auto bytes = core::readRegularFile(source, limits.maxBytes, core::quoteForMessage(source));
    if (!bytes) {
      core::Error error = bytes.error();
      if (error.code == ErrorCode::kNotFound) error.message = source + " does not exist";
      return std::unexpected(std::move(error));
    }
    return bytes;
  }
  return fetchUrl(source, limits);
}

core::Result<std::string> fetchUrl(const std::string& address, const FetchLimits& limits,
                                   const HttpGet& get) {
  auto url = net::parseUrl(address);
  if (!url) return std::unexpected(url.error());
  for (int hop = 0;; ++hop) {
    auto response = fetchOnce(*url, limits, get);
    if (!response) return std::unexpected(response.error());
    if (response->status == 200) return std::move(response->body);
    bool redirect = response->status == 301 || response->status == 302 || response->status == 303 ||
                    response->status == 307 || response->status == 308;
    if (redirect && !response->location.empty()) {
      if (hop >= limits.maxRedirects) {
        return core::fail(ErrorCode::kProtocol, url->text + " redirected more than " +
                                                    std::to_string(limits.maxRedirects) +
                                                    " times; give the final URL of " + get.what);
      }
      auto next = net::resolveUrl(*url, response->location);
      if (!next) return std::unexpected(next.error());
      if (url->scheme == "https" && next->scheme == "http") {
        return core::fail(ErrorCode::kRefused, url->text +
                                                   " redirected from https to plain http (" +
                                                   next->text + "), which kaja does not follow");
      }
      url = std::move(next);
      continue;
    }
    if (response->status == 404) {
      return core::fail(ErrorCode::kNotFound, url->text + " answered 404: nothing is there");
    }
    return core::fail(ErrorCode::kProtocol, url->text + " answered HTTP " +
                                                std::to_string(response->status) + " instead of " +
                                                get.what);
  }
}

}  // namespace kaja::marketplace::sync
