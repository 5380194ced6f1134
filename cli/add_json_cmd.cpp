// `kaja add-json NAME 'JSON'`: one `mcpServers` entry as Claude Code, Claude Desktop and
// Cursor keep them, written as the user's own ability. The conversion is shared with
// `kaja import`, which does the same for every entry of a client's file.
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/ability_edit.h"
#include "cli/args.h"
#include "cli/command.h"
#include "cli/json_input.h"
#include "cli/output.h"

namespace kaja::cli {
namespace {

using nlohmann::json;

// Deeper nesting than any client writes; it also keeps nlohmann's recursive destructor and
// the walks over values far from the end of the stack.
constexpr int kMaxJsonDepth = 256;

// Blanks the comments and trailing commas that VS Code and Cursor accept in their files
// (JSONC), keeping every other byte where it was so that positions stay right. Returns false
// when brackets nest deeper than kMaxJsonDepth.
bool blankJsoncExtras(std::string& text) {
  enum class State { kCode, kString, kLineComment, kBlockComment };
  State state = State::kCode;
  size_t pendingComma = std::string::npos;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char& c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    switch (state) {
      case State::kString:
        if (c == '\\') {
          ++i;
        } else if (c == '"') {
          state = State::kCode;
        }
        continue;
      case State::kLineComment:
        if (c == '\n') {
          state = State::kCode;
        } else {
          c = ' ';
        }
        continue;
      case State::kBlockComment:
        if (c == '*' && next == '/') {
          text[i + 1] = ' ';
          ++i;
          state = State::kCode;
        }
        if (c != '\n') c = ' ';
        continue;
      case State::kCode:
        break;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (c == '/' && (next == '/' || next == '*')) {
      state = next == '/' ? State::kLineComment : State::kBlockComment;
      c = ' ';
      text[i + 1] = ' ';
      ++i;
      continue;
    }
    if ((c == '}' || c == ']') && pendingComma != std::string::npos) text[pendingComma] = ' ';
    pendingComma = c == ',' ? i : std::string::npos;
    if (c == '"') state = State::kString;
    if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth) return false;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return true;
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
      return core::fail(core::ErrorCode::kUsage, std::string("\"") + key + "." + oneLine(name) +
                                                     "\" must be a string, not " +
                                                     item.type_name() + ".");
    }
    out.emplace_back(name, item.get<std::string>());
  }
  return out;
}

core::Result<void> checkKeys(const json& entry) {
  static const std::vector<std::string> kKnown = {"type", "command", "args",    "env",
                                                  "cwd",  "url",     "headers", "description"};
  for (const auto& [key, value] : entry.items()) {
    if (std::find(kKnown.begin(), kKnown.end(), key) == kKnown.end()) {
      return core::fail(core::ErrorCode::kUsage,
                        "\"" + oneLine(key) +
                            "\" is not a key kaja takes here; use command, args, env, cwd (a "
                            "local server) or type, url, headers (a remote one).");
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

// A relative "cwd" means the folder the client runs the server from, which only a project's
// own file pins down.
core::Result<std::string> folderOf(const std::string& cwd, const std::string& baseDir) {
  if (cwd.find("${") != std::string::npos) {
    return core::fail(core::ErrorCode::kUsage,
                      "\"cwd\" holds a ${…} reference, which kaja does not expand; give the "
                      "folder itself.");
  }
  if (cwd.starts_with('/') || cwd == "~" || cwd.starts_with("~/")) return cwd;
  if (baseDir.empty() || cwd.empty()) {
    return core::fail(core::ErrorCode::kUsage,
                      "\"cwd\" is the relative path \"" + oneLine(cwd) +
                          "\", and kaja cannot tell what it is relative to; give an absolute "
                          "path.");
  }
  return (std::filesystem::path(baseDir) / cwd).lexically_normal().string();
}

core::Result<void> readArgs(const json& entry, core::AbilityDraft& draft) {
  if (!entry.contains("args")) return {};
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
  return {};
}

}  // namespace

core::Result<json> parseClientJson(std::string text, const std::string& subject) {
  if (!blankJsoncExtras(text)) {
    return core::fail(core::ErrorCode::kUsage, subject + " nests deeper than " +
                                                   std::to_string(kMaxJsonDepth) +
                                                   " levels; nothing was written.");
  }
  auto parsed = parseJsonInput(text);
  if (parsed) return parsed;
  core::Error error = std::move(parsed.error());
  constexpr std::string_view kTheirs = "the JSON";
  if (error.message.starts_with(kTheirs)) error.message.replace(0, kTheirs.size(), subject);
  error.message = asSentence(error.message);
  error.message.insert(error.message.size() - 1, "; nothing was written");
  return std::unexpected(std::move(error));
}

core::Result<core::AbilityDraft> draftFromEntry(const std::string& name, const json& entry,
                                                const std::string& baseDir) {
  if (!entry.is_object()) {
    return core::fail(core::ErrorCode::kUsage,
                      std::string("a server's entry must be an object, like {\"command\": "
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
  std::string command;
  std::string url;
  std::string cwd;
  for (auto [key, to] :
       {std::pair{"description", &draft.description}, std::pair{"command", &command},
        std::pair{"url", &url}, std::pair{"cwd", &cwd}}) {
    if (auto ok = set(key, *to, stringField); !ok) return std::unexpected(ok.error());
  }
  if (auto ok = set("env", draft.env, stringMap); !ok) return std::unexpected(ok.error());
  if (auto ok = set("headers", draft.headers, stringMap); !ok) return std::unexpected(ok.error());
  if (auto ok = readArgs(entry, draft); !ok) return std::unexpected(ok.error());
  if (entry.contains("command")) draft.command = command;
  if (entry.contains("url")) draft.url = url;
  if (entry.contains("cwd")) {
    auto folder = folderOf(cwd, baseDir);
    if (!folder) return std::unexpected(folder.error());
    draft.cwd = *folder;
  }
  return draft;
}

int runAddJson(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--force"});
  if (!parsed) return reportError(parsed.error());
  if (parsed->positional.size() != 2) {
    printError("usage: kaja add-json NAME 'JSON' (see kaja add-json --help).");
    return kExitUsage;
  }
  auto entry = parseClientJson(parsed->positional[1], "the JSON");
  if (!entry) return reportError(entry.error());
  auto draft = draftFromEntry(parsed->positional[0], *entry);
  if (!draft) return reportError(draft.error());
  return installDraft(*draft, parsed->has("--force"));
}

}  // namespace kaja::cli
