// A 2026-07-28 client of `kaja serve --http` cannot be sent a request, so what a call needs
// from it (kaja's approval, a server's own elicitation or sampling) comes back as an
// input_required result, and the client's retry resumes the call where it waits at kaja.
// The servers are the conformance reference server in its 2025-only mode, which asks its
// client mid-call as 2025-11-25 servers do: kaja turns those requests into input rounds.
// Also what a hostile client tries: a changed, reused or borrowed requestState.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/cli/serve_test_support.h"
#include "tests/core/server/http_client.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using testing::eventually;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

const std::string kReference =
    std::string(kaja::test::sourceDir()) + "/tests/servers/conformance_server.mjs";

class ServeInputRequiredTest : public ::testing::Test {
 protected:
  ServeInputRequiredTest() {
    const std::string server =
        "command = \"node\"\nargs = [\"" + kReference + "\", \"stdio\", \"--legacy-only\"]\n";
    env_.root.write("market/abilities/ref/mcp.toml", server + "approval = \"never\"\n");
    env_.root.write("market/abilities/guarded/mcp.toml", server + "approval = \"always\"\n");
    env_.root.write("market/personas/rounds.toml", "abilities = [\"ref\", \"guarded\"]\n");
    serve("rounds");
  }

  /// Starts `kaja serve --persona P --http 127.0.0.1:0` in place of the one running and waits
  /// up to 30 s for the port it prints; returns whether it got one (port_ 0 if not).
  bool serve(const std::string& persona) {
    kaja_.reset();
    port_ = 0;
    kaja_ = env_.serve({"--persona", persona, "--http", "127.0.0.1:0"});
    port_ = env_.httpPort(persona);
    return port_ != 0;
  }

  /// POSTs one 2026-07-28 request with `capabilities` in its _meta; returns the JSON-RPC
  /// message that answers it (from a JSON body or the last SSE event), or null.
  json post(const std::string& method, json params, const json& capabilities = json::object(),
            int id = 1) {
    params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                       {"io.modelcontextprotocol/clientCapabilities", capabilities},
                       {"io.modelcontextprotocol/clientInfo", {{"name", "t"}, {"version", "1"}}}};
    const std::string body =
        json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump();
    testing::RawHttp http(port_);
    if (!http.connected()) return nullptr;
    std::vector<std::pair<std::string, std::string>> headers = {
        {"Accept", "application/json, text/event-stream"},
        {"Content-Type", "application/json"},
        {"MCP-Protocol-Version", "2026-07-28"},
        {"Mcp-Method", method},
        {"Mcp-Name", params.value("name", "")}};
    // test_headers' region travels in a header too (x-mcp-header), which must agree.
    const json arguments = params.value("arguments", json::object());
    if (arguments.is_object() && arguments.contains("region") && arguments["region"].is_string()) {
      headers.emplace_back("Mcp-Param-Region", arguments["region"].get<std::string>());
    }
    http.write(testing::httpRequest("POST", body, headers));
    const auto reply = http.readResponse(60);
    for (auto it = reply.events.rbegin(); it != reply.events.rend(); ++it) {
      if (it->is_object() && it->contains("id")) return *it;
    }
    const json parsed = json::parse(reply.body, nullptr, false);
    if (parsed.is_object()) return parsed;
    // Something that is no JSON-RPC message: the status and body, for the failure to show.
    return {{"status", reply.status}, {"body", reply.body.substr(0, 400)}};
  }

  json call(const std::string& tool, json arguments, const json& capabilities,
            const json& extra = json::object()) {
    json params = {{"name", tool}, {"arguments", std::move(arguments)}};
    params.update(extra);
    return post("tools/call", params, capabilities);
  }

  static json res(const json& message) {
    return message.is_object() ? message.value("result", json::object()) : json::object();
  }
  static json err(const json& message) {
    return message.is_object() ? message.value("error", json::object()) : json::object();
  }

  static std::string textOf(const json& message) {
    const json result = message.value("result", json::object());
    std::string text;
    for (const auto& block : result.value("content", json::array())) {
      text += block.value("text", "");
    }
    return text;
  }

  /// The one input request of an input_required answer, as key and request.
  static std::pair<std::string, json> onlyRequest(const json& message) {
    const json requests = res(message).value("inputRequests", json::object());
    if (requests.size() != 1) return {"", json()};
    return {requests.begin().key(), requests.begin().value()};
  }

  testing::ServeFixture env_;
  std::unique_ptr<testing::ServeProcess> kaja_;
  int port_ = 0;
  const json elicitation_ = {{"elicitation", json::object()}};
};

