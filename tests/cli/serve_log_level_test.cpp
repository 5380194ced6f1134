// Log messages through `kaja serve --http` from a server kaja speaks 2026-07-28 to (the
// conformance reference server): each client gets the messages it asked for, and no other.
// A 2026-07-28 client names a level in each request's _meta; a 2025 client sets one for its
// session with logging/setLevel. One client's level must not bring log messages to another
// client's calls, which is how a gateway with one connection per server could leak them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "tests/cli/serve_test_support.h"
#include "tests/core/server/http_client.h"
#include "tests/support/build_paths.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using testing::eventually;
using Headers = std::vector<std::pair<std::string, std::string>>;

const std::string kReference =
    std::string(kaja::test::sourceDir()) + "/tests/servers/conformance_server.mjs";
const char* const kLogLevel = "io.modelcontextprotocol/logLevel";

/// `kaja serve --http` in front of the reference server, as ability "ref", with helpers to
/// speak to it as 2026-07-28 and 2025-11-25 clients.
class ServeHttpTest : public ::testing::Test {
 protected:
  /// Starts the gateway; `legacyOnly` makes the server speak 2025-11-25 alone.
  void start(bool legacyOnly, const std::string& more = "") {
    env_.root.write("market/abilities/ref/mcp.toml", "command = \"node\"\nargs = [\"" + kReference +
                                                         "\", \"stdio\"" +
                                                         (legacyOnly ? ", \"--legacy-only\"" : "") +
                                                         "]\napproval = \"never\"\n" + more);
    env_.root.write("market/personas/logs.toml", "abilities = [\"ref\"]\n");
    kaja_ = env_.serve({"--persona", "logs", "--http", "127.0.0.1:0"});
    port_ = env_.httpPort("logs");
  }

  /// `message` as a POST to /mcp with `headers` and those every POST carries.
  static std::string post(const json& message, Headers headers) {
    headers.emplace_back("Accept", "application/json, text/event-stream");
    headers.emplace_back("Content-Type", "application/json");
    return testing::httpRequest("POST", message.dump(), headers);
  }

  testing::HttpReply send(const json& message, Headers headers) {
    testing::RawHttp http(port_);
    if (!http.connected()) return {};
    http.write(post(message, std::move(headers)));
    return http.readResponse(60);
  }

  /// One 2026-07-28 tools/call of the logging tool, naming `level` in its _meta when given.
  testing::HttpReply call2026(const std::optional<std::string>& level) {
    json meta = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                 {"io.modelcontextprotocol/clientCapabilities", json::object()},
                 {"io.modelcontextprotocol/clientInfo", {{"name", "t"}, {"version", "1"}}}};
    if (level) meta[kLogLevel] = *level;
    const json message = {
        {"jsonrpc", "2.0"},
        {"id", 1},
        {"method", "tools/call"},
        {"params", {{"name", "ref__test_tool_with_logging"}, {"arguments", {}}, {"_meta", meta}}}};
    return send(message, {{"MCP-Protocol-Version", "2026-07-28"},
                          {"Mcp-Method", "tools/call"},
                          {"Mcp-Name", "ref__test_tool_with_logging"}});
  }

  /// A 2025-11-25 session: initialize and initialized; returns its Mcp-Session-Id.
  std::string open2025() {
    const json initialize = {{"jsonrpc", "2.0"},
                             {"id", 1},
                             {"method", "initialize"},
                             {"params",
                              {{"protocolVersion", "2025-11-25"},
                               {"capabilities", json::object()},
                               {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}};
    const std::string session = send(initialize, {}).header("mcp-session-id");
    if (!session.empty()) {
      send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, headers2025(session));
    }
    return session;
  }

  static Headers headers2025(const std::string& session) {
    return {{"Mcp-Session-Id", session}, {"MCP-Protocol-Version", "2025-11-25"}};
  }

  /// Sends a 2025 request on a connection of its own and does not wait: the answer is read
  /// from the connection returned (nullptr when it could not be sent).
  std::unique_ptr<testing::RawHttp> start2025(const std::string& session, const std::string& method,
                                              const json& params, int id) {
    auto http = std::make_unique<testing::RawHttp>(port_);
    const json message = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
    if (!http->connected() || !http->write(post(message, headers2025(session)))) return nullptr;
    return http;
  }

  /// Ends a 2025 session with DELETE; returns the HTTP status (0 with no answer).
  int delete2025(const std::string& session) {
    testing::RawHttp http(port_);
    if (!http.connected()) return 0;
    http.write(testing::httpRequest("DELETE", "", headers2025(session)));
    return http.readResponse(10).status;
  }

  testing::HttpReply request2025(const std::string& session, const std::string& method,
                                 const json& params, int id) {
    return send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}},
                headers2025(session));
  }

  /// The answer a reply carried: its JSON body, or its last event when it came as a stream
  /// (a discarded value when neither reads as JSON).
  static json answerOf(const testing::HttpReply& reply) {
    return reply.events.empty() ? json::parse(reply.body, nullptr, false) : reply.events.back();
  }

  /// The log messages a reply carried, and whether the call itself succeeded.
  static int logsIn(const testing::HttpReply& reply, bool* answered = nullptr) {
    int logs = 0;
    for (const auto& event : reply.events) {
      if (event.value("method", "") == "notifications/message") ++logs;
      if (answered != nullptr && event.contains("result")) *answered = true;
    }
    const json body = json::parse(reply.body, nullptr, false);
    if (answered != nullptr && body.is_object() && body.contains("result")) *answered = true;
    return logs;
  }

  testing::ServeFixture env_;
  std::unique_ptr<testing::ServeProcess> kaja_;
  int port_ = 0;
};

