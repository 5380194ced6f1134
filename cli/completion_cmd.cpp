// `kaja completion SHELL` prints a completion script for bash, zsh or fish. Each script asks
// `kaja __complete WORD…` for the candidates, so every shell completes the same way: the
// commands and their options from the same table as `--help`, and the names of abilities,
// personas and (once `kaja serve` has cached them) tools.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/help.h"
#include "cli/output.h"
#include "core/gateway/metadata_cache.h"
#include "core/paths.h"
#include "marketplace/catalog.h"
#include "marketplace/sync/store.h"

namespace kaja::cli {
namespace {

using Words = std::vector<std::string>;

// What a positional argument names.
enum class Kind { kNone, kAbility, kTool, kPersona, kCommand, kWords };

struct Position {
  Kind kind = Kind::kNone;
  Words words;  ///< the candidates of kWords
};

// The positionals of a command (after its subcommand, when it has one) that name something.
struct Rule {
  std::string_view command;
  std::string_view subcommand;  ///< "" for a command without subcommands
  std::vector<Position> positions;
  bool lastRepeats = false;  ///< e.g. doctor NAME...
};

const std::vector<Rule>& rules() {
  static const std::vector<Rule> table = {
      {"doctor", "", {{Kind::kAbility, {}}}, true},
      {"call", "", {{Kind::kAbility, {}}, {Kind::kTool, {}}}, false},
      {"tools", "", {{Kind::kAbility, {}}, {Kind::kTool, {}}}, false},
      {"key", "set", {{Kind::kAbility, {}}}, false},
      {"key", "rm", {{Kind::kAbility, {}}}, false},
      {"persona", "use", {{Kind::kPersona, {}}}, false},
      {"persona", "add", {{Kind::kPersona, {}}, {Kind::kAbility, {}}}, false},
      {"persona", "remove", {{Kind::kPersona, {}}, {Kind::kAbility, {}}}, false},
      {"persona", "folder", {{Kind::kWords, {"add", "rm"}}, {Kind::kPersona, {}}}, false},
      {"get", "", {{Kind::kAbility, {}}}, false},
      {"remove", "", {{Kind::kAbility, {}}}, false},
      {"enable", "", {{Kind::kAbility, {}}}, false},
      {"disable", "", {{Kind::kAbility, {}}}, false},
      {"help", "", {{Kind::kCommand, {}}}, false},
  };
  return table;
}

Words commandNames() {
  Words names;
  for (const auto& command : commands()) names.emplace_back(command.name);
  return names;
}

// Where names come from; the real one reads the catalog and the metadata cache.
struct Sources {
  std::function<Words()> abilities;
  std::function<Words()> personas;
  std::function<Words(const std::string&)> tools;
};

// The options a command takes, read from its synopsis, the usage lines of its help
// ("kaja key set NAME") and its option lines ("  --timeout S  give each…"); `valued` gets
// those written with a value (`--persona P`, `--tools a,b`). Prose that mentions another
// program's option is not read.
Words optionsOf(const Command& command, std::set<std::string>& valued) {
  static const std::regex usage(R"((--[a-z][a-z0-9-]*)(?:[ =]([^\s\[\]|-][^\s\]]*))?)");
  static const std::regex optionLine(R"(^\s+(--[a-z][a-z0-9-]*)(?:[ =]([^\s-]\S*))?)");
  std::set<std::string> all{"--help"};
  auto scan = [&](const std::string& text, const std::regex& pattern) {
    for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern);
         it != std::sregex_iterator(); ++it) {
      all.insert((*it)[1].str());
      if ((*it)[2].matched) valued.insert((*it)[1].str());
    }
  };
  scan(std::string(command.synopsis), usage);
  std::string help(command.help);
  size_t at = 0;
  while (at < help.size()) {
    size_t end = help.find('\n', at);
    std::string line = help.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? help.size() : end + 1;
    if (line.starts_with("kaja ")) scan(line, usage);
    const size_t text = line.find_first_not_of(' ');
    if (text != std::string::npos && text > 0 && line.compare(text, 2, "--") == 0) {
      std::smatch match;
      if (std::regex_search(line, match, optionLine)) {
        all.insert(match[1].str());
        if (match[2].matched) valued.insert(match[1].str());
      }
    }
  }
  return {all.begin(), all.end()};
}

