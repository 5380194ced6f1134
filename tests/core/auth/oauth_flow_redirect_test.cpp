// The redirect half of a sign-in: what kaja accepts as the authorization server's answer
// (RFC 6749 §4.1.2, RFC 9207), delivered to its real loopback listener by a fake browser.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "core/auth/oauth_flow.h"
#include "tests/core/auth/fake_auth_server.h"

namespace kaja::core::auth {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace kaja::core::auth::testing;  // NOLINT: the fakes
using Query = std::map<std::string, std::string>;

// Signs in with a browser that answers `answer(query)`; returns the error, checked to hold
// no secret, and checks that no code reached the token endpoint.
Error redirectRefused(FakeAuthServer& server, FakeBrowser& browser,
                      ClientSettings settings = fastSettings()) {
  auto flow = makeFlow(server, browser, std::move(settings));
  auto record = flow.signIn(401, "");
  browser.join();
  EXPECT_FALSE(record.has_value()) << "signed in although it should not have";
  if (record) return Error{};
  std::vector<std::string> made;
  for (const auto& query : browser.queries) {
    made.push_back(query.count("state") ? query.at("state") : "");
  }
  expectNoSecrets(record.error().message, made);
  EXPECT_TRUE(server.tokenRequests().empty()) << "a refused answer's code was still redeemed";
  EXPECT_EQ(browser.opened.size(), 1u);
  return record.error();
}

std::string approved(const Query& query) {
  return "code=" + percentEncode(kCode) + "&state=" + percentEncode(query.at("state"));
}

TEST(OAuthFlowRedirectTest, WrongStateIsRefused) {
  const std::vector<std::function<std::string(const Query&)>> answers = {
      [](const Query&) { return "code=" + std::string(kCode) + "&state=attacker"; },
      [](const Query&) { return "code=" + std::string(kCode); },
      [](const Query&) { return "code=" + std::string(kCode) + "&state="; },
      [](const Query&) { return "code=" + std::string(kCode) + "&state"; },
      // One character off, at the end and at the start.
      [](const Query& q) {
        std::string state = q.at("state");
        state.back() = state.back() == 'A' ? 'B' : 'A';
        return "code=" + std::string(kCode) + "&state=" + state;
      },
      [](const Query& q) {
        std::string state = q.at("state");
        state.front() = state.front() == 'A' ? 'B' : 'A';
        return "code=" + std::string(kCode) + "&state=" + state;
      },
      // A prefix, an extension, another case.
      [](const Query& q) {
        return "code=" + std::string(kCode) + "&state=" + q.at("state").substr(0, 31);
      },
      [](const Query& q) { return "code=" + std::string(kCode) + "&state=" + q.at("state") + "x"; },
      [](const Query& q) {
        std::string state = q.at("state");
        for (auto& c : state) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        return "code=" + std::string(kCode) + "&state=" + state +
               (state == q.at("state") ? "!" : "");
      },
      // The right state only as a second value: the first one counts.
      [](const Query& q) {
        return "code=" + std::string(kCode) + "&state=attacker&state=" + q.at("state");
      },
      // With a NUL after it.
      [](const Query& q) {
        return "code=" + std::string(kCode) + "&state=" + q.at("state") + "%00";
      },
  };
  for (std::size_t i = 0; i < answers.size(); ++i) {
    FakeAuthServer server;
    FakeBrowser browser;
    browser.answer = [&](const Query& query) { return std::optional(answers[i](query)); };
    // An answer with another state is turned away and the wait goes on, so the sign-in ends
    // when the person's time runs out.
    ClientSettings settings = fastSettings();
    settings.approveTimeout = std::chrono::milliseconds(700);
    Error error = redirectRefused(server, browser, settings);
    EXPECT_EQ(error.code, ErrorCode::kRefused) << i;
    EXPECT_EQ(error.message,
              "the sign-in's answer carried another state than kaja sent, so it may be someone "
              "else's; nothing was saved, run the command again")
        << i;
  }
}

TEST(OAuthFlowRedirectTest, RightStateFirstIsAccepted) {
  FakeAuthServer server;
  FakeBrowser browser;
  browser.answer = [](const Query& query) {
    return std::optional(approved(query) + "&state=attacker&code=other");
  };
  auto flow = makeFlow(server, browser);
  auto record = flow.signIn(401, "");
  ASSERT_TRUE(record.has_value()) << record.error().message;
  ASSERT_EQ(server.tokenRequests().size(), 1u);
  EXPECT_EQ(server.tokenRequests()[0].form()["code"], kCode);
}

TEST(OAuthFlowRedirectTest, UnexpectedIssIsRefused) {
  for (const char* iss : {"https://evil.example", "https://as.example/", "https://AS.example",
                          "https://as.example:443", "https://as%2Eexample", "",
                          " https://as.example", "https://as.example\x1b[0m"}) {
    for (const bool advertised : {false, true}) {
      FakeAuthServer server;
      server.metadata["authorization_response_iss_parameter_supported"] = advertised;
      FakeBrowser browser;
      const std::string encoded = percentEncode(iss);
      browser.answer = [&](const Query& query) {
        return std::optional(approved(query) + "&iss=" + encoded);
      };
      Error error = redirectRefused(server, browser);
      EXPECT_EQ(error.code, ErrorCode::kRefused) << iss;
      EXPECT_THAT(error.message, HasSubstr("the sign-in's answer names the issuer")) << iss;
      EXPECT_THAT(error.message, HasSubstr("rather than \"https://as.example\"")) << iss;
      EXPECT_THAT(error.message, HasSubstr("nothing was saved")) << iss;
      EXPECT_THAT(error.message, Not(HasSubstr("\x1b"))) << iss;
    }
  }
}

TEST(OAuthFlowRedirectTest, MissingIssIsRefusedWhenAdvertised) {
  FakeAuthServer server;
  server.metadata["authorization_response_iss_parameter_supported"] = true;
  FakeBrowser browser;
  Error error = redirectRefused(server, browser);
  EXPECT_EQ(error.code, ErrorCode::kRefused);
  EXPECT_EQ(error.message,
            "the sign-in's answer has no iss although https://as.example promises one, so it was "
            "refused; nothing was saved");
}

TEST(OAuthFlowRedirectTest, RightIssIsAcceptedAndMissingIssWhenNotAdvertised) {
  for (const bool withIss : {true, false}) {
    FakeAuthServer server;
    server.metadata["authorization_response_iss_parameter_supported"] = withIss;
    FakeBrowser browser;
    browser.answer = [&](const Query& query) {
      return std::optional(approved(query) + (withIss ? "&iss=https%3A%2F%2Fas.example" : ""));
    };
    auto flow = makeFlow(server, browser);
    auto record = flow.signIn(401, "");
    ASSERT_TRUE(record.has_value()) << record.error().message;
    EXPECT_EQ(record->accessToken, kAccessToken);
  }
}

TEST(OAuthFlowRedirectTest, AccessDeniedDescriptionIsEscaped) {
  FakeAuthServer server;
  FakeBrowser browser;
  const std::string description =
      "\x1b[31mYour account is locked\x1b[0m\r\nkaja: signed in as admin\x07\x08\x9b\xe2\x80\xae";
  browser.answer = [&](const Query& query) {
    return std::optional("error=access_denied&error_description=" + percentEncode(description) +
                         "&state=" + percentEncode(query.at("state")));
  };
  Error error = redirectRefused(server, browser);
  EXPECT_EQ(error.code, ErrorCode::kRefused);
  EXPECT_THAT(error.message,
              HasSubstr("the authorization server refused the sign-in: access_denied ("));
  EXPECT_THAT(error.message, HasSubstr("\\u001b[31mYour account is locked"));
  EXPECT_THAT(error.message, HasSubstr("\\r\\n"));
  for (const char bad : {'\x1b', '\r', '\n', '\x07', '\x08'}) {
    EXPECT_EQ(error.message.find(bad), std::string::npos) << static_cast<int>(bad);
  }
  EXPECT_THAT(error.message, Not(HasSubstr("\xe2\x80\xae"))) << "a bidi override";
  EXPECT_THAT(error.message, Not(HasSubstr("\x9b"))) << "a raw C1 CSI byte";
}

TEST(OAuthFlowRedirectTest, HostileErrorCodeIsEscapedAndLongDescriptionCut) {
  FakeAuthServer server;
  FakeBrowser browser;
  browser.answer = [&](const Query& query) {
    return std::optional("error=" + percentEncode("x\x1b]0;title\x07") + "&error_description=" +
                         std::string(4000, 'd') + "&state=" + percentEncode(query.at("state")));
  };
  Error error = redirectRefused(server, browser);
  EXPECT_EQ(error.code, ErrorCode::kRefused);
  EXPECT_THAT(error.message, HasSubstr("x\\u001b]0;title\\u0007"));
  EXPECT_LT(error.message.size(), 600u) << "a server's description is cut";
}

TEST(OAuthFlowRedirectTest, ErrorWithAWrongStateIsAStateError) {
  FakeAuthServer server;
  FakeBrowser browser;
  browser.answer = [](const Query&) { return std::optional<std::string>("error=access_denied"); };
  Error error = redirectRefused(server, browser);
  EXPECT_EQ(error.code, ErrorCode::kRefused);
  EXPECT_THAT(error.message, HasSubstr("another state than kaja sent"));
}

TEST(OAuthFlowRedirectTest, ErrorWinsOverACode) {
  FakeAuthServer server;
  FakeBrowser browser;
  browser.answer = [](const Query& query) {
    return std::optional(approved(query) + "&error=access_denied");
  };
  Error error = redirectRefused(server, browser);
  EXPECT_EQ(error.code, ErrorCode::kRefused);
  EXPECT_EQ(error.message, "the authorization server refused the sign-in: access_denied");
}

TEST(OAuthFlowRedirectTest, MissingOrEmptyCodeIsAProtocolError) {
  for (const std::string extra : {"", "&code=", "&code"}) {
    FakeAuthServer server;
    FakeBrowser browser;
    browser.answer = [&](const Query& query) {
      return std::optional("state=" + percentEncode(query.at("state")) + extra);
    };
    Error error = redirectRefused(server, browser);
    EXPECT_EQ(error.code, ErrorCode::kProtocol) << extra;
    EXPECT_EQ(error.message, "the sign-in's answer has no code; run the command again") << extra;
  }
}

TEST(OAuthFlowRedirectTest, NoAnswerTimesOut) {
  FakeAuthServer server;
  FakeBrowser browser;
  browser.answer = [](const Query&) { return std::optional<std::string>(); };
  ClientSettings settings = fastSettings();
  settings.approveTimeout = std::chrono::seconds(1);
  auto flow = makeFlow(server, browser, settings);
  const auto start = std::chrono::steady_clock::now();
  auto record = flow.signIn(401, "");
  ASSERT_FALSE(record.has_value());
  EXPECT_EQ(record.error().code, ErrorCode::kTimeout);
  EXPECT_THAT(record.error().message, HasSubstr("no answer reached http://127.0.0.1:"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  EXPECT_TRUE(server.tokenRequests().empty());
}

TEST(OAuthFlowRedirectTest, BrowserThatCannotOpenEndsTheSignIn) {
  FakeAuthServer server;
  FakeBrowser browser;
  browser.openResult = fail(ErrorCode::kSpawn, "xdg-open is not installed");
  auto flow = makeFlow(server, browser);
  const auto start = std::chrono::steady_clock::now();
  auto record = flow.signIn(401, "");
  ASSERT_FALSE(record.has_value());
  EXPECT_EQ(record.error().code, ErrorCode::kSpawn);
  EXPECT_EQ(record.error().message, "xdg-open is not installed");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2))
      << "it did not wait for a redirect that cannot come";
  EXPECT_TRUE(server.tokenRequests().empty());
}

TEST(OAuthFlowRedirectTest, TheAuthorizationUrlCarriesNoSecret) {
  FakeAuthServer server;
  server.registration = jsonReply(201, {{"client_id", "client-1"},
                                        {"client_secret", kClientSecret},
                                        {"token_endpoint_auth_method", "client_secret_basic"}});
  FakeBrowser browser;
  auto flow = makeFlow(server, browser);
  auto record = flow.signIn(401, "");
  ASSERT_TRUE(record.has_value()) << record.error().message;
  ASSERT_EQ(browser.opened.size(), 1u);
  EXPECT_THAT(browser.opened[0], Not(HasSubstr(kClientSecret)));
  const auto tokens = server.tokenRequests();
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_THAT(browser.opened[0], Not(HasSubstr(tokens[0].form()["code_verifier"])))
      << "the verifier went to the browser";
}

}  // namespace
}  // namespace kaja::core::auth