class ServeLogLevelTest : public ServeHttpTest {
 protected:
  void SetUp() override { start(false); }
};

/// The reference server speaking 2025-11-25 only.
class ServeLegacyLogLevelTest : public ServeHttpTest {
 protected:
  void SetUp() override { start(true); }
};

/// The 2025-11-25 reference server, stopped after 2 s unused.
class ServeIdleLogLevelTest : public ServeHttpTest {
 protected:
  void SetUp() override { start(true, "idleTimeout = 2\n"); }
};

TEST_F(ServeLogLevelTest, EachClientGetsTheLogMessagesItAskedForAndNoOther) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  bool answered = false;
  // A 2026-07-28 request that names no level gets no log messages; one that names info gets
  // the tool's three; one that names error gets none of its info messages.
  EXPECT_EQ(logsIn(call2026(std::nullopt), &answered), 0);
  EXPECT_TRUE(answered);
  EXPECT_EQ(logsIn(call2026("info")), 3);
  answered = false;
  EXPECT_EQ(logsIn(call2026("error"), &answered), 0);
  EXPECT_TRUE(answered);

  // A 2025 session that sets debug gets them on its calls.
  const std::string chatty = open2025();
  ASSERT_FALSE(chatty.empty()) << env_.serveErrors();
  const auto set = request2025(chatty, "logging/setLevel", {{"level", "debug"}}, 2);
  EXPECT_EQ(set.status, 200) << set.body;
  const json call = {{"name", "ref__test_tool_with_logging"}, {"arguments", json::object()}};
  EXPECT_EQ(logsIn(request2025(chatty, "tools/call", call, 3)), 3);

  // Its level is its own: not another 2025 session's, nor a 2026-07-28 client's.
  const std::string quiet = open2025();
  ASSERT_FALSE(quiet.empty());
  answered = false;
  EXPECT_EQ(logsIn(request2025(quiet, "tools/call", call, 2), &answered), 0);
  EXPECT_TRUE(answered);
  answered = false;
  EXPECT_EQ(logsIn(call2026(std::nullopt), &answered), 0);
  EXPECT_TRUE(answered);

  // A level that is none of the eight is refused, and the session's level stays.
  const auto bad = request2025(chatty, "logging/setLevel", {{"level", "loud"}}, 4);
  const json refused = bad.events.empty() ? json::parse(bad.body, nullptr, false) : bad.events[0];
  ASSERT_TRUE(refused.is_object()) << bad.body;
  EXPECT_EQ(refused["error"].value("code", 0), -32602) << refused.dump();
  EXPECT_EQ(logsIn(request2025(chatty, "tools/call", call, 5)), 3);
}