TEST_F(ServeInputRequiredTest, KajasApprovalIsAnInputRoundAndTheRetryRunsTheCall) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  const json first = call("guarded__test_simple_text", json::object(), elicitation_);
  ASSERT_EQ(res(first).value("resultType", ""), "input_required") << first.dump();
  const std::string state = res(first).value("requestState", "");
  EXPECT_THAT(state, StartsWith("kaja-round-"));
  EXPECT_GE(state.size(), 30U) << "a requestState must not be guessable";
  const auto [key, asked] = onlyRequest(first);
  ASSERT_FALSE(key.empty()) << first.dump();
  EXPECT_EQ(asked["method"], "elicitation/create");
  const std::string message = asked["params"].value("message", "");
  EXPECT_THAT(message, HasSubstr("guarded"));
  EXPECT_THAT(message, HasSubstr("test_simple_text"));
  EXPECT_EQ(asked["params"]["requestedSchema"]["properties"]["answer"]["enum"][0], "once");

  const json done =
      call("guarded__test_simple_text", json::object(), elicitation_,
           {{"inputResponses", {{key, {{"action", "accept"}, {"content", {{"answer", "once"}}}}}}},
            {"requestState", state}});
  EXPECT_EQ(res(done).value("resultType", ""), "complete") << done.dump();
  EXPECT_EQ(res(done).value("isError", false), false) << done.dump();
  EXPECT_THAT(textOf(done), HasSubstr("simple text response"));

  // The round is over: its requestState cannot run the call a second time.
  const json again =
      call("guarded__test_simple_text", json::object(), elicitation_,
           {{"inputResponses", {{key, {{"action", "accept"}, {"content", {{"answer", "once"}}}}}}},
            {"requestState", state}});
  EXPECT_EQ(err(again).value("code", 0), -32602) << again.dump();
  EXPECT_THAT(err(again).value("message", ""), HasSubstr("no request of kaja waits"));
}

TEST_F(ServeInputRequiredTest, ADeclineOrAnOffScriptAnswerRefusesTheCall) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  // "For the rest of the session" means nothing to a client without a session, so it is
  // neither offered nor taken.
  const json offered = call("guarded__test_simple_text", json::object(), elicitation_);
  EXPECT_EQ(
      onlyRequest(offered).second["params"]["requestedSchema"]["properties"]["answer"]["enum"],
      json::array({"once"}))
      << offered.dump();
  for (const json& answer :
       {json{{"action", "decline"}}, json{{"action", "accept"}, {"content", {{"answer", "yes"}}}},
        json{{"action", "accept"}, {"content", {{"answer", "session"}}}},
        json{{"action", "accept"}, {"content", {{"answer", "ONCE"}}}},
        json{{"action", "accept"}, {"content", "once"}}, json{{"action", "cancel"}},
        json::object()}) {
    const json first = call("guarded__test_simple_text", json::object(), elicitation_);
    const auto [key, asked] = onlyRequest(first);
    ASSERT_FALSE(key.empty()) << first.dump();
    const json done =
        call("guarded__test_simple_text", json::object(), elicitation_,
             {{"inputResponses", {{key, answer}}}, {"requestState", res(first)["requestState"]}});
    EXPECT_EQ(res(done).value("isError", false), true) << answer.dump() << done.dump();
    EXPECT_THAT(textOf(done), HasSubstr("kaja refused the call")) << answer.dump();
  }
  // An answer that is no object at all is the client's mistake: -32602, and the round waits
  // for a proper answer.
  const json first = call("guarded__test_simple_text", json::object(), elicitation_);
  const auto [key, asked] = onlyRequest(first);
  for (const json& answer : {json("accept"), json::array(), json(5), json(nullptr)}) {
    const json wrong =
        call("guarded__test_simple_text", json::object(), elicitation_,
             {{"inputResponses", {{key, answer}}}, {"requestState", res(first)["requestState"]}});
    EXPECT_EQ(err(wrong).value("code", 0), -32602) << answer.dump() << wrong.dump();
    EXPECT_THAT(err(wrong).value("message", ""), HasSubstr("must be the object"));
  }
  const json done =
      call("guarded__test_simple_text", json::object(), elicitation_,
           {{"inputResponses", {{key, {{"action", "accept"}, {"content", {{"answer", "once"}}}}}}},
            {"requestState", res(first)["requestState"]}});
  EXPECT_THAT(textOf(done), HasSubstr("simple text response")) << done.dump();
}

