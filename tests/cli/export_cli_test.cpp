// kaja export: each client's snippet parses, names this kaja, and starts a working gateway.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli/serve_test_support.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

class ExportCliTest : public ::testing::Test {
 protected:
  ExportCliTest() { root_.write("market/personas/empty.toml", "abilities = []\n"); }
  std::vector<std::string> env() const {
    return {"HOME=" + root_.path(),
            "XDG_CONFIG_HOME=" + root_.path() + "/config",
            "XDG_DATA_HOME=" + root_.path() + "/data",
            "KAJA_SHIPPED_MARKETPLACE=" + root_.path() + "/market",
            "PATH=/usr/bin:/bin",
            "NO_COLOR=1"};
  }
  testing::CommandResult kaja(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {kaja_};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::runCommand(argv, env());
  }
  testing::TempDir root_;
  const std::string kaja_ = std::string(kaja::test::binDir()) + "/kaja";
};

TEST_F(ExportCliTest, EachJsonClientGetsItsOwnShapeWithThisKajasPath) {
  for (const char* client : {"claude", "claude-desktop", "cursor", "vscode"}) {
    auto result = kaja({"export", client, "--persona", "empty"});
    ASSERT_EQ(result.exitCode, 0) << client << result.err;
    json snippet = json::parse(result.out);
    const bool vscode = std::string(client) == "vscode";
    const json& server = snippet[vscode ? "servers" : "mcpServers"]["kaja"];
    EXPECT_EQ(server["command"], kaja_) << client;
    EXPECT_EQ(server["args"], json::array({"serve", "--persona", "empty"})) << client;
    EXPECT_EQ(server.contains("type"), vscode) << client;
  }
  auto http = kaja({"export", "vscode", "--http", "http://127.0.0.1:8931/mcp"});
  EXPECT_EQ(json::parse(http.out)["servers"]["kaja"],
            json({{"type", "http"}, {"url", "http://127.0.0.1:8931/mcp"}}));
}

TEST_F(ExportCliTest, GooseGetsYamlThatParses) {
  auto result = kaja({"export", "goose"});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  root_.write("goose.yaml", result.out);
  auto parsed = testing::runCommand(
      {"/usr/bin/python3", "-c",
       "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
       root_.path() + "/goose.yaml"},
      {"PATH=/usr/bin:/bin"});
  ASSERT_EQ(parsed.exitCode, 0) << parsed.err;
  json kaja = json::parse(parsed.out)["extensions"]["kaja"];
  EXPECT_EQ(kaja["type"], "stdio");
  EXPECT_EQ(kaja["cmd"], kaja_);
  EXPECT_EQ(kaja["args"], json::array({"serve"}));
}

TEST_F(ExportCliTest, TheSnippetStartsAGatewayThatAnswers) {
  auto result = kaja({"export", "claude", "--persona", "empty"});
  json server = json::parse(result.out)["mcpServers"]["kaja"];
  std::vector<std::string> argv = {server["command"].get<std::string>()};
  for (const auto& arg : server["args"]) argv.push_back(arg.get<std::string>());
  testing::ServeProcess serve(argv, env(), root_.path() + "/serve.err");
  ASSERT_TRUE(serve.send(json{{"jsonrpc", "2.0"},
                              {"id", 1},
                              {"method", "initialize"},
                              {"params",
                               {{"protocolVersion", "2025-06-18"},
                                {"capabilities", json::object()},
                                {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}}));
  auto answer = serve.answer(1, 30);
  ASSERT_TRUE(answer.has_value()) << testing::readFile(root_.path() + "/serve.err");
  EXPECT_TRUE((*answer)["result"].contains("serverInfo")) << answer->dump();
}

TEST_F(ExportCliTest, BadInputGetsOneSentence) {
  auto unknown = kaja({"export", "emacs"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_THAT(unknown.err, HasSubstr("usage: kaja export claude|claude-desktop|cursor|vscode"));
  auto url = kaja({"export", "cursor", "--http", "127.0.0.1:8931"});
  EXPECT_EQ(url.exitCode, 2);
  EXPECT_THAT(url.err, HasSubstr("such as http://127.0.0.1:8931/mcp"));
  auto desktop = kaja({"export", "claude-desktop", "--http", "http://127.0.0.1:8931/mcp"});
  EXPECT_EQ(desktop.exitCode, 2);
  EXPECT_THAT(desktop.err, HasSubstr("starts local servers only"));
}

}  // namespace
}  // namespace kaja
