// `kaja add-json NAME 'JSON'`: one `mcpServers` entry as Claude Code, Claude Desktop and
// Cursor keep them, written as the user's own ability.
#include <nlohmann/json.hpp>

#include "cli/ability_edit.h"
#include "cli/args.h"
#include "cli/command.h"
#include "cli/output.h"

namespace kaja::cli {
namespace {

using nlohmann::json;

// Returns "line L, column C" of byte `offset` (1-based) in `text`.
std::string position(const std::string& text, size_t offset) {
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i + 1 < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// The parser's own words without its "last read" excerpt, which may hold a secret.
std::string parseReason(const std::string& what) {
  auto start = what.find(": ");
  std::string reason = start == std::string::npos ? what : what.substr(start + 2);
  if (auto last = reason.find("; last read"); last != std::string::npos) reason.resize(last);
  return reason;
}

core::Result<json> parseJson(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& error) {
    return core::fail(core::ErrorCode::kUsage,
                      "the JSON is not valid at " + position(text, error.byte) + " (" +
                          parseReason(error.what()) + "); nothing was written.");
  }
}

core::Result<std::string> stringField(const json& entry, const char* key) {
  const json& value = entry.at(key);
  if (!value.is_string()) {
    return core::fail(
        core::ErrorCode::kUsage,
        std::string("\"") + key + "\" must be a string, not " + value.type_name() + ".");
  }
  return value.get<std::string>();
}

core::Result<std::vector<std::pair<std::string, std::string>>> stringMap(const json& entry,
                                                                         const char* key) {
  std::vector<std::pair<std::string, std::string>> out;
  const json& value = entry.at(key);
  if (!value.is_object()) {
    return core::fail(core::ErrorCode::kUsage, std::string("\"") + key +
                                                   "\" must be an object of strings, not " +
                                                   value.type_name() + ".");
  }
  for (const auto& [name, item] : value.items()) {
    if (!item.is_string()) {
      return core::fail(core::ErrorCode::kUsage, std::string("\"") + key + "." + name +
                                                     "\" must be a string, not " +
                                                     item.type_name() + ".");
    }
    out.emplace_back(name, item.get<std::string>());
  }
  return out;
}

core::Result<void> checkKeys(const json& entry) {
  for (const auto& [key, value] : entry.items()) {
    if (key == "cwd") {
      return core::fail(core::ErrorCode::kUsage,
                        "kaja has no working-folder setting, so \"cwd\" cannot be kept; drop it "
                        "and give absolute paths in \"command\" and \"args\".");
    }
    static const std::vector<std::string> kKnown = {"type", "command", "args",       "env",
                                                    "url",  "headers", "description"};
    if (std::find(kKnown.begin(), kKnown.end(), key) == kKnown.end()) {
      return core::fail(core::ErrorCode::kUsage,
                        "\"" + oneLine(key) +
                            "\" is not a key kaja takes here; use command, args, env (a local "
                            "server) or type, url, headers (a remote one).");
    }
  }
  return {};
}

core::Result<core::Transport> transportOf(const json& entry) {
  if (!entry.contains("type")) {
    return entry.contains("url") ? core::Transport::kHttp : core::Transport::kStdio;
  }
  auto type = stringField(entry, "type");
  if (!type) return std::unexpected(type.error());
  if (*type == "stdio") return core::Transport::kStdio;
  if (*type == "http" || *type == "streamable-http" || *type == "streamableHttp") {
    return core::Transport::kHttp;
  }
  if (*type == "sse") return core::Transport::kSse;
  return core::fail(core::ErrorCode::kUsage,
                    "\"type\" must be stdio, http or sse, not \"" + oneLine(*type) + "\".");
}

core::Result<core::AbilityDraft> draftFromJson(const std::string& name, const json& entry) {
  if (!entry.is_object()) {
    return core::fail(core::ErrorCode::kUsage,
                      std::string("the JSON must be one server's object, like {\"command\": "
                                  "\"npx\", \"args\": [\"-y\", \"pkg@1.0.0\"]}, not ") +
                          entry.type_name() + ".");
  }
  if (auto ok = checkKeys(entry); !ok) return std::unexpected(ok.error());
  core::AbilityDraft draft;
  draft.name = name;
  auto transport = transportOf(entry);
  if (!transport) return std::unexpected(transport.error());
  draft.transport = *transport;
  auto set = [&](const char* key, auto& to, auto read) -> core::Result<void> {
    if (!entry.contains(key)) return {};
    auto value = read(entry, key);
    if (!value) return std::unexpected(value.error());
    to = std::move(*value);
    return {};
  };
  core::Result<void> ok;
  std::string command;
  std::string url;
  if (ok = set("description", draft.description, stringField); !ok)
    return std::unexpected(ok.error());
  if (ok = set("command", command, stringField); !ok) return std::unexpected(ok.error());
  if (ok = set("url", url, stringField); !ok) return std::unexpected(ok.error());
  if (ok = set("env", draft.env, stringMap); !ok) return std::unexpected(ok.error());
  if (ok = set("headers", draft.headers, stringMap); !ok) return std::unexpected(ok.error());
  if (entry.contains("args")) {
    const json& args = entry.at("args");
    if (!args.is_array()) {
      return core::fail(core::ErrorCode::kUsage, "\"args\" must be an array of strings.");
    }
    for (const auto& arg : args) {
      if (!arg.is_string()) {
        return core::fail(core::ErrorCode::kUsage, "\"args\" must be an array of strings.");
      }
      draft.args.push_back(arg.get<std::string>());
    }
  }
  if (entry.contains("command")) draft.command = command;
  if (entry.contains("url")) draft.url = url;
  return draft;
}

}  // namespace

int runAddJson(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--force"});
  if (!parsed) return reportError(parsed.error());
  if (parsed->positional.size() != 2) {
    printError("usage: kaja add-json NAME 'JSON' (see kaja add-json --help).");
    return kExitUsage;
  }
  auto entry = parseJson(parsed->positional[1]);
  if (!entry) return reportError(entry.error());
  auto draft = draftFromJson(parsed->positional[0], *entry);
  if (!draft) return reportError(draft.error());
  return installDraft(*draft, parsed->has("--force"));
}

}  // namespace kaja::cli