TEST_F(ServeInputRequiredTest, ARetryMustRepeatItsRequestAndTheToolMustStillBeOffered) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  const json yes = {{"action", "accept"}, {"content", {{"answer", "once"}}}};
  const json first = call("guarded__test_headers", {{"region", "eu"}}, elicitation_);
  const auto [key, asked] = onlyRequest(first);
  ASSERT_FALSE(key.empty()) << first.dump();
  for (const json& other :
       {json{{"region", "EVIL"}}, json::object(), json{{"region", "eu"}, {"more", 1}}}) {
    const json changed =
        call("guarded__test_headers", other, elicitation_,
             {{"inputResponses", {{key, yes}}}, {"requestState", res(first)["requestState"]}});
    EXPECT_EQ(err(changed).value("code", 0), -32602) << other.dump() << changed.dump();
    EXPECT_THAT(err(changed).value("message", ""), HasSubstr("arguments differ"));
  }
  // The persona drops the tool while the question is open: the approval no longer runs it.
  env_.root.write(
      "market/personas/rounds.toml",
      "abilities = [\"ref\", { name = \"guarded\", tools = [\"test_simple_text\"] }]\n");
  ASSERT_TRUE(eventually(
      [&] {
        return post("tools/list", json::object()).dump().find("guarded__test_headers") ==
               std::string::npos;
      },
      20))
      << env_.serveErrors();
  const json approved =
      call("guarded__test_headers", {{"region", "eu"}}, elicitation_,
           {{"inputResponses", {{key, yes}}}, {"requestState", res(first)["requestState"]}});
  EXPECT_EQ(res(approved).value("isError", false), true) << approved.dump();
  EXPECT_THAT(textOf(approved), HasSubstr("no longer offers guarded__test_headers"));
  EXPECT_THAT(textOf(approved), Not(HasSubstr("region")));
}

TEST_F(ServeInputRequiredTest, AClientWithoutElicitationIsToldHowToApprove) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  const json done = call("guarded__test_simple_text", json::object(), json::object());
  EXPECT_EQ(res(done).value("resultType", ""), "complete") << done.dump();
  EXPECT_EQ(res(done).value("isError", false), true);
  EXPECT_THAT(textOf(done), HasSubstr("did not declare elicitation"));
  EXPECT_THAT(textOf(done), HasSubstr("kaja call guarded test_simple_text"));
}

TEST_F(ServeInputRequiredTest, AServersOwnElicitationAndSamplingReachTheClientAsRounds) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  const json first = call("ref__test_elicitation", {{"message", "Your name?"}}, elicitation_);
  ASSERT_EQ(res(first).value("resultType", ""), "input_required") << first.dump();
  const auto [key, asked] = onlyRequest(first);
  EXPECT_EQ(asked["method"], "elicitation/create");
  EXPECT_EQ(asked["params"].value("message", ""), "Your name?");
  const json done =
      call("ref__test_elicitation", {{"message", "Your name?"}}, elicitation_,
           {{"inputResponses", {{key, {{"action", "accept"}, {"content", {{"response", "Ada"}}}}}}},
            {"requestState", res(first)["requestState"]}});
  EXPECT_THAT(textOf(done), HasSubstr("action=accept"));
  EXPECT_THAT(textOf(done), HasSubstr("\"response\":\"Ada\""));

  const json sampling = {{"sampling", json::object()}};
  const json asks = call("ref__test_sampling", {{"prompt", "Capital of France?"}}, sampling);
  ASSERT_EQ(res(asks).value("resultType", ""), "input_required") << asks.dump();
  const auto [sampleKey, sample] = onlyRequest(asks);
  EXPECT_EQ(sample["method"], "sampling/createMessage");
  EXPECT_EQ(sample["params"]["messages"][0]["content"]["text"], "Capital of France?");
  const json answer = {{"role", "assistant"},
                       {"content", {{"type", "text"}, {"text", "Paris"}}},
                       {"model", "m"},
                       {"stopReason", "endTurn"}};
  const json sampled = call(
      "ref__test_sampling", {{"prompt", "Capital of France?"}}, sampling,
      {{"inputResponses", {{sampleKey, answer}}}, {"requestState", res(asks)["requestState"]}});
  EXPECT_THAT(textOf(sampled), HasSubstr("LLM response: Paris")) << sampled.dump();
}

