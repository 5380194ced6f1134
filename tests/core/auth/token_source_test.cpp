#include "core/auth/token_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "tests/core/auth/fake_auth_server.h"

namespace kaja::core::auth {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace kaja::core::auth::testing;  // NOLINT: the fakes
using namespace std::chrono_literals;

using Headers = std::vector<std::pair<std::string, std::string>>;

OAuthRecord signedInRecord() {
  OAuthRecord record;
  record.accessToken = "old-access";
  record.refreshToken = kRefreshToken;
  record.issuer = kIssuer;
  record.tokenEndpoint = "https://as.example/token";
  record.resource = kServerUrl;
  record.clientId = "client-1";
  record.authMethod = "none";
  record.scope = "mcp:read";
  record.forUrl = kServerUrl;
  return record;
}

// The parts every test of a source needs, in the order they must be destroyed (source first).
struct Harness {
  FakeAuthServer server;
  FakeBrowser browser;
  std::mutex mutex;
  std::vector<OAuthRecord> saved;
  std::shared_ptr<TokenSource> source;

  void start(std::optional<OAuthRecord> record, TokenSource::Options options = {},
             HttpSend send = nullptr) {
    options.onNewTokens = [this](const OAuthRecord& fresh) {
      std::lock_guard lock(mutex);
      saved.push_back(fresh);
    };
    OAuthFlow flow(parsedUrl(kServerUrl), "ability 'fake'", fastSettings(),
                   send ? std::move(send) : server.send(), browser.opener());
    source = TokenSource::make(std::move(flow), std::move(record), std::move(options));
  }
  std::vector<OAuthRecord> savedRecords() {
    std::lock_guard lock(mutex);
    return saved;
  }
  ~Harness() { source.reset(); }
};

// Calls onChallenge and waits for its retry; nullopt when it never came.
std::optional<bool> challenge(TokenSource& source, long status, const std::string& header) {
  auto done = std::make_shared<std::promise<bool>>();
  auto future = done->get_future();
  source.onChallenge(status, header, [done](bool ok) { done->set_value(ok); });
  if (future.wait_for(10s) != std::future_status::ready) return std::nullopt;
  return future.get();
}

std::size_t refreshRequests(const FakeAuthServer& server) {
  std::size_t count = 0;
  for (const auto& request : server.tokenRequests()) {
    if (request.form()["grant_type"] == "refresh_token") ++count;
  }
  return count;
}

TEST(TokenSourceTest, HeadersCarryTheBearerTokenOrNothing) {
  Harness none;
  none.start(std::nullopt);
  EXPECT_TRUE(none.source->headers().empty());

  Harness some;
  some.start(signedInRecord());
  EXPECT_EQ(some.source->headers(), (Headers{{"Authorization", "Bearer old-access"}}));
  EXPECT_TRUE(some.server.requests().empty()) << "a token without expiry is not refreshed";
}

TEST(TokenSourceTest, A401WithARefreshTokenRefreshesOnceAndRetries) {
  Harness h;
  h.server.token = jsonReply(200, {{"access_token", "new-access"}, {"expires_in", 3600}});
  h.start(signedInRecord());
  auto retried = challenge(*h.source, 401, "Bearer error=\"invalid_token\"");
  ASSERT_TRUE(retried.has_value()) << "retry was never called";
  EXPECT_TRUE(*retried);
  EXPECT_EQ(refreshRequests(h.server), 1u);
  EXPECT_EQ(h.server.tokenRequests().size(), 1u);
  EXPECT_TRUE(h.browser.opened.empty()) << "a refresh is enough; no sign-in";
  EXPECT_EQ(h.source->headers(), (Headers{{"Authorization", "Bearer new-access"}}));
  auto saved = h.savedRecords();
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved[0].accessToken, "new-access");
  EXPECT_EQ(saved[0].refreshToken, kRefreshToken) << "the old refresh token is kept";
  EXPECT_EQ(saved[0].forUrl, kServerUrl);
  EXPECT_EQ(h.source->lastError(), "");
}

TEST(TokenSourceTest, ChallengesSeenTogetherRefreshOnce) {
  Harness h;
  h.server.token = jsonReply(200, {{"access_token", "new-access"}});
  // The token endpoint answers once every challenge is in, as when four requests sent with
  // the old token are all refused before the first refresh ends.
  std::promise<void> open;
  std::shared_future<void> gate = open.get_future().share();
  h.start(signedInRecord(), {}, [&h, gate](net::HttpRequest request) {
    gate.wait();
    return h.server.handle(std::move(request));
  });
  std::vector<std::shared_ptr<std::promise<bool>>> done;
  std::vector<std::future<bool>> futures;
  for (int i = 0; i < 4; ++i) {
    done.push_back(std::make_shared<std::promise<bool>>());
    futures.push_back(done.back()->get_future());
    h.source->onChallenge(401, "Bearer", [p = done.back()](bool ok) { p->set_value(ok); });
  }
  open.set_value();
  for (auto& future : futures) {
    ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
    EXPECT_TRUE(future.get());
  }
  EXPECT_EQ(refreshRequests(h.server), 1u) << "each request that saw the old token refreshed";
  EXPECT_EQ(h.savedRecords().size(), 1u);
}

