// `kaja export CLIENT`: the configuration snippet that puts `kaja serve` in front of an MCP
// client, in that client's own format.
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/output.h"

namespace kaja::cli {
namespace {

// The running kaja's own path: apps started from a desktop do not share a shell's PATH.
std::string selfPath() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("kaja") : exe.string();
}

// A YAML scalar in double quotes, which JSON's string escapes are valid for.
std::string yamlString(const std::string& text) { return nlohmann::json(text).dump(); }

}  // namespace

int runExport(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {}, {"--persona", "--http"});
  if (!parsed) return reportError(parsed.error());
  const std::string client = parsed->positional.size() == 1 ? parsed->positional[0] : "";
  const bool mcpServers = client == "claude" || client == "claude-desktop" || client == "cursor";
  if (!mcpServers && client != "vscode" && client != "goose") {
    printError(
        "usage: kaja export claude|claude-desktop|cursor|vscode|goose [--persona P] "
        "[--http URL].");
    return kExitUsage;
  }
  const auto url = parsed->value("--http");
  if (url && !url->starts_with("http://") && !url->starts_with("https://")) {
    printError(
        "--http takes the URL kaja serve --http listens at, such as "
        "http://127.0.0.1:8931/mcp.");
    return kExitUsage;
  }
  if (url && client == "claude-desktop") {
    printError(
        "Claude Desktop's config file starts local servers only; leave out --http, or "
        "add the URL as a connector in Claude Desktop's settings.");
    return kExitUsage;
  }
  std::vector<std::string> serveArgs = {"serve"};
  if (auto persona = parsed->value("--persona")) {
    serveArgs.push_back("--persona");
    serveArgs.push_back(*persona);
  }
  const std::string kaja = selfPath();
  if (client == "goose") {
    std::printf("extensions:\n  kaja:\n    name: kaja\n    enabled: true\n    timeout: 300\n");
    if (url) {
      std::printf("    type: streamable_http\n    uri: %s\n", yamlString(*url).c_str());
    } else {
      std::printf("    type: stdio\n    cmd: %s\n    args: [", yamlString(kaja).c_str());
      for (size_t i = 0; i < serveArgs.size(); ++i) {
        std::printf("%s%s", i == 0 ? "" : ", ", yamlString(serveArgs[i]).c_str());
      }
      std::printf("]\n");
    }
    return kExitOk;
  }
  nlohmann::json server;
  if (url) {
    server = {{"type", "http"}, {"url", *url}};
  } else {
    server = {{"command", kaja}, {"args", serveArgs}};
    if (client == "vscode") server["type"] = "stdio";
  }
  nlohmann::json snippet = {{mcpServers ? "mcpServers" : "servers", {{"kaja", server}}}};
  std::printf("%s\n", jsonText(snippet).c_str());
  return kExitOk;
}

}  // namespace kaja::cli