TEST_F(ServeInputRequiredTest, AChangedOrBorrowedRequestStateIsRefusedAndTheRoundStillWaits) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  const json first = call("guarded__test_simple_text", json::object(), elicitation_);
  const std::string state = res(first).value("requestState", "");
  const auto [key, asked] = onlyRequest(first);
  ASSERT_FALSE(key.empty()) << first.dump();
  const json yes = {{key, {{"action", "accept"}, {"content", {{"answer", "once"}}}}}};
  std::string upper = state;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const json& wrong : {json(state + "-TAMPERED"), json(state.substr(0, state.size() - 1)),
                            json(upper), json(""), json(42), json::object({{"s", state}}),
                            json(state + std::string(1, '\0')), json(std::string(100000, 'k'))}) {
    const json refused = call("guarded__test_simple_text", json::object(), elicitation_,
                              {{"inputResponses", yes}, {"requestState", wrong}});
    EXPECT_EQ(err(refused).value("code", 0), -32602) << refused.dump().substr(0, 300);
    EXPECT_FALSE(refused.contains("result"));
  }
  // Another tool, or the same tool's state on a prompt, does not take the round either.
  const json borrowed = call("ref__test_simple_text", json::object(), elicitation_,
                             {{"inputResponses", yes}, {"requestState", state}});
  EXPECT_EQ(err(borrowed).value("code", 0), -32602) << borrowed.dump();
  EXPECT_THAT(err(borrowed).value("message", ""), HasSubstr("belongs to tools/call"));
  const json prompt = post(
      "prompts/get",
      {{"name", "guarded__test_simple_text"}, {"inputResponses", yes}, {"requestState", state}});
  EXPECT_EQ(err(prompt).value("code", 0), -32602) << prompt.dump();
  const json bad = call("guarded__test_simple_text", json::object(), elicitation_,
                        {{"inputResponses", "yes"}, {"requestState", state}});
  EXPECT_EQ(err(bad).value("code", 0), -32602) << bad.dump();

  // After all that, the real retry still runs the call.
  const json done = call("guarded__test_simple_text", json::object(), elicitation_,
                         {{"inputResponses", yes}, {"requestState", state}});
  EXPECT_EQ(res(done).value("isError", false), false) << done.dump();
  EXPECT_THAT(textOf(done), HasSubstr("simple text response")) << done.dump();
}

TEST_F(ServeInputRequiredTest, AnUnansweredQuestionIsAskedAgainUnderANewState) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  const json first = call("guarded__test_simple_text", json::object(), elicitation_);
  const auto [key, asked] = onlyRequest(first);
  ASSERT_FALSE(key.empty()) << first.dump();
  const json other = call("guarded__test_simple_text", json::object(), elicitation_,
                          {{"inputResponses", {{"not-" + key, {{"action", "accept"}}}}},
                           {"requestState", res(first)["requestState"]}});
  ASSERT_EQ(res(other).value("resultType", ""), "input_required") << other.dump();
  const auto [again, askedAgain] = onlyRequest(other);
  EXPECT_EQ(again, key);
  EXPECT_EQ(askedAgain, asked);
  EXPECT_NE(res(other)["requestState"], res(first)["requestState"]);
  const json done =
      call("guarded__test_simple_text", json::object(), elicitation_,
           {{"inputResponses", {{key, {{"action", "accept"}, {"content", {{"answer", "once"}}}}}}},
            {"requestState", res(other)["requestState"]}});
  EXPECT_EQ(res(done).value("isError", false), false) << done.dump();
  EXPECT_THAT(textOf(done), HasSubstr("simple text response")) << done.dump();
}

