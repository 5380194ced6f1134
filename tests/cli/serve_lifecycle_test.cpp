// When `kaja serve` runs its servers (V4, V9, V10): a lazy ability's tools are listed from
// the metadata cache without starting it, its first call starts it, it stops after
// idleTimeout unused (never during a call) and starts again on use; a keep-alive server is
// started again when it dies, a lazy one only when it is used.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/cli/serve_test_support.h"
#include "tests/support/build_paths.h"

namespace kaja::cli {
namespace {

using nlohmann::json;
using testing::eventually;
using ::testing::HasSubstr;

json request(const json& id, const std::string& method, const json& params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
}

class ServeLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string everything = "command = \"node\"\nargs = [\"" +
                                   std::string(kaja::test::sourceDir()) +
                                   "/tests/npm/node_modules/@modelcontextprotocol/"
                                   "server-everything/dist/index.js\", \"stdio\"]\n"
                                   "approval = \"never\"\n";
    ability("lazy", everything + "idleTimeout = 2\n");
    ability("keeper", everything + "lifecycle = \"keep-alive\"\n");
    env_.root.write("market/personas/lazyone.toml", "abilities = [\"lazy\"]\n");
    env_.root.write("market/personas/pair.toml", "abilities = [\"lazy\", \"keeper\"]\n");
  }
  void ability(const std::string& name, const std::string& toml) {
    env_.root.write("market/abilities/" + name + "/mcp.toml",
                    toml + "[env]\nKAJA_GATEWAY_TEST = \"" + env_.tag + "-" + name + ";\"\n");
  }
  std::optional<json> echo(testing::ServeProcess& kaja, int id, const std::string& tool,
                           const std::string& message) {
    kaja.send(request(id, "tools/call", {{"name", tool}, {"arguments", {{"message", message}}}}));
    return kaja.answer(id, 60);
  }
  // Runs one `kaja serve` until its tools are listed, so that the cache holds them.
  void warmCache(const std::string& persona) {
    auto kaja = env_.serve({"--persona", persona});
    ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
    kaja->send(request(1, "tools/list"));
    ASSERT_TRUE(kaja->answer(1, 30));
    kaja->closeInput();
    ASSERT_TRUE(kaja->waitExit(10)) << env_.serveErrors();
    ASSERT_TRUE(eventually([&] { return env_.serverPids("lazy").empty(); }, 5));
  }
  testing::ServeFixture env_;
};

TEST_F(ServeLifecycleTest, ALazyServerIsListedFromTheCacheAndStartsOnItsFirstCall) {
  warmCache("lazyone");
  auto kaja = env_.serve({"--persona", "lazyone"});
  ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
  kaja->send(request(1, "tools/list"));
  auto listed = kaja->answer(1, 10);
  ASSERT_TRUE(listed) << env_.serveErrors();
  std::vector<std::string> names;
  for (const auto& tool : (*listed)["result"]["tools"]) names.push_back(tool["name"]);
  EXPECT_THAT(names, ::testing::Contains("lazy__echo"));
  // Nothing was started to answer that.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_TRUE(env_.serverPids("lazy").empty());

  auto echoed = echo(*kaja, 2, "lazy__echo", "first use");
  ASSERT_TRUE(echoed) << env_.serveErrors();
  EXPECT_THAT((*echoed)["result"].dump(), HasSubstr("first use"));
  EXPECT_FALSE(env_.serverPids("lazy").empty());
}

