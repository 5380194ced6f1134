#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/command.h"
#include "cli/help.h"
#include "cli/output.h"
#include "core/manifest/field_reader.h"
#include "core/policy/rule_guide.h"

namespace kaja::cli {
namespace {

constexpr std::string_view kTagline = "runs MCP servers (abilities) for agents, behind a policy";

// What `kaja --help` and the manual say about every command.
constexpr std::string_view kDescription =
    "kaja manages the MCP (Model Context Protocol) servers an agent may use, picks how to "
    "run each one on this machine, and stands between the model and those servers. An "
    "ability is one MCP server, described by a small mcp.toml; a persona says which "
    "abilities are active and narrows them to some tools and some folders. Every tool call "
    "passes kaja's rules: the tool filter, approval, read-only folders, a backup before a "
    "file changes, the output guard and the audit log.";

struct ExitRow {
  std::string_view code;
  std::string_view meaning;
};

constexpr ExitRow kExitRows[] = {
    {"0", "done"},
    {"1",
     "the work ran and failed (a tool returned an error, a server answered the call with an "
     "error status such as HTTP 500, a check failed)"},
    {"2", "usage or configuration error"},
    {"3", "refused by a rule, or approval declined"},
    {"4",
     "could not connect to a server (no answer, a refused key, or a proxy's HTTP 502, 503 or "
     "504)"},
    {"130, 143, 129",
     "stopped by SIGINT (Ctrl-C), SIGTERM or SIGHUP, after ending every server it started, "
     "with all their processes, and removing its temporary folders"},
};

struct EnvRow {
  std::string_view name;
  std::string_view meaning;
};

constexpr EnvRow kEnvironment[] = {
    {"HOME", "where ~ in personas points, and the base of the folders below"},
    {"XDG_CONFIG_HOME", "kaja's config dir is $XDG_CONFIG_HOME/kaja (default ~/.config/kaja)"},
    {"XDG_DATA_HOME",
     "kaja's data dir is $XDG_DATA_HOME/kaja (default ~/.local/share/kaja): backups, the "
     "audit log, caches"},
    {"KAJA_SHIPPED_MARKETPLACE",
     "use this folder as the shipped marketplace instead of ../share/kaja/marketplace beside "
     "the kaja binary"},
    {"NO_COLOR", "when set, kaja never uses colour"},
};

struct FileRow {
  std::string_view path;
  std::string_view meaning;
};

constexpr FileRow kFiles[] = {
    {"~/.config/kaja/marketplace/abilities/NAME/mcp.toml", "your own abilities"},
    {"~/.config/kaja/marketplace/personas/NAME.toml", "your own personas"},
    {"~/.config/kaja/secrets.toml", "API keys (mode 0600), written by kaja key set"},
    {"~/.config/kaja/config.toml", "kaja's own settings"},
    {"~/.config/kaja/persona", "the active persona's name"},
    {"~/.local/share/kaja/backups", "copies of files kept before a call changed them"},
    {"~/.local/share/kaja/audit.jsonl", "one row per tool call"},
    {"../share/kaja/marketplace (beside the binary)", "the shipped abilities and personas"},
};

// Escapes text for roff: backslashes, hyphens (so they stay minus signs when copied), a
// leading dot or apostrophe, which roff would read as a request, and characters beyond
// ASCII, which a man page shown in the C locale would drop: "…" becomes "...", others
// become \[uXXXX].
std::string roff(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  bool lineStart = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (lineStart && (c == '.' || c == '\'')) out += "\\&";
    lineStart = c == '\n';
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (static_cast<unsigned char>(c) < 0x80) {
      out += c;
    } else {
      // A UTF-8 sequence; kaja's own text is well-formed.
      const auto lead = static_cast<unsigned char>(c);
      const size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
      char32_t point = lead & (length == 4 ? 0x07 : length == 3 ? 0x0F : 0x1F);
      for (size_t k = 1; k < length && i + k < text.size(); ++k) {
        point = (point << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
      }
      i += length - 1;
      if (point == U'\u2026') {
        out += "...";
      } else {
        char escape[16];
        std::snprintf(escape, sizeof escape, "\\[u%04X]", static_cast<unsigned>(point));
        out += escape;
      }
    }
  }
  return out;
}

// Returns a rule's meaning as a sentence: a capital letter first and a full stop last.
std::string meaningSentence(std::string_view meaning) {
  std::string text(meaning);
  if (!text.empty() && text[0] >= 'a' && text[0] <= 'z') text[0] = static_cast<char>(text[0] - 32);
  return text + ".";
}

// `kaja help rules [RULE]`: each rule as refusals name it, what it means and what to do.
int printRules(std::span<const std::string> wanted) {
  namespace policy = core::policy;
  std::vector<const policy::RuleGuide*> shown;
  if (wanted.empty()) {
    for (const auto& guide : policy::ruleGuides()) shown.push_back(&guide);
  }
  for (const auto& name : wanted) {
    bool any = false;
    for (const auto& guide : policy::ruleGuides()) {
      const std::string_view code = guide.rule.substr(0, guide.rule.find(' '));
      auto same = [](std::string_view a, std::string_view b) {
        return a.size() == b.size() &&
               std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
                 return std::tolower(static_cast<unsigned char>(x)) ==
                        std::tolower(static_cast<unsigned char>(y));
               });
      };
      if (same(guide.rule, name) || same(code, name)) {
        shown.push_back(&guide);
        any = true;
      }
    }
    if (!any) {
      std::vector<std::string_view> names;
      for (const auto& guide : policy::ruleGuides()) names.push_back(guide.rule);
      printError("kaja has no rule named \"" + name + "\"" +
                 core::didYouMean(name, std::span<const std::string_view>(names)) +
                 " (kaja help rules lists them)");
      return kExitUsage;
    }
  }
  std::printf("The rules kaja refuses by, as refusals, warnings and audit rows name them.\n");
  for (const auto* guide : shown) {
    std::printf("\n%.*s\n", static_cast<int>(guide->rule.size()), guide->rule.data());
    for (const auto& line : wrapWords(meaningSentence(guide->meaning), 74)) {
      std::printf("    %s\n", line.c_str());
    }
    for (const auto& line : wrapWords("What to do: " + std::string(guide->remedy) + ".", 74)) {
      std::printf("    %s\n", line.c_str());
    }
  }
  return kExitOk;
}

}  // namespace