// Found by an outside review: with calls of several clients running on one server at once,
// every one of them got the others' log messages, whatever level it asked for. A server names
// no request in a log message, so while calls of several clients run there, kaja gives it to
// none of them.
TEST_F(ServeLogLevelTest, ConcurrentCallsOfSeveralClientsDoNotShareLogMessages) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  const std::string errorOnly = open2025();
  ASSERT_FALSE(errorOnly.empty()) << env_.serveErrors();
  ASSERT_EQ(request2025(errorOnly, "logging/setLevel", {{"level", "error"}}, 2).status, 200);
  const json call = {{"name", "ref__test_tool_with_logging"}, {"arguments", json::object()}};
  int asked = 0;
  int unasked = 0;
  int errorLevel = 0;
  for (int round = 0; round < 5; ++round) {
    testing::HttpReply x;
    testing::HttpReply y;
    testing::HttpReply z;
    std::thread first([&] { x = call2026("info"); });
    std::thread second([&] { y = call2026(std::nullopt); });
    std::thread third([&] { z = request2025(errorOnly, "tools/call", call, 10 + round); });
    first.join();
    second.join();
    third.join();
    asked += logsIn(x);
    unasked += logsIn(y);
    errorLevel += logsIn(z);
  }
  EXPECT_EQ(unasked, 0) << "a client that asked for no log messages got some";
  EXPECT_EQ(errorLevel, 0) << "a client that asked for errors only got info messages";
  // The client that asked gets at most its own three a round (none while others' calls run).
  EXPECT_LE(asked, 15);
}

// A 2026-07-28 request naming a level that is none of the eight is refused, as a 2025 client's
// logging/setLevel is, rather than losing its log messages without a word.
TEST_F(ServeLogLevelTest, AnUnknownLevelInARequestIsRefused) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  for (const json& level : {json("bogus"), json("INFO"), json(""), json(5), json::object()}) {
    json meta = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                 {"io.modelcontextprotocol/clientCapabilities", json::object()},
                 {"io.modelcontextprotocol/clientInfo", {{"name", "t"}, {"version", "1"}}},
                 {kLogLevel, level}};
    const json message = {
        {"jsonrpc", "2.0"}, {"id", 3}, {"method", "tools/list"}, {"params", {{"_meta", meta}}}};
    const auto reply =
        send(message, {{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "tools/list"}});
    const json body = answerOf(reply);
    ASSERT_TRUE(body.is_object()) << reply.body;
    EXPECT_EQ(body["error"].value("code", 0), -32602) << level.dump() << " " << body.dump();
  }
}

// Found by a review: a 2025-11-25 server has one log level for kaja's one connection, and
// each client's logging/setLevel was passed on, so the last one chosen held for everyone: a
// client that asked for debug got nothing below the error another chose later. kaja tells
// the server the most talkative level of its live clients, and hands each client only what
// it asked for.
TEST_F(ServeLegacyLogLevelTest, TheServerGetsTheLowestLevelOfTheLiveClients) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  const std::string chatty = open2025();
  const std::string quiet = open2025();
  ASSERT_FALSE(chatty.empty() || quiet.empty()) << env_.serveErrors();
  auto serverLevel = [&](int id) {
    const json call = {{"name", "ref__test_log_level"}, {"arguments", json::object()}};
    const json body = answerOf(request2025(quiet, "tools/call", call, id));
    return body.is_object() && body.contains("result")
               ? body["result"]["content"][0].value("text", "")
               : "no answer: " + body.dump();
  };
  ASSERT_EQ(request2025(chatty, "logging/setLevel", {{"level", "debug"}}, 2).status, 200);
  ASSERT_EQ(request2025(quiet, "logging/setLevel", {{"level", "error"}}, 2).status, 200);
  EXPECT_EQ(serverLevel(3), "debug");
  ASSERT_EQ(request2025(chatty, "logging/setLevel", {{"level", "warning"}}, 3).status, 200);
  EXPECT_EQ(serverLevel(4), "warning");
  // Once the talkative client is gone, the server may say less.
  const int deleted = delete2025(chatty);
  EXPECT_TRUE(deleted >= 200 && deleted < 300) << deleted;
  std::string now;
  EXPECT_TRUE(eventually(
      [&, id = 5]() mutable {
        now = serverLevel(id++);
        return now == "error";
      },
      10))
      << now;
}