TEST_F(ServeInputRequiredTest, AnswersWithoutAStateAreIgnoredAndTheCallAsksAsUsual) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  // A client cannot approve in advance: answers kaja never asked for count for nothing.
  const json first =
      call("guarded__test_simple_text", json::object(), elicitation_,
           {{"inputResponses",
             {{"elicitation_1", {{"action", "accept"}, {"content", {{"answer", "once"}}}}}}}});
  EXPECT_EQ(res(first).value("resultType", ""), "input_required") << first.dump();
}

// A server kaja speaks 2026-07-28 to asks in input_required rounds of its own. Its keys reach
// the client, but a roots/list among its questions never does: kaja answers it with the
// persona's folders, and the client is asked only the rest.
TEST_F(ServeInputRequiredTest, AModernServersRoundsPassThroughButItsRootsQuestionsStayWithKaja) {
  env_.root.write("market/abilities/modern/mcp.toml",
                  "command = \"node\"\nargs = [\"" + kReference +
                      "\", \"stdio\"]\napproval = \"never\"\nprotocol = \"2026-07-28\"\n"
                      "roots = true\n");
  env_.root.write("home/work/keep.txt", "x");
  env_.root.write("market/personas/modern.toml",
                  "abilities = [{ name = \"modern\", roots = [\"~/work\"] }]\n");
  ASSERT_TRUE(serve("modern")) << env_.serveErrors();
  const json both = {
      {"elicitation", json::object()}, {"sampling", json::object()}, {"roots", json::object()}};
  const json roots = call("modern__test_input_required_result_list_roots", json::object(), both);
  EXPECT_EQ(res(roots).value("resultType", ""), "complete") << roots.dump();
  EXPECT_THAT(textOf(roots), HasSubstr("Roots: file://" + env_.home + "/work")) << roots.dump();

  const json three =
      call("modern__test_input_required_result_multiple_inputs", json::object(), both);
  ASSERT_EQ(res(three).value("resultType", ""), "input_required") << three.dump();
  const json asked = res(three)["inputRequests"];
  EXPECT_TRUE(asked.contains("user_name")) << asked.dump();
  EXPECT_TRUE(asked.contains("greeting")) << asked.dump();
  EXPECT_FALSE(asked.contains("client_roots")) << asked.dump();
  EXPECT_EQ(asked.dump().find("roots/list"), std::string::npos) << asked.dump();
  const json answers = {
      {"user_name", {{"action", "accept"}, {"content", {{"name", "Ada"}}}}},
      {"greeting",
       {{"role", "assistant"}, {"content", {{"type", "text"}, {"text", "Hi"}}}, {"model", "m"}}},
      {"client_roots", {{"roots", json::array({{{"uri", "file:///etc"}, {"name", "not mine"}}})}}}};
  const json done =
      call("modern__test_input_required_result_multiple_inputs", json::object(), both,
           {{"inputResponses", answers}, {"requestState", res(three)["requestState"]}});
  EXPECT_EQ(res(done).value("resultType", ""), "complete") << done.dump();
  EXPECT_THAT(textOf(done), HasSubstr("Hi Ada, with 1 root(s)")) << done.dump();
  EXPECT_THAT(done.dump(), Not(HasSubstr("file:///etc")));

  // The server hears only what this client can answer: no elicitation declared, none asked.
  const json samplingOnly = call("modern__test_input_required_result_capabilities", json::object(),
                                 {{"sampling", json::object()}});
  ASSERT_EQ(res(samplingOnly).value("resultType", ""), "input_required") << samplingOnly.dump();
  EXPECT_EQ(samplingOnly.dump().find("elicitation/create"), std::string::npos)
      << samplingOnly.dump();
}

