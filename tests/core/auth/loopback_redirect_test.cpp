#include "core/auth/loopback_redirect.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "core/net/blocking_http.h"

namespace kaja::core::auth {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

int portOf(const LoopbackRedirect& listener) {
  const std::string uri = listener.redirectUri();
  const std::string prefix = "http://127.0.0.1:";
  EXPECT_TRUE(uri.starts_with(prefix)) << uri;
  EXPECT_TRUE(uri.ends_with("/callback")) << uri;
  return std::stoi(uri.substr(prefix.size()));
}

Result<net::HttpReply> send(const std::string& url, const std::string& method = "GET") {
  net::HttpRequest request;
  request.method = method;
  request.url = url;
  request.timeout = 2s;
  request.totalTimeout = 2s;
  return net::fetchBlocking(std::move(request), net::AddressPolicy{.allowPrivate = true});
}

// A raw TCP connection to the listener, closed on destruction.
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  [[nodiscard]] bool connected() const { return connected_; }
  bool write(const std::string& text) {
    return ::send(fd_, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
  }

 private:
  int fd_;
  bool connected_ = false;
};

TEST(LoopbackRedirectTest, ListensOnLoopbackOnAFreshPort) {
  auto first = LoopbackRedirect::open();
  auto second = LoopbackRedirect::open();
  ASSERT_TRUE(first.has_value()) << first.error().message;
  ASSERT_TRUE(second.has_value()) << second.error().message;
  EXPECT_GT(portOf(*first), 0);
  EXPECT_NE(portOf(*first), portOf(*second));
}

TEST(LoopbackRedirectTest, PortInUseFailsWithKIo) {
  auto first = LoopbackRedirect::open();
  ASSERT_TRUE(first.has_value());
  const int port = portOf(*first);
  auto again = LoopbackRedirect::open(port);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, ErrorCode::kIo);
  EXPECT_THAT(again.error().message,
              HasSubstr("cannot listen on 127.0.0.1:" + std::to_string(port)));
}

// A second sign-in reopens the port its client was registered with (OAuthFlow::signIn), so
// the port must be free again right after a redirect was answered on it.
TEST(LoopbackRedirectTest, PortCanBeReopenedRightAfterARedirect) {
  int port = 0;
  {
    auto listener = LoopbackRedirect::open();
    ASSERT_TRUE(listener.has_value());
    port = portOf(*listener);
    std::thread browser([&] { (void)send(listener->redirectUri() + "?code=x"); });
    auto answer = listener->wait(3s);
    browser.join();
    ASSERT_TRUE(answer.has_value()) << answer.error().message;
  }
  auto again = LoopbackRedirect::open(port);
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(portOf(*again), port);
}

TEST(LoopbackRedirectTest, CallbackQueryIsReturnedAndThePageSaysDone) {
  auto listener = LoopbackRedirect::open();
  ASSERT_TRUE(listener.has_value());
  Result<net::HttpReply> reply = fail(ErrorCode::kInternal, "not sent");
  std::thread browser([&] {
    reply = send(listener->redirectUri() + "?code=a%20b+c&state=s%26t&iss=https%3A%2F%2Fas");
  });
  auto answer = listener->wait(3s);
  browser.join();
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->at("code"), "a b c");
  EXPECT_EQ(answer->at("state"), "s&t");
  EXPECT_EQ(answer->at("iss"), "https://as");
  ASSERT_TRUE(reply.has_value()) << reply.error().message;
  EXPECT_EQ(reply->status, 200);
  EXPECT_THAT(reply->body, HasSubstr("You may close this tab"));
  EXPECT_EQ(reply->header("cache-control"), "no-store");
}

TEST(LoopbackRedirectTest, OtherPathsGet404AndTheWaitGoesOn) {
  auto listener = LoopbackRedirect::open();
  ASSERT_TRUE(listener.has_value());
  const std::string base = "http://127.0.0.1:" + std::to_string(portOf(*listener));
  std::vector<long> statuses;
  std::thread browser([&] {
    for (const auto& [method, path] :
         std::vector<std::pair<std::string, std::string>>{{"GET", "/favicon.ico"},
                                                          {"GET", "/callbackX?code=evil&state=x"},
                                                          {"GET", "/other/callback?code=evil"},
                                                          {"GET", "/?code=evil"},
                                                          {"POST", "/callback?code=evil"},
                                                          {"GET", "/callback?code=real&state=s"}}) {
      auto reply = send(base + path, method);
      statuses.push_back(reply ? reply->status : -1);
    }
  });
  auto answer = listener->wait(5s);
  browser.join();
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->at("code"), "real");
  EXPECT_EQ(statuses, (std::vector<long>{404, 404, 404, 404, 404, 200}));
}