// Found by an outside review: resources/read of a file: URI was passed to the server
// whatever it named, so a client (or a model given a resource-reading tool) read kaja's
// secrets.toml through a server whose root held kaja's folders. kaja refuses a file: URI
// that lands in its own folders, in any spelling, before any server sees it.
TEST_F(ServeLegacyLogLevelTest, AResourceReadOfKajasOwnFilesIsRefusedInEverySpelling) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  env_.root.write("config/kaja/secrets.toml", "[keys]\nx = \"secret\"\n");
  const std::string config = env_.root.path() + "/config/kaja";
  const std::string session = open2025();
  ASSERT_FALSE(session.empty()) << env_.serveErrors();
  const std::string base = env_.root.path() + "/config";
  int id = 2;
  for (const std::string& uri :
       {"file://" + config + "/secrets.toml", "file://localhost" + config + "/secrets.toml",
        "FILE://" + config + "/secrets.toml", "file://" + base + "/%6baja/secrets.toml",
        "file://" + config + "/../kaja/./secrets.toml", "file:" + config + "/secrets.toml",
        "file://" + base + "/KAJA/secrets.toml", "file://" + config,
        "file://" + env_.root.path() + "/data/kaja/audit.jsonl"}) {
    const auto reply = request2025(session, "resources/read", {{"uri", uri}}, id++);
    const json body = answerOf(reply);
    ASSERT_TRUE(body.is_object()) << uri << ": " << reply.body;
    EXPECT_EQ(body.value("error", json::object()).value("code", 0), -32602) << uri << body.dump();
    EXPECT_THAT(body.dump(), ::testing::HasSubstr("K15 kaja's own files")) << uri;
    EXPECT_THAT(body.dump(), ::testing::Not(::testing::HasSubstr("secret\\\""))) << uri;
  }
  // Any other file: URI is the server's to answer.
  const json other =
      answerOf(request2025(session, "resources/read", {{"uri", "file:///etc/hostname"}}, id++));
  EXPECT_THAT(other.dump(), ::testing::Not(::testing::HasSubstr("K15 kaja's own files")));
}

// Found by an outside review: a prompt's arguments went to the server unread, so a prompt
// that reads the file it is given (as many embed a resource) handed out kaja's secrets.
// Every argument that reads as a path is checked; so is a resource to follow.
TEST_F(ServeLegacyLogLevelTest, PromptArgumentsAndSubscriptionsNamingKajasOwnFilesAreRefused) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  env_.root.write("config/kaja/secrets.toml", "[keys]\nx = \"secret\"\n");
  env_.root.write("home/proj/notes.txt", "mine");
  const std::string config = env_.root.path() + "/config/kaja";
  const std::string session = open2025();
  ASSERT_FALSE(session.empty()) << env_.serveErrors();
  int id = 2;
  const auto refusedWith = [&](const std::string& method, const json& params) {
    const json body = answerOf(request2025(session, method, params, id++));
    return body.value("error", json::object()).value("code", 0) == -32602 &&
           body.dump().find("K15 kaja's own files") != std::string::npos;
  };
  const json secretUris = {"file://" + config + "/secrets.toml",
                           "file://" + env_.root.path() + "/config/%4BAJA/secrets.toml"};
  for (const auto& uri : secretUris) {
    EXPECT_TRUE(refusedWith("prompts/get", {{"name", "ref__test_prompt_with_embedded_resource"},
                                            {"arguments", {{"resourceUri", uri}}}}))
        << uri;
    EXPECT_TRUE(refusedWith("resources/subscribe", {{"uri", uri}})) << uri;
  }
  EXPECT_TRUE(refusedWith(
      "prompts/get",
      {{"name", "ref__test_prompt_with_arguments"},
       {"arguments", {{"arg1", "plain"}, {"arg2", config + "/../kaja/secrets.toml"}}}}));
  // Found by a later outside review: fields beside the arguments went to the server as they
  // were, and a tab inside "file:" hid a URI from the check.
  EXPECT_TRUE(refusedWith("prompts/get", {{"name", "ref__test_prompt_with_arguments"},
                                          {"arguments", {{"arg1", "a"}, {"arg2", "b"}}},
                                          {"extra", config + "/secrets.toml"}}));
  EXPECT_TRUE(refusedWith(
      "prompts/get",
      {{"name", "ref__test_prompt_with_arguments"},
       {"arguments", {{"arg1", "fi\tle://" + config + "/secrets.toml"}, {"arg2", "b"}}}}));
  // A prompt naming anything else is the server's to answer.
  const json fine = answerOf(request2025(
      session, "prompts/get",
      {{"name", "ref__test_prompt_with_arguments"},
       {"arguments", {{"arg1", env_.root.path() + "/home/proj/notes.txt"}, {"arg2", "two"}}}},
      id++));
  EXPECT_THAT(fine.dump(), ::testing::HasSubstr("Prompt with arguments")) << fine.dump();
}

// Found by an outside review: a client that went away (here: its session deleted) kept
// kaja's subscriptions to what it followed, which then counted against every other client.
// Once it is gone, kaja unsubscribes from what no other client follows.
class ServeSubscriptionTest : public ServeHttpTest {
 protected:
  void SetUp() override { start(true); }