// A 2026-07-28 server says how long its tool listing may be reused (ttlMs; the reference
// server says 5 minutes), and the cache keeps the entry fresh that long, not 7 days.
TEST_F(ServeLifecycleTest, TheServersOwnTimeToLiveBoundsTheCacheEntry) {
  ability("ref", "command = \"node\"\nargs = [\"" + std::string(kaja::test::sourceDir()) +
                     "/tests/servers/conformance_server.mjs\", \"stdio\"]\n");
  env_.root.write("market/personas/modern.toml", "abilities = [\"ref\"]\n");
  auto kaja = env_.serve({"--persona", "modern"});
  ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
  kaja->send(request(1, "tools/list"));
  auto listed = kaja->answer(1, 30);
  ASSERT_TRUE(listed) << env_.serveErrors();
  EXPECT_THAT(listed->dump(), HasSubstr("ref__test_simple_text"));
  const std::string folder = env_.root.path() + "/data/kaja/cache/metadata";
  json entry;
  ASSERT_TRUE(eventually(
      [&] {
        std::error_code ec;
        for (const auto& file : std::filesystem::directory_iterator(folder, ec)) {
          entry = json::parse(testing::readFile(file.path().string()), nullptr, false);
        }
        return entry.is_object();
      },
      10));
  EXPECT_EQ(entry.value("ttlSeconds", -1), 300) << entry.dump().substr(0, 300);
}

TEST_F(ServeLifecycleTest, AStaleEntryIsListedAndRefreshedInTheBackground) {
  warmCache("lazyone");
  const std::string folder = env_.root.path() + "/data/kaja/cache/metadata";
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    files.push_back(entry.path().string());
  }
  ASSERT_EQ(files.size(), 1U);
  json entry = json::parse(testing::readFile(files[0]));
  const std::int64_t eightDaysAgo = entry["savedAt"].get<std::int64_t>() - 8 * 24 * 3600;
  entry["savedAt"] = eightDaysAgo;
  env_.root.write("data/kaja/cache/metadata/" + std::filesystem::path(files[0]).filename().string(),
                  entry.dump());

  auto kaja = env_.serve({"--persona", "lazyone"});
  ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
  kaja->send(request(1, "tools/list"));
  auto listed = kaja->answer(1, 10);
  ASSERT_TRUE(listed) << env_.serveErrors();
  EXPECT_THAT(listed->dump(), HasSubstr("lazy__echo"));
  // No call: the server starts by itself to refresh the entry, which is then fresh.
  EXPECT_TRUE(eventually([&] { return !env_.serverPids("lazy").empty(); }, 30))
      << env_.serveErrors();
  EXPECT_TRUE(eventually(
      [&] {
        const json now = json::parse(testing::readFile(files[0]), nullptr, false);
        return now.is_object() && now.value("savedAt", eightDaysAgo) > eightDaysAgo;
      },
      30));
}

TEST_F(ServeLifecycleTest, AnIdleServerStopsAndStartsAgainButNeverDuringACall) {
  auto kaja = env_.serve({"--persona", "lazyone"});
  ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
  auto echoed = echo(*kaja, 1, "lazy__echo", "hello");
  ASSERT_TRUE(echoed) << env_.serveErrors();
  const auto first = env_.serverPids("lazy");
  ASSERT_FALSE(first.empty());
  // idleTimeout = 2: gone within a few seconds of the call, with nothing left behind.
  EXPECT_TRUE(eventually([&] { return env_.serverPids("lazy").empty(); }, 8)) << env_.serveErrors();
  EXPECT_THAT(env_.serveErrors(), HasSubstr("lazy stopped after 2 s unused"));

  // A call longer than the idle timeout runs to its end on the server that started it.
  kaja->send(request(2, "tools/call",
                     {{"name", "lazy__trigger-long-running-operation"},
                      {"arguments", {{"duration", 4}, {"steps", 2}}}}));
  ASSERT_TRUE(eventually([&] { return !env_.serverPids("lazy").empty(); }, 30));
  const auto during = env_.serverPids("lazy");
  auto long_call = kaja->answer(2, 60);
  ASSERT_TRUE(long_call) << env_.serveErrors();
  EXPECT_FALSE((*long_call)["result"].value("isError", false)) << long_call->dump();
  EXPECT_THAT((*long_call)["result"].dump(), HasSubstr("completed"));
  // The processes that ran the call are still the ones running (it was not stopped and
  // started again under it).
  const auto after = env_.serverPids("lazy");
  for (const pid_t pid : during) EXPECT_THAT(after, ::testing::Contains(pid));

  auto again = echo(*kaja, 3, "lazy__echo", "again");
  ASSERT_TRUE(again) << env_.serveErrors();
  EXPECT_THAT((*again)["result"].dump(), HasSubstr("again"));
}