// The subcommands a command's synopsis shows: "key set NAME | key rm NAME" gives set and rm,
// "sandbox serve|token|status …" gives serve, token and status.
Words subcommandsOf(const Command& command) {
  Words out;
  std::string synopsis(command.synopsis);
  const std::string name(command.name);
  size_t at = 0;
  while (at < synopsis.size()) {
    size_t end = synopsis.find(" | ", at);
    std::string part = synopsis.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? synopsis.size() : end + 3;
    if (!part.starts_with(name + " ")) continue;
    std::string tail = part.substr(name.size() + 1);
    std::string first = tail.substr(0, tail.find(' '));
    size_t from = 0;
    while (from <= first.size()) {
      size_t bar = first.find('|', from);
      std::string word = first.substr(from, bar == std::string::npos ? bar : bar - from);
      if (!word.empty() && word[0] != '-' && std::all_of(word.begin(), word.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || c == '-';
          })) {
        out.push_back(word);
      }
      if (bar == std::string::npos) break;
      from = bar + 1;
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Words candidatesOf(const Position& position, const Words& positionals, const Sources& sources) {
  switch (position.kind) {
    case Kind::kAbility:
      return sources.abilities();
    case Kind::kPersona:
      return sources.personas();
    case Kind::kTool:
      return positionals.empty() ? Words{} : sources.tools(positionals.front());
    case Kind::kCommand:
      return commandNames();
    case Kind::kWords:
      return position.words;
    case Kind::kNone:
      break;
  }
  return {};
}

Words positionalCandidates(const Command& command, const Words& positionals,
                           const Sources& sources) {
  Words subcommands = subcommandsOf(command);
  std::string_view sub;
  Words rest = positionals;
  // A command may take a subcommand or a plain positional in its place, as help takes
  // `rules` or a command's name.
  const auto plain = std::find_if(rules().begin(), rules().end(), [&](const Rule& rule) {
    return rule.command == command.name && rule.subcommand.empty() && !rule.positions.empty();
  });
  const bool plainToo = plain != rules().end();
  const bool subGiven = !positionals.empty() && std::find(subcommands.begin(), subcommands.end(),
                                                          positionals.front()) != subcommands.end();
  if (!subcommands.empty() && (subGiven || !plainToo)) {
    if (positionals.empty()) return subcommands;
    sub = positionals.front();
    rest.erase(rest.begin());
  } else if (!subcommands.empty() && positionals.empty()) {
    Words both = subcommands;
    for (auto& name : candidatesOf(plain->positions.front(), {}, sources)) {
      both.push_back(std::move(name));
    }
    std::sort(both.begin(), both.end());
    both.erase(std::unique(both.begin(), both.end()), both.end());
    return both;
  }
  for (const Rule& rule : rules()) {
    if (rule.command != command.name || rule.subcommand != sub) continue;
    size_t index = rest.size();
    if (index >= rule.positions.size()) {
      if (!rule.lastRepeats || rule.positions.empty()) return {};
      index = rule.positions.size() - 1;
    }
    return candidatesOf(rule.positions[index], rest, sources);
  }
  return {};
}

// Returns the candidates for the last of `words` (the one being typed, perhaps ""), given
// the words before it; the command's name is the first word that is not a global flag.
Words complete(const Words& words, const Sources& sources) {
  if (words.empty()) return {};
  const std::string& current = words.back();
  size_t at = 0;
  const size_t last = words.size() - 1;
  while (at < last && (words[at] == "--verbose" || words[at] == "-v")) ++at;
  Words out;
  if (at == last) {
    if (current.starts_with("-")) {
      out = {"--help", "--verbose", "--version"};
    } else {
      out = commandNames();
    }
  } else {
    const Command* command = findCommand(words[at]);
    if (command == nullptr) return {};
    std::set<std::string> valued;
    Words options = optionsOf(*command, valued);
    Words positionals;
    bool afterDashes = false;
    for (size_t i = at + 1; i < last; ++i) {
      if (!afterDashes && words[i] == "--") {
        afterDashes = true;
      } else if (!afterDashes && words[i].starts_with("-")) {
        if (valued.contains(words[i])) ++i;  // its value is no positional
      } else {
        positionals.push_back(words[i]);
      }
    }
    const std::string& previous = words[last - 1];
    if (last > at + 1 && !afterDashes && valued.contains(previous)) {
      if (previous == "--persona" || previous == "--from") out = sources.personas();
      if (previous == "--ability") out = sources.abilities();
      if (previous == "--names") out = {"bare", "prefixed"};
      if (previous == "--transport") out = {"http", "sse"};
      if (previous == "--http" && command->name == "export") out = {"http://127.0.0.1:8931/mcp"};
    } else if (afterDashes) {
      return {};
    } else if (current.starts_with("-")) {
      out = std::move(options);
    } else {
      out = positionalCandidates(*command, positionals, sources);
    }
  }
  // Only plain words: a shell inserts a candidate as it is, and a name from a broken
  // manifest (";", "$(", a newline) must not become a command on the line.
  Words matching;
  for (auto& word : out) {
    const bool plain = std::all_of(word.begin(), word.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.' ||
             c == ':' || c == '/' || c == '@';
    });
    if (plain && word.starts_with(current)) matching.push_back(std::move(word));
  }
  return matching;
}

Sources realSources() {
  Sources sources;
  auto paths = std::make_shared<core::Result<core::Paths>>(core::Paths::fromEnvironment());
  auto catalog = std::make_shared<std::optional<marketplace::Catalog>>();
  auto loaded = [paths, catalog]() -> const marketplace::Catalog* {
    if (!*paths) return nullptr;
    if (!*catalog) {
      // A broken marketplace list still completes the shipped and the user's own names.
      auto list = marketplace::sync::loadMarketplaceList(**paths);
      *catalog = marketplace::Catalog::loadLayers(marketplace::sync::catalogLayers(
          **paths, list ? *list : marketplace::sync::MarketplaceList{}));
    }
    return &**catalog;
  };
  sources.abilities = [loaded] {
    Words names;
    if (const auto* found = loaded()) {
      for (const auto& record : found->abilities()) names.push_back(record.name);
    }
    return names;
  };
  sources.personas = [loaded] {
    Words names;
    if (const auto* found = loaded()) {
      for (const auto& record : found->personas()) names.push_back(record.name);
    }
    return names;
  };
  sources.tools = [paths](const std::string& ability) {
    if (!*paths) return Words{};
    return core::gateway::MetadataCache((*paths)->dataDir + "/cache/metadata").toolNames(ability);
  };
  return sources;
}

constexpr const char* kBash =
    R"(# bash completion for kaja                                  -*- shell-script -*-
# kaja itself works out the candidates (kaja __complete WORD...); nothing means files.
_kaja() {
  local line=${COMP_LINE:0:COMP_POINT}
  local -a words
  read -r -a words <<<"$line"
  [[ $line == *[[:space:]] ]] && words+=("")
  COMPREPLY=()
  mapfile -t COMPREPLY < <(command kaja __complete "${words[@]:1}" 2>/dev/null)
}
complete -o default -o bashdefault -F _kaja kaja
)";