TEST(TokenSourceTest, A403WithoutInsufficientScopeDoesNotSignIn) {
  for (const std::string& header :
       {std::string(""), std::string("Bearer error=\"invalid_token\""),
        std::string("Bearer error=\"insufficient_scope_x\""), std::string("Basic realm=\"x\""),
        std::string("Bearer scope=\"admin\"")}) {
    Harness h;
    TokenSource::Options options;
    options.signInOnChallenge = true;
    h.start(signedInRecord(), options);
    auto retried = challenge(*h.source, 403, header);
    ASSERT_TRUE(retried.has_value()) << header;
    EXPECT_FALSE(*retried) << header;
    EXPECT_TRUE(h.server.requests().empty()) << header;
    EXPECT_TRUE(h.browser.opened.empty()) << header;
    EXPECT_TRUE(h.savedRecords().empty()) << header;
    EXPECT_EQ(h.source->record()->accessToken, "old-access");
  }
}

TEST(TokenSourceTest, A403AskingForScopeSignsInWithoutRefreshing) {
  Harness h;
  TokenSource::Options options;
  options.signInOnChallenge = true;
  h.start(signedInRecord(), options);
  auto retried = challenge(*h.source, 403,
                           "Bearer error=\"insufficient_scope\", scope=\"mcp:write\", "
                           "resource_metadata=\"https://mcp.example/.well-known/"
                           "oauth-protected-resource/mcp\"");
  ASSERT_TRUE(retried.has_value());
  EXPECT_TRUE(*retried) << h.source->lastError();
  EXPECT_EQ(refreshRequests(h.server), 0u) << "a refresh cannot add scopes";
  ASSERT_EQ(h.browser.queries.size(), 1u);
  EXPECT_THAT(h.browser.queries[0]["scope"], HasSubstr("mcp:write"));
  EXPECT_THAT(h.browser.queries[0]["scope"], HasSubstr("mcp:read"));
  EXPECT_EQ(h.source->record()->accessToken, kAccessToken);
  EXPECT_EQ(h.source->record()->forUrl, kServerUrl);
}

TEST(TokenSourceTest, MaxSignInsCapsSignIns) {
  Harness h;
  h.browser.openResult = fail(ErrorCode::kSpawn, "no browser here");
  TokenSource::Options options;
  options.signInOnChallenge = true;
  options.maxSignIns = 2;
  h.start(std::nullopt, options);
  for (int i = 0; i < 5; ++i) {
    auto retried = challenge(*h.source, 401, "");
    ASSERT_TRUE(retried.has_value()) << i;
    EXPECT_FALSE(*retried) << i;
  }
  EXPECT_EQ(h.browser.opened.size(), 2u);
  EXPECT_TRUE(h.server.tokenRequests().empty());
  EXPECT_THAT(h.source->lastError(), HasSubstr("no browser here"));
  EXPECT_TRUE(h.source->headers().empty());
}

TEST(TokenSourceTest, WithoutSignInOnChallengeNoBrowserIsEverOpened) {
  Harness h;
  h.start(std::nullopt);
  auto retried = challenge(*h.source, 401, "Bearer");
  ASSERT_TRUE(retried.has_value());
  EXPECT_FALSE(*retried);
  EXPECT_TRUE(h.browser.opened.empty());
  EXPECT_TRUE(h.server.requests().empty());
  EXPECT_EQ(h.source->lastError(), "the server refused the token and it cannot be refreshed");
}

TEST(TokenSourceTest, RefusedRefreshKeepsNothingNewAndNamesTheError) {
  Harness h;
  h.server.token = jsonReply(400, {{"error", "invalid_grant"}});
  h.start(signedInRecord());
  auto retried = challenge(*h.source, 401, "Bearer error=\"invalid_token\"");
  ASSERT_TRUE(retried.has_value());
  EXPECT_FALSE(*retried);
  EXPECT_EQ(refreshRequests(h.server), 1u);
  EXPECT_TRUE(h.savedRecords().empty()) << "nothing is stored after a refused refresh";
  EXPECT_EQ(h.source->lastError(), "the token endpoint refused the refresh token: invalid_grant");
  expectNoSecrets(h.source->lastError(), {"old-access"});
  ASSERT_TRUE(h.source->record().has_value());
  EXPECT_EQ(h.source->record()->accessToken, "old-access");
  EXPECT_EQ(h.source->record()->refreshToken, kRefreshToken);
}