  /// What the server says it is subscribed to, asked through `session`.
  std::string followed(const std::string& session, int id) {
    const json call = {{"name", "ref__test_subscriptions"}, {"arguments", json::object()}};
    const auto reply = request2025(session, "tools/call", call, id);
    const json body = answerOf(reply);
    if (!body.is_object() || !body.contains("result")) return "no answer: " + reply.body;
    return body["result"]["content"][0].value("text", "");
  }
};

TEST_F(ServeSubscriptionTest, ASessionThatEndsReleasesWhatOnlyItFollowed) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  const std::string leaving = open2025();
  const std::string staying = open2025();
  ASSERT_FALSE(leaving.empty() || staying.empty()) << env_.serveErrors();
  // The resources are listed first, so that kaja knows which ability serves them.
  ASSERT_EQ(request2025(leaving, "resources/list", json::object(), 2).status, 200);
  ASSERT_EQ(request2025(leaving, "resources/subscribe", {{"uri", "test://static-text"}}, 3).status,
            200);
  ASSERT_EQ(
      request2025(leaving, "resources/subscribe", {{"uri", "test://static-binary"}}, 4).status,
      200);
  ASSERT_EQ(
      request2025(staying, "resources/subscribe", {{"uri", "test://static-binary"}}, 2).status,
      200);
  EXPECT_EQ(followed(staying, 3), R"(["test://static-binary","test://static-text"])");

  testing::RawHttp http(port_);
  ASSERT_TRUE(http.connected());
  http.write(testing::httpRequest("DELETE", "", headers2025(leaving)));
  const auto deleted = http.readResponse(10);
  EXPECT_LT(deleted.status, 300) << deleted.status << " " << deleted.body;
  // What the other session follows stays; what only the deleted one followed goes.
  std::string now;
  EXPECT_TRUE(eventually(
      [&] {
        now = followed(staying, 4);
        return now == R"(["test://static-binary"])";
      },
      10))
      << now;
}

// Found by a review: an unsubscribe from a client that never followed the resource was
// passed on to the server, ending the updates of the client that did.
TEST_F(ServeSubscriptionTest, AnUnsubscribeFromAClientThatNeverFollowedChangesNothing) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  const std::string follower = open2025();
  const std::string stranger = open2025();
  ASSERT_FALSE(follower.empty() || stranger.empty()) << env_.serveErrors();
  ASSERT_EQ(request2025(follower, "resources/list", json::object(), 2).status, 200);
  ASSERT_EQ(request2025(follower, "resources/subscribe", {{"uri", "test://static-text"}}, 3).status,
            200);
  const auto reply =
      request2025(stranger, "resources/unsubscribe", {{"uri", "test://static-text"}}, 2);
  const json body = answerOf(reply);
  ASSERT_TRUE(body.is_object()) << reply.body;
  EXPECT_TRUE(body.contains("result")) << body.dump();
  EXPECT_EQ(followed(follower, 4), R"(["test://static-text"])");
}

// Found by a review: a subscribe still on its way when its client left was recorded after
// the client's subscriptions were released, so kaja followed the resource for good. The
// resource counts as followed from the moment the subscribe arrives.
TEST_F(ServeSubscriptionTest, ASubscribeOnItsWayWhenItsClientLeavesIsUndone) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  const std::string leaving = open2025();
  const std::string staying = open2025();
  ASSERT_FALSE(leaving.empty() || staying.empty()) << env_.serveErrors();
  ASSERT_EQ(request2025(leaving, "resources/list", json::object(), 2).status, 200);
  // The server takes test://slow-leaving at once and answers 2 s later.
  auto pending = start2025(leaving, "resources/subscribe", {{"uri", "test://slow-leaving"}}, 3);
  ASSERT_TRUE(pending);
  std::string now;
  ASSERT_TRUE(eventually(
      [&] {
        now = followed(staying, 3);
        return now == R"(["test://slow-leaving"])";
      },
      10))
      << now;
  const int deleted = delete2025(leaving);
  EXPECT_TRUE(deleted >= 200 && deleted < 300) << deleted;
  EXPECT_TRUE(eventually(
      [&] {
        now = followed(staying, 4);
        return now == "[]";
      },
      10))
      << now;
  // Also once the subscribe's late answer has come and gone.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(followed(staying, 5), "[]");
}