constexpr const char* kZsh = R"(#compdef kaja
# zsh completion for kaja: kaja itself works out the candidates (kaja __complete WORD...).
_kaja() {
  local -a candidates
  candidates=("${(@f)$(command kaja __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
  if (( ${#candidates} )) && [[ -n ${candidates[1]} ]]; then
    compadd -a candidates
  else
    _files
  fi
}
if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then
  _kaja "$@"
else
  compdef _kaja kaja
fi
)";

constexpr const char* kFish =
    R"(# fish completion for kaja: kaja itself works out the candidates (kaja __complete WORD...).
function __kaja_complete
    set -l before (commandline -opc)
    set -e before[1]
    set -l current (commandline -ct)
    set -l found (command kaja __complete $before "$current" 2>/dev/null)
    if test (count $found) -eq 0
        __fish_complete_path "$current"
    else
        printf '%s\n' $found
    end
end
complete -c kaja -f -a '(__kaja_complete)'
)";

}  // namespace

int runComplete(std::span<const std::string> args) {
  Words words(args.begin(), args.end());
  if (words.empty()) words.emplace_back();
  for (const auto& word : complete(words, realSources())) std::printf("%s\n", word.c_str());
  return kExitOk;
}

int runCompletion(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {});
  if (!parsed) return reportError(parsed.error());
  const std::string shell = parsed->positional.size() == 1 ? parsed->positional[0] : "";
  const char* script = shell == "bash"   ? kBash
                       : shell == "zsh"  ? kZsh
                       : shell == "fish" ? kFish
                                         : nullptr;
  if (script == nullptr) {
    printError(
        "usage: kaja completion bash|zsh|fish; for example, add `source <(kaja completion "
        "bash)` to ~/.bashrc.");
    return kExitUsage;
  }
  std::fputs(script, stdout);
  return kExitOk;
}

}  // namespace kaja::cli