TEST(TokenSourceTest, RefreshAnswerWithAnInjectingTokenIsNotUsed) {
  Harness h;
  h.server.token = jsonReply(200, {{"access_token", "new\r\nX-Evil: 1"}});
  h.start(signedInRecord());
  auto retried = challenge(*h.source, 401, "Bearer");
  ASSERT_TRUE(retried.has_value());
  EXPECT_FALSE(*retried);
  EXPECT_TRUE(h.savedRecords().empty());
  for (const auto& [name, value] : h.source->headers()) {
    EXPECT_EQ(value.find('\r'), std::string::npos);
    EXPECT_EQ(value.find('\n'), std::string::npos);
  }
  EXPECT_THAT(h.source->lastError(), Not(HasSubstr("X-Evil")));
}

TEST(TokenSourceTest, RefusedRefreshFallsBackToOneSignIn) {
  Harness h;
  h.server.token = jsonReply(400, {{"error", "invalid_grant"}});
  TokenSource::Options options;
  options.signInOnChallenge = true;
  h.start(signedInRecord(), options);
  auto retried = challenge(*h.source, 401, "Bearer error=\"invalid_token\"");
  ASSERT_TRUE(retried.has_value());
  // The fake refuses every token request, the sign-in's code too: one sign-in, then failure.
  EXPECT_FALSE(*retried);
  EXPECT_EQ(refreshRequests(h.server), 1u);
  EXPECT_EQ(h.browser.opened.size(), 1u);
  EXPECT_TRUE(h.savedRecords().empty());
  EXPECT_EQ(h.source->lastError(), "the token endpoint refused the sign-in's code: invalid_grant");
}

// A token near its expiry is refreshed once, before the connection starts (attach), and
// the plan starts with the new one; sending headers never starts a refresh of its own, which
// a short-lived kaja could leave half done (a rotated refresh token spent, nothing saved).
TEST(TokenSourceTest, NearExpiryIsRefreshedOnceWhenTheConnectionStarts) {
  Harness h;
  h.server.token = jsonReply(200, {{"access_token", "new-access"}, {"expires_in", 3600}});
  OAuthRecord record = signedInRecord();
  record.expiresAt = static_cast<std::int64_t>(std::time(nullptr)) + 10;  // within the margin
  h.start(record);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(h.source->headers(), (Headers{{"Authorization", "Bearer old-access"}}));
  }
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(refreshRequests(h.server), 0u) << "headers() started a refresh";
  RemotePlan plan;
  h.source->attach(plan);
  EXPECT_EQ(refreshRequests(h.server), 1u);
  EXPECT_EQ(plan.headers, (Headers{{"Authorization", "Bearer new-access"}}));
  ASSERT_TRUE(plan.freshHeaders);
  EXPECT_EQ(plan.freshHeaders(), (Headers{{"Authorization", "Bearer new-access"}}));
  RemotePlan again;
  h.source->attach(again);
  EXPECT_EQ(refreshRequests(h.server), 1u) << "the new token is not due";
}

TEST(TokenSourceTest, ExpiredTokenWithoutRefreshTokenIsNotRefreshed) {
  Harness h;
  OAuthRecord record = signedInRecord();
  record.refreshToken.clear();
  record.expiresAt = 1;
  h.start(record);
  EXPECT_EQ(h.source->headers(), (Headers{{"Authorization", "Bearer old-access"}}));
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(h.server.requests().empty());
}

TEST(TokenSourceTest, SourceDroppedWhileAChallengeIsUnderWayDoesNotCrash) {
  auto server = std::make_shared<FakeAuthServer>();
  FakeBrowser browser;
  std::atomic<bool> entered{false};
  HttpSend slow = [server, &entered](net::HttpRequest request) {
    entered = true;
    std::this_thread::sleep_for(200ms);
    return server->handle(std::move(request));
  };
  OAuthFlow flow(parsedUrl(kServerUrl), "ability 'fake'", fastSettings(), slow, browser.opener());
  auto source = TokenSource::make(std::move(flow), signedInRecord(), {});
  auto done = std::make_shared<std::promise<bool>>();
  auto future = done->get_future();
  source->onChallenge(401, "Bearer", [done](bool ok) { done->set_value(ok); });
  while (!entered) std::this_thread::sleep_for(1ms);
  source.reset();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(future.get());
}

}  // namespace
}  // namespace kaja::core::auth