// Found by a review: an unsubscribe and then a subscribe of the same resource, both in
// flight, left the client following nothing in kaja's books once both were answered (the
// unsubscribe's answer came first and removed what the subscribe had kept), so kaja never
// ended the server's subscription when the client went away. The latest of a client's
// changes to a resource decides.
TEST_F(ServeSubscriptionTest, TheLatestOfAClientsChangesDecidesWhatItFollows) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  const std::string client = open2025();
  const std::string observer = open2025();
  ASSERT_FALSE(client.empty() || observer.empty()) << env_.serveErrors();
  ASSERT_EQ(request2025(client, "resources/list", json::object(), 2).status, 200);
  ASSERT_EQ(request2025(client, "resources/subscribe", {{"uri", "test://slow-again"}}, 3).status,
            200);
  // Both answered 2 s after they reach the server, the unsubscribe first.
  auto unsubscribe = start2025(client, "resources/unsubscribe", {{"uri", "test://slow-again"}}, 4);
  ASSERT_TRUE(unsubscribe);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto subscribe = start2025(client, "resources/subscribe", {{"uri", "test://slow-again"}}, 5);
  ASSERT_TRUE(subscribe);
  EXPECT_TRUE(answerOf(unsubscribe->readResponse(10)).contains("result"));
  EXPECT_TRUE(answerOf(subscribe->readResponse(10)).contains("result"));
  EXPECT_EQ(followed(observer, 2), R"(["test://slow-again"])");
  // kaja counts the client as following it: once the client goes, so does the subscription.
  const int deleted = delete2025(client);
  EXPECT_TRUE(deleted >= 200 && deleted < 300) << deleted;
  std::string now;
  EXPECT_TRUE(eventually(
      [&] {
        now = followed(observer, 3);
        return now == "[]";
      },
      10))
      << now;
}

// Found by a review: another client's unsubscribe, sent while a subscribe of the same
// resource was on its way, was passed on to the server, because a subscribe counted only
// once answered; the subscriber was then told it followed a resource nobody followed.
TEST_F(ServeSubscriptionTest, AnUnsubscribeWhileAnotherClientsSubscribeIsOnItsWayKeepsIt) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  const std::string first = open2025();
  const std::string second = open2025();
  ASSERT_FALSE(first.empty() || second.empty()) << env_.serveErrors();
  ASSERT_EQ(request2025(first, "resources/list", json::object(), 2).status, 200);
  ASSERT_EQ(request2025(first, "resources/subscribe", {{"uri", "test://slow-shared"}}, 3).status,
            200);
  auto pending = start2025(second, "resources/subscribe", {{"uri", "test://slow-shared"}}, 2);
  ASSERT_TRUE(pending);
  // Time for the gateway to take the second subscribe, well inside the server's 2 s.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto reply =
      request2025(first, "resources/unsubscribe", {{"uri", "test://slow-shared"}}, 4);
  EXPECT_TRUE(answerOf(reply).contains("result")) << reply.body;
  const auto answered = pending->readResponse(10);
  EXPECT_TRUE(answerOf(answered).contains("result")) << answered.body;
  EXPECT_EQ(followed(second, 3), R"(["test://slow-shared"])");
}

// Found by a review: a 2025-11-25 server started after the clients chose their log levels
// (here: stopped when idle, then started again by a call) was told no level, and logged at
// its own default until a client chose one again.
TEST_F(ServeIdleLogLevelTest, AServerStartedAgainIsToldTheClientsLevel) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  const std::string session = open2025();
  ASSERT_FALSE(session.empty()) << env_.serveErrors();
  int id = 2;
  const auto serverLevel = [&] {
    const json call = {{"name", "ref__test_log_level"}, {"arguments", json::object()}};
    const json body = answerOf(request2025(session, "tools/call", call, id++));
    return body.is_object() && body.contains("result")
               ? body["result"]["content"][0].value("text", "")
               : "no answer: " + body.dump();
  };
  ASSERT_EQ(request2025(session, "logging/setLevel", {{"level", "debug"}}, id++).status, 200);
  std::string level;
  EXPECT_TRUE(eventually(
      [&] {
        level = serverLevel();
        return level == "debug";
      },
      10))
      << level;
  // Unused for 2 s, the server stops; the next call starts it again.
  ASSERT_TRUE(eventually(
      [&] { return env_.serveErrors().find("ref stopped after") != std::string::npos; }, 15))
      << env_.serveErrors();
  EXPECT_TRUE(eventually(
      [&] {
        level = serverLevel();
        return level == "debug";
      },
      10))
      << level << "\n"
      << env_.serveErrors();
}

}  // namespace
}  // namespace kaja::cli