TEST(LoopbackRedirectTest, NoAnswerTimesOutWithKTimeout) {
  auto listener = LoopbackRedirect::open();
  ASSERT_TRUE(listener.has_value());
  const auto start = std::chrono::steady_clock::now();
  auto answer = listener->wait(1500ms);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(answer.has_value());
  EXPECT_EQ(answer.error().code, ErrorCode::kTimeout);
  EXPECT_THAT(answer.error().message, HasSubstr("no answer reached " + listener->redirectUri()));
  EXPECT_GE(took, 1400ms);
  EXPECT_LT(took, 3s);
}

TEST(LoopbackRedirectTest, WaitIsOnce) {
  auto listener = LoopbackRedirect::open();
  ASSERT_TRUE(listener.has_value());
  (void)listener->wait(50ms);
  auto again = listener->wait(50ms);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, ErrorCode::kInternal);
}

TEST(LoopbackRedirectTest, ClosedListenerRefusesConnections) {
  int port = 0;
  {
    auto listener = LoopbackRedirect::open();
    ASSERT_TRUE(listener.has_value());
    port = portOf(*listener);
  }
  RawConnection connection(port);
  EXPECT_FALSE(connection.connected());
}

TEST(LoopbackRedirectTest, OversizedHeadersAreDroppedAndTheWaitGoesOn) {
  auto listener = LoopbackRedirect::open();
  ASSERT_TRUE(listener.has_value());
  const int port = portOf(*listener);
  std::thread browser([&] {
    {
      RawConnection flood(port);
      ASSERT_TRUE(flood.connected());
      flood.write("GET /callback?code=evil HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " +
                  std::string(64 * 1024, 'a') + "\r\n\r\n");
    }
    (void)send(listener->redirectUri() + "?code=real");
  });
  auto answer = listener->wait(5s);
  browser.join();
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->at("code"), "real");
}

// A connection that sends part of its headers and then nothing (slowloris), held open while
// the real redirect arrives: the real one must still end the wait well within its timeout.
TEST(LoopbackRedirectTest, SlowlorisDoesNotHoldBackTheRealRedirect) {
  auto listener = LoopbackRedirect::open();
  ASSERT_TRUE(listener.has_value());
  const int port = portOf(*listener);
  RawConnection slow(port);
  ASSERT_TRUE(slow.connected());
  ASSERT_TRUE(slow.write("GET /callback?code=evil HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "));
  std::thread browser([&] {
    std::this_thread::sleep_for(200ms);
    (void)send(listener->redirectUri() + "?code=real");
  });
  const auto start = std::chrono::steady_clock::now();
  auto answer = listener->wait(3s);
  const auto took = std::chrono::steady_clock::now() - start;
  browser.join();
  ASSERT_TRUE(answer.has_value())
      << answer.error().message << " (after "
      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms)";
  EXPECT_EQ(answer->at("code"), "real");
}

// A browser's speculative preconnect opens a socket and sends nothing on it.
TEST(LoopbackRedirectTest, SilentPreconnectDoesNotHoldBackTheRealRedirect) {
  auto listener = LoopbackRedirect::open();
  ASSERT_TRUE(listener.has_value());
  RawConnection silent(portOf(*listener));
  ASSERT_TRUE(silent.connected());
  std::thread browser([&] {
    std::this_thread::sleep_for(200ms);
    (void)send(listener->redirectUri() + "?code=real");
  });
  auto answer = listener->wait(3s);
  browser.join();
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->at("code"), "real");
}

// A forged answer (another local process reaching the port first) is turned away with 400
// and the wait goes on to the real one; only forged ones make the wait a refusal.
TEST(LoopbackRedirectTest, AnAnswerItDoesNotTakeIsTurnedAwayAndTheWaitGoesOn) {
  auto listener = LoopbackRedirect::open();
  ASSERT_TRUE(listener.has_value());
  const std::string base = listener->redirectUri();
  long forgedStatus = 0;
  std::thread browser([&] {
    auto forged = send(base + "?code=evil&state=forged");
    if (forged) forgedStatus = forged->status;
    (void)send(base + "?code=real&state=right");
  });
  auto answer = listener->wait(std::chrono::seconds(5), [](const auto& query) {
    const auto it = query.find("state");
    return it != query.end() && it->second == "right";
  });
  browser.join();
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->at("code"), "real");
  EXPECT_EQ(forgedStatus, 400);

  auto only = LoopbackRedirect::open();
  ASSERT_TRUE(only.has_value());
  std::thread forger([&] { (void)send(only->redirectUri() + "?code=evil&state=forged"); });
  auto refused = only->wait(std::chrono::milliseconds(800),
                            [](const auto& query) { return query.count("state") == 0; });
  forger.join();
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kRefused);
  EXPECT_THAT(refused.error().message, ::testing::HasSubstr("another state"));
}

}  // namespace
}  // namespace kaja::core::auth