TEST_F(ServeLifecycleTest, AResourceSubscriptionKeepsALazyServerRunning) {
  auto kaja = env_.serve({"--persona", "lazyone"});
  ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
  kaja->send(request(1, "resources/list"));
  auto listed = kaja->answer(1, 30);
  ASSERT_TRUE(listed && (*listed)["result"]["resources"].size() > 0) << env_.serveErrors();
  const std::string uri = (*listed)["result"]["resources"][0]["uri"];
  kaja->send(request(2, "resources/subscribe", {{"uri", uri}}));
  auto subscribed = kaja->answer(2, 30);
  ASSERT_TRUE(subscribed && subscribed->contains("result")) << subscribed->dump();
  const auto pids = env_.serverPids("lazy");
  ASSERT_FALSE(pids.empty());
  // idleTimeout is 2 s: a live subscription outlasts it.
  std::this_thread::sleep_for(std::chrono::seconds(5));
  EXPECT_EQ(env_.serverPids("lazy"), pids) << env_.serveErrors();
  kaja->send(request(3, "resources/unsubscribe", {{"uri", uri}}));
  ASSERT_TRUE(kaja->answer(3, 30));
  EXPECT_TRUE(eventually([&] { return env_.serverPids("lazy").empty(); }, 10))
      << env_.serveErrors();
}

TEST_F(ServeLifecycleTest, AKeepAliveServerComesBackByItselfALazyOneOnUse) {
  auto kaja = env_.serve({"--persona", "pair", "--proxy"});
  ASSERT_FALSE(kaja->initialize().is_null()) << env_.serveErrors();
  ASSERT_TRUE(eventually(
      [&] { return !env_.serverPids("lazy").empty() && !env_.serverPids("keeper").empty(); }, 30));
  for (const pid_t pid : env_.serverPids("keeper")) ::kill(pid, SIGKILL);
  for (const pid_t pid : env_.serverPids("lazy")) ::kill(pid, SIGKILL);
  // A call made once kaja has seen the keep-alive server die waits for it to be back.
  ASSERT_TRUE(eventually(
      [&] { return env_.serveErrors().find("keeper stopped") != std::string::npos; }, 10))
      << env_.serveErrors();
  kaja->send(request(7, "tools/call",
                     {{"name", "mcp"},
                      {"arguments",
                       {{"operation", "call"},
                        {"name", "keeper__echo"},
                        {"arguments", {{"message", "still here"}}}}}}));
  auto kept = kaja->answer(7, 60);
  ASSERT_TRUE(kept) << env_.serveErrors();
  EXPECT_THAT((*kept)["result"].dump(), HasSubstr("still here")) << env_.serveErrors();
  EXPECT_TRUE(eventually([&] { return !env_.serverPids("keeper").empty(); }, 15))
      << env_.serveErrors();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_TRUE(env_.serverPids("lazy").empty());
  // The status says which is which.
  kaja->send(request(1, "tools/call", {{"name", "mcp"}, {"arguments", {{"operation", "status"}}}}));
  auto status = kaja->answer(1, 10);
  ASSERT_TRUE(status) << env_.serveErrors();
  const std::string text = (*status)["result"]["content"][0].value("text", "");
  EXPECT_THAT(text, HasSubstr("lazy: idle (lazy), "));
  EXPECT_THAT(text, HasSubstr("tools cached"));
  EXPECT_THAT(text, HasSubstr("keeper: ready, "));
  EXPECT_THAT(text, ::testing::ContainsRegex("keeper: ready, [0-9]+ of its [0-9]+ tools offered"));
  kaja->send(request(
      2, "tools/call",
      {{"name", "mcp"},
       {"arguments",
        {{"operation", "call"}, {"name", "lazy__echo"}, {"arguments", {{"message", "back"}}}}}}));
  auto back = kaja->answer(2, 60);
  ASSERT_TRUE(back) << env_.serveErrors();
  EXPECT_THAT((*back)["result"].dump(), HasSubstr("back"));
  EXPECT_FALSE(env_.serverPids("lazy").empty());
}

}  // namespace
}  // namespace kaja::cli
