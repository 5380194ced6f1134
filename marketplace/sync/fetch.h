#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "core/error.h"

namespace kaja::marketplace::sync {

/// Returns true when `source` is an http(s) URL rather than a file.
bool isUrlSource(const std::string& source);

/// Checks a marketplace source as the user gave it and returns it in the form kaja keeps:
/// an https URL (http only to a loopback host), or a file made absolute with `~` expanded.
/// kUsage with one sentence otherwise.
core::Result<std::string> normaliseSource(const std::string& source, const std::string& home,
                                          const std::string& workingDir);

/// How fetchSource reads.
struct FetchLimits {
  std::size_t maxBytes = 64ULL * 1024 * 1024;
  std::chrono::milliseconds timeout{120000};  ///< the whole transfer, per hop
  int maxRedirects = 5;
};

/// Returns the bytes at `source` (a normalised source). A URL is fetched with libcurl
/// through the address guard (the user's own source: loopback and private addresses are
/// allowed, link-local and metadata ones never), following at most `limits.maxRedirects`
/// redirects, each checked again, and never from https to http. A file is read only when
/// it is a regular file. Fails with kNotFound for a 404 or a missing file, kConnect when
/// the host cannot be reached, kRefused when the guard says no, kProtocol for another
/// status or a body over `limits.maxBytes`.
core::Result<std::string> fetchSource(const std::string& source, const FetchLimits& limits = {});

/// What fetchUrl asks for, and how its errors name what was fetched.
struct HttpGet {
  std::string accept = "application/octet-stream, */*";  ///< the Accept header
  std::string what = "the archive";  ///< e.g. "the registry's answer", in errors
};

/// Returns the body of a 200 answer to a GET of `url` (an absolute http(s) URL), fetched as
/// fetchSource fetches a URL: through the address guard for a source the user configured,
/// with the same redirect rules and errors. A body over `limits.maxBytes` fails with
/// kProtocol, whatever its content type.
core::Result<std::string> fetchUrl(const std::string& url, const FetchLimits& limits = {},
                                   const HttpGet& get = {});

}  // namespace kaja::marketplace::sync