// A server started again (its manifest changed) numbers its requests from the start, so a
// new call can have the id of an old one whose round still waits: its question must still go
// to the client that made the new call.
TEST_F(ServeInputRequiredTest, AfterARestartANewCallsQuestionReachesItsOwnClient) {
  const std::string manifest = "command = \"node\"\nargs = [\"" + kReference +
                               "\", \"stdio\"]\napproval = \"never\"\nprotocol = \"2026-07-28\"\n";
  env_.root.write("market/abilities/modern/mcp.toml", manifest);
  env_.root.write("market/personas/restart.toml", "abilities = [\"modern\"]\n");
  ASSERT_TRUE(serve("restart")) << env_.serveErrors();
  const std::string tool = "modern__test_input_required_result_elicitation";
  // Left waiting: nobody answers this one.
  const json abandoned = call(tool, json::object(), elicitation_);
  ASSERT_EQ(res(abandoned).value("resultType", ""), "input_required") << abandoned.dump();
  env_.root.write("market/abilities/modern/mcp.toml", manifest + "[env]\nCHANGED = \"1\"\n");
  ASSERT_TRUE(eventually(
      [&] { return env_.serveErrors().find("configuration changed") != std::string::npos; }, 20))
      << env_.serveErrors();
  for (int attempt = 0; attempt < 3; ++attempt) {
    const json fresh = call(tool, json::object(), elicitation_);
    ASSERT_EQ(res(fresh).value("resultType", ""), "input_required")
        << "attempt " << attempt << ": " << fresh.dump() << env_.serveErrors();
    EXPECT_NE(res(fresh)["requestState"], res(abandoned)["requestState"]);
  }
}

// A real 2026-07-28 client: the TypeScript SDK 2.x fulfils kaja's input rounds through its
// own elicitation and sampling handlers and retries each call itself.
TEST_F(ServeInputRequiredTest, TheSdk2ClientAnswersTheRoundsThroughItsHandlers) {
  ASSERT_NE(port_, 0) << env_.serveErrors();
  const std::string url = "http://127.0.0.1:" + std::to_string(port_) + "/mcp";
  const json calls =
      json::array({{{"name", "guarded__test_simple_text"}},
                   {{"name", "ref__test_elicitation"}},
                   {{"name", "ref__test_sampling"}, {"arguments", {{"prompt", "Q"}}}}});
  const auto lines = [](const std::string& out) {
    std::vector<json> parsed;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
      parsed.push_back(json::parse(line, nullptr, false));
    return parsed;
  };
  testing::RunOptions options;
  options.timeoutSeconds = 90;
  const auto once = testing::runCommandWith(
      {"/usr/bin/env", "node",
       std::string(kaja::test::sourceDir()) + "/tests/servers/gateway_client_2026.mjs", url, "once",
       calls.dump()},
      {"PATH=/usr/local/bin:/usr/bin:/bin"}, options);
  ASSERT_EQ(once.exitCode, 0) << once.err << env_.serveErrors();
  const auto seen = lines(once.out);
  ASSERT_EQ(seen.size(), 3U) << once.out;
  EXPECT_EQ(seen[0].value("version", ""), "2026-07-28");
  EXPECT_THAT(seen[0].dump(), HasSubstr("This is a simple text response")) << seen[0].dump();
  EXPECT_THAT(seen[0]["asked"].dump(), HasSubstr("wants to run test_simple_text"));
  EXPECT_THAT(seen[1].dump(), HasSubstr(R"(content={\"response\":\"Ada\"})")) << seen[1].dump();
  EXPECT_THAT(seen[2].dump(), HasSubstr("LLM response: Paris")) << seen[2].dump();

  const auto declined = testing::runCommandWith(
      {"/usr/bin/env", "node",
       std::string(kaja::test::sourceDir()) + "/tests/servers/gateway_client_2026.mjs", url,
       "decline", json::array({calls[0]}).dump()},
      {"PATH=/usr/local/bin:/usr/bin:/bin"}, options);
  ASSERT_EQ(declined.exitCode, 0) << declined.err;
  const auto refused = lines(declined.out);
  ASSERT_EQ(refused.size(), 1U) << declined.out;
  EXPECT_EQ(refused[0]["result"].value("isError", false), true) << refused[0].dump();
  EXPECT_THAT(refused[0].dump(), HasSubstr("was declined by the user"));
}

}  // namespace
}  // namespace kaja::cli
