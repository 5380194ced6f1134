#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/auth/metadata.h"
#include "core/auth/oauth_flow.h"
#include "core/auth/url_form.h"
#include "core/net/blocking_http.h"
#include "core/net/url.h"

namespace kaja::core::auth::testing {

using Json = nlohmann::json;

inline constexpr const char* kServerUrl = "https://mcp.example/mcp";
inline constexpr const char* kIssuer = "https://as.example";
// What the fake hands out; no error message may ever contain one of them.
inline constexpr const char* kCode = "code-SECRET-5f2a";
inline constexpr const char* kAccessToken = "at-SECRET-91bc";
inline constexpr const char* kRefreshToken = "rt-SECRET-07de";
inline constexpr const char* kClientSecret = "cs-SECRET-4c4c";

/// One request the fake authorization server received.
struct Recorded {
  std::string method;
  std::string url;
  std::string host;  ///< from the parsed URL
  std::string path;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::size_t maxBodyBytes = 0;

  [[nodiscard]] std::string header(const std::string& name) const {
    for (const auto& [key, value] : headers) {
      if (key == name) return value;
    }
    return {};
  }
  [[nodiscard]] std::map<std::string, std::string> form() const { return parseQuery(body); }
};

inline net::HttpReply jsonReply(long status, const Json& body) {
  return net::HttpReply{status, {{"content-type", "application/json"}}, body.dump()};
}

/// A protected resource (https://mcp.example/mcp) and its authorization server
/// (https://as.example), routed by method, host and path. Every field may be changed by a
/// test before the flow runs; the defaults describe a server that works.
class FakeAuthServer {
 public:
  Json resource = {{"resource", kServerUrl},
                   {"authorization_servers", Json::array({kIssuer})},
                   {"scopes_supported", Json::array({"mcp:read"})}};
  Json metadata = {{"issuer", kIssuer},
                   {"authorization_endpoint", "https://as.example/authorize"},
                   {"token_endpoint", "https://as.example/token"},
                   {"registration_endpoint", "https://as.example/register"},
                   {"response_types_supported", Json::array({"code"})},
                   {"code_challenge_methods_supported", Json::array({"S256"})}};
  /// Raw bodies that replace the JSON documents above when set.
  std::optional<std::string> resourceBody;
  std::optional<std::string> metadataBody;
  net::HttpReply registration = jsonReply(201, {{"client_id", "client-1"}});
  net::HttpReply token = jsonReply(200, {{"access_token", kAccessToken},
                                         {"token_type", "Bearer"},
                                         {"refresh_token", kRefreshToken},
                                         {"expires_in", 3600},
                                         {"scope", "mcp:read"}});
  /// Replies for other "METHOD host/path" keys, checked first.
  std::map<std::string, net::HttpReply> extra;

  HttpSend send() {
    return [this](net::HttpRequest request) { return handle(std::move(request)); };
  }

  Result<net::HttpReply> handle(net::HttpRequest request) {
    Recorded seen;
    seen.method = request.method;
    seen.url = request.url;
    if (auto url = net::parseUrl(request.url)) {
      seen.host = url->host;
      seen.path = url->path;
    }
    seen.headers = request.headers;
    seen.body = request.body;
    seen.maxBodyBytes = request.maxBodyBytes;
    std::lock_guard lock(mutex_);
    requests_.push_back(seen);
    const std::string key = seen.method + " " + seen.host + seen.path;
    if (auto it = extra.find(key); it != extra.end()) return it->second;
    if (key == "GET mcp.example/.well-known/oauth-protected-resource/mcp") {
      return net::HttpReply{200, {}, resourceBody.value_or(resource.dump())};
    }
    if (key == "GET as.example/.well-known/oauth-authorization-server") {
      return net::HttpReply{200, {}, metadataBody.value_or(metadata.dump())};
    }
    if (seen.method == "POST" && matches(request.url, "registration_endpoint")) {
      return registration;
    }
    if (seen.method == "POST" && matches(request.url, "token_endpoint")) return token;
    return net::HttpReply{404, {}, "not found"};
  }

  [[nodiscard]] std::vector<Recorded> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

  /// Returns the requests with `method` to `host` + `path`.
  [[nodiscard]] std::vector<Recorded> to(const std::string& method, const std::string& host,
                                         const std::string& path) const {
    std::vector<Recorded> out;
    for (const auto& request : requests()) {
      if (request.method == method && request.host == host && request.path == path) {
        out.push_back(request);
      }
    }
    return out;
  }