void printUsage(std::FILE* out) {
  std::fprintf(out, "kaja %s: %.*s.\n\nUsage: kaja [--verbose] COMMAND [OPTIONS]\n\nCommands:\n",
               KAJA_VERSION, static_cast<int>(kTagline.size()), kTagline.data());
  for (const auto& command : commands()) {
    const std::string synopsis(command.synopsis);
    const size_t width = displayWidth(synopsis);
    const std::string gap = width > 44 ? "\n" + std::string(47, ' ') : std::string(45 - width, ' ');
    std::fprintf(out, "  %s%s%.*s\n", synopsis.c_str(), gap.c_str(),
                 static_cast<int>(command.summary.size()), command.summary.data());
  }
  std::fprintf(out,
               "\nEvery command takes --help; `man kaja` has them all. Colour is used only on "
               "a terminal, never with NO_COLOR set.\n\nExit codes:\n");
  for (const auto& row : kExitRows) {
    std::fprintf(out, "  %.*s  %.*s\n", static_cast<int>(row.code.size()), row.code.data(),
                 static_cast<int>(row.meaning.size()), row.meaning.data());
  }
}

void printCommandHelp(const Command& command) {
  std::printf("Usage: kaja %.*s\n\n%.*s", static_cast<int>(command.synopsis.size()),
              command.synopsis.data(), static_cast<int>(command.help.size()), command.help.data());
}

const Command* findCommand(std::string_view name) {
  for (const auto& command : commands()) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

std::string unknownCommand(std::string_view name) {
  std::vector<std::string_view> names;
  for (const auto& command : commands()) names.push_back(command.name);
  std::string message = "unknown command \"" + std::string(name) + "\"";
  std::string near = core::nearestWord(name, std::span<const std::string_view>(names));
  if (!near.empty()) message += "; did you mean \"" + near + "\"?";
  return message + " (kaja --help lists the commands)";
}

std::string manPage() {
  std::ostringstream out;
  out << ".TH KAJA 1 \"\" \"kaja " << KAJA_VERSION << "\" \"User Commands\"\n"
      << ".SH NAME\nkaja \\- " << roff(kTagline) << "\n"
      << ".SH SYNOPSIS\n";
  for (const auto& command : commands()) {
    out << ".B kaja\n" << roff(command.synopsis) << "\n.br\n";
  }
  out << ".SH DESCRIPTION\n"
      << roff(kDescription) << "\n.PP\nEvery command takes "
      << "\\fB\\-\\-help\\fR, which prints its section of this page. "
      << "\\fB\\-\\-verbose\\fR (or \\fB\\-v\\fR), before or after the command, adds detail "
      << "to errors.\n.SH COMMANDS\n";
  for (const auto& command : commands()) {
    out << ".SS \"kaja " << roff(command.name) << "\"\n"
        << ".B kaja " << roff(command.synopsis) << "\n.PP\n"
        << roff(command.summary) << ".\n.PP\n.nf\n"
        << roff(command.help) << (command.help.ends_with('\n') ? "" : "\n") << ".fi\n";
  }
  out << ".SH \"EXIT STATUS\"\n";
  for (const auto& row : kExitRows) {
    out << ".TP\n.B " << roff(row.code) << "\n" << roff(row.meaning) << "\n";
  }
  out << ".SH RULES\nThe rules kaja refuses by, as refusals and audit rows name them "
      << "(\\fBkaja help rules\\fR prints this list).\n";
  for (const auto& guide : core::policy::ruleGuides()) {
    out << ".TP\n.B " << roff(guide.rule) << "\n"
        << roff(meaningSentence(guide.meaning)) << " What to do: " << roff(guide.remedy) << ".\n";
  }
  out << ".SH ENVIRONMENT\n";
  for (const auto& row : kEnvironment) {
    out << ".TP\n.B " << roff(row.name) << "\n" << roff(row.meaning) << "\n";
  }
  out << ".SH FILES\n";
  for (const auto& row : kFiles) {
    out << ".TP\n.I " << roff(row.path) << "\n" << roff(row.meaning) << "\n";
  }
  out << ".SH \"SEE ALSO\"\n"
      << ".BR bwrap (1),\n.BR docker (1),\n.BR npx (1)\n";
  return out.str();
}

int runHelp(std::span<const std::string> args) {
  auto parsed = parseArgs(args, {"--man"});
  if (!parsed) return reportError(parsed.error());
  if (parsed->has("--man")) {
    std::fputs(manPage().c_str(), stdout);
    return kExitOk;
  }
  if (parsed->positional.empty()) {
    printUsage(stdout);
    return kExitOk;
  }
  if (parsed->positional[0] == "rules") {
    return printRules(std::span(parsed->positional).subspan(1));
  }
  const Command* command = findCommand(parsed->positional[0]);
  if (command == nullptr) {
    printError(unknownCommand(parsed->positional[0]));
    return kExitUsage;
  }
  printCommandHelp(*command);
  return kExitOk;
}

}  // namespace kaja::cli
