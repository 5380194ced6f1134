#include "core/net/url.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>

namespace kaja::core::net {
namespace {

using UrlHandle = std::unique_ptr<CURLU, decltype(&curl_url_cleanup)>;

std::string part(CURLU* handle, CURLUPart which, unsigned flags = 0) {
  char* value = nullptr;
  if (curl_url_get(handle, which, &value, flags) != CURLUE_OK || value == nullptr) return {};
  std::string out(value);
  curl_free(value);
  return out;
}

// `schemeCode` is the code for a scheme other than http(s): kInvalidConfig for a URL the
// user wrote, kRefused for one a server sent.
Result<Url> fromHandle(CURLU* handle, std::string_view original, ErrorCode schemeCode) {
  Url url;
  url.scheme = part(handle, CURLUPART_SCHEME);
  std::transform(url.scheme.begin(), url.scheme.end(), url.scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (url.scheme != "http" && url.scheme != "https") {
    return fail(schemeCode, "The URL \"" + std::string(original.substr(0, 200)) +
                                "\" is not an http or https URL.");
  }
  url.host = part(handle, CURLUPART_HOST);
  if (url.host.empty()) {
    return fail(ErrorCode::kInvalidConfig,
                "The URL \"" + std::string(original.substr(0, 200)) + "\" has no host.");
  }
  if (!part(handle, CURLUPART_USER).empty()) {
    return fail(ErrorCode::kInvalidConfig,
                "The URL for " + url.host +
                    " carries a user name; put credentials in a key, not in the URL.");
  }
  // curl decodes %-escapes in a host ("0-%7f." holds DEL) and then refuses to parse the URL
  // it writes back: a host must not carry a control character or a space into a request.
  if (std::any_of(url.host.begin(), url.host.end(),
                  [](unsigned char c) { return c <= 0x20 || c == 0x7f; })) {
    return fail(ErrorCode::kInvalidConfig,
                "The URL \"" + std::string(original.substr(0, 200)) +
                    "\" has a control character or a space in its host.");
  }
  std::transform(url.host.begin(), url.host.end(), url.host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (url.host.size() >= 2 && url.host.front() == '[') {
    url.host = url.host.substr(1, url.host.size() - 2);
  }
  const std::string port = part(handle, CURLUPART_PORT, CURLU_DEFAULT_PORT);
  url.port = port.empty() ? 0 : std::atoi(port.c_str());
  url.path = part(handle, CURLUPART_PATH);
  if (url.path.empty()) url.path = "/";
  url.text = part(handle, CURLUPART_URL);
  return url;
}

}  // namespace

std::string Url::origin() const { return scheme + "://" + hostPort(); }

std::string Url::hostPort() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<Url> parseUrl(std::string_view text) {
  UrlHandle handle(curl_url(), &curl_url_cleanup);
  if (!handle) return fail(ErrorCode::kInternal, "curl_url() failed: out of memory.");
  const std::string copy(text);
  if (curl_url_set(handle.get(), CURLUPART_URL, copy.c_str(), 0) != CURLUE_OK) {
    return fail(ErrorCode::kInvalidConfig,
                "The URL \"" + copy.substr(0, 200) + "\" is not a valid absolute URL.");
  }
  return fromHandle(handle.get(), text, ErrorCode::kInvalidConfig);
}

Result<Url> resolveUrl(const Url& base, std::string_view reference) {
  UrlHandle handle(curl_url(), &curl_url_cleanup);
  if (!handle) return fail(ErrorCode::kInternal, "curl_url() failed: out of memory.");
  const std::string copy(reference);
  if (curl_url_set(handle.get(), CURLUPART_URL, base.text.c_str(), 0) != CURLUE_OK ||
      curl_url_set(handle.get(), CURLUPART_URL, copy.c_str(), 0) != CURLUE_OK) {
    return fail(
        ErrorCode::kProtocol,
        "\"" + copy.substr(0, 200) + "\" is not a valid URL relative to " + base.origin() + ".");
  }
  return fromHandle(handle.get(), reference, ErrorCode::kRefused);
}

bool sameOrigin(const Url& a, const Url& b) {
  return a.scheme == b.scheme && a.host == b.host && a.port == b.port;
}

std::string withTrailingSlash(const Url& url) {
  if (!url.path.empty() && url.path.back() == '/') return {};
  const auto query = url.text.find('?');
  const std::string head = query == std::string::npos ? url.text : url.text.substr(0, query);
  const std::string tail = query == std::string::npos ? "" : url.text.substr(query);
  return head + "/" + tail;
}

}  // namespace kaja::core::net