  /// Returns the POSTs to the token endpoint.
  [[nodiscard]] std::vector<Recorded> tokenRequests() const {
    std::vector<Recorded> out;
    for (const auto& request : requests()) {
      if (request.method == "POST" && request.path.ends_with("/token")) out.push_back(request);
    }
    return out;
  }

 private:
  bool matches(const std::string& url, const char* field) const {
    const auto it = metadata.find(field);
    if (it == metadata.end() || !it->is_string()) return false;
    auto a = net::parseUrl(url);
    auto b = net::parseUrl(it->get<std::string>());
    return a && b && a->host == b->host && a->port == b->port && a->path == b->path;
  }

  mutable std::mutex mutex_;
  std::vector<Recorded> requests_;
};

/// A browser for the person signing in: reads the authorization URL it is shown and delivers
/// whatever redirect `answer` makes of its parameters to the flow's loopback listener, from a
/// thread of its own (joined on destruction).
class FakeBrowser {
 public:
  /// Returns the query to deliver to redirect_uri, or nullopt to deliver nothing. The
  /// default approves: the code and the state the flow sent.
  std::function<std::optional<std::string>(const std::map<std::string, std::string>&)> answer =
      [](const std::map<std::string, std::string>& query) -> std::optional<std::string> {
    return "code=" + percentEncode(kCode) + "&state=" + percentEncode(query.at("state"));
  };
  /// What opening the URL returns (an error ends the sign-in).
  Result<void> openResult{};

  ~FakeBrowser() { join(); }

  /// Waits for every delivery; deliveredStatus is complete afterwards.
  void join() {
    for (auto& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }

  BrowserOpener opener() {
    return [this](const std::string& url) -> Result<void> {
      opened.push_back(url);
      const auto mark = url.find('?');
      auto query = parseQuery(mark == std::string::npos ? "" : url.substr(mark + 1));
      queries.push_back(query);
      if (!openResult) return openResult;
      auto deliver = answer(query);
      if (deliver && query.contains("redirect_uri")) {
        const std::string target = query.at("redirect_uri") + "?" + *deliver;
        threads_.emplace_back([this, target] {
          net::HttpRequest request;
          request.url = target;
          request.timeout = std::chrono::seconds(2);
          request.totalTimeout = std::chrono::seconds(2);
          auto reply = net::fetchBlocking(request, net::AddressPolicy{.allowPrivate = true});
          std::lock_guard lock(mutex_);
          deliveredStatus.push_back(reply ? reply->status : -1);
        });
      }
      return {};
    };
  }

  std::vector<std::string> opened;
  std::vector<std::map<std::string, std::string>> queries;
  std::vector<long> deliveredStatus;

 private:
  std::mutex mutex_;
  std::vector<std::thread> threads_;
};

/// Short timeouts so that nothing in a test hangs.
inline ClientSettings fastSettings() {
  ClientSettings settings;
  settings.fetchTimeout = std::chrono::seconds(2);
  settings.approveTimeout = std::chrono::seconds(3);
  return settings;
}

inline net::Url parsedUrl(const std::string& text) {
  auto url = net::parseUrl(text);
  EXPECT_TRUE(url.has_value()) << text;
  return url.value_or(net::Url{});
}

inline OAuthFlow makeFlow(FakeAuthServer& server, FakeBrowser& browser,
                          ClientSettings settings = fastSettings(),
                          const std::string& serverUrl = kServerUrl) {
  return OAuthFlow(parsedUrl(serverUrl), "ability 'fake'", std::move(settings), server.send(),
                   browser.opener());
}

/// Fails the test when `message` holds a secret the fake handed out or the flow made.
inline void expectNoSecrets(const std::string& message, const std::vector<std::string>& more = {}) {
  for (const std::string secret : {kCode, kAccessToken, kRefreshToken, kClientSecret}) {
    EXPECT_EQ(message.find(secret), std::string::npos) << "leaks " << secret << ": " << message;
  }
  for (const auto& secret : more) {
    if (secret.empty()) continue;
    EXPECT_EQ(message.find(secret), std::string::npos) << "leaks " << secret << ": " << message;
  }
}

}  // namespace kaja::core::auth::testing
