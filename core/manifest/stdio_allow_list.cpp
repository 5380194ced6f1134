#include "core/manifest/stdio_allow_list.h"

#include <cstdio>
#include <utility>

namespace kaja::core {
namespace {

bool isControl(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; }

// One word as read, before it is known whether it is the wildcard.
struct Word {
  std::string text;
  bool quoted = false;     ///< some part of it was in double quotes
  bool looseStar = false;  ///< an unquoted '*' is in it
};

// Splits `text` into words (see the header for the rules); "" or a problem.
std::string splitWords(std::string_view text, std::vector<Word>& words) {
  std::optional<Word> word;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (isControl(c)) {
      return "must not hold tabs, newlines or other control characters; separate words with "
             "single spaces.";
    }
    if (c == ' ') {
      if (word) words.push_back(std::move(*word));
      word.reset();
      continue;
    }
    if (!word) word.emplace();
    if (c != '"') {
      word->looseStar = word->looseStar || c == '*';
      word->text += c;
      continue;
    }
    word->quoted = true;
    for (++i;; ++i) {
      if (i >= text.size()) return "has a '\"' that is never closed.";
      const char inner = text[i];
      if (isControl(inner)) {
        return "must not hold tabs, newlines or other control characters, even in quotes.";
      }
      if (inner == '"') break;
      if (inner == '\\') {
        if (i + 1 >= text.size() || (text[i + 1] != '"' && text[i + 1] != '\\')) {
          return "has a '\\' in quotes that is not followed by '\"' or '\\'; inside quotes only "
                 "\\\" and \\\\ are escapes.";
        }
        ++i;
      }
      word->text += text[i];
    }
  }
  if (word) words.push_back(std::move(*word));
  return "";
}

// Returns true for a name (no '/') or an absolute path with no empty, '.' or '..' part.
bool plainProgram(const std::string& program) {
  if (program.find('/') == std::string::npos) return true;
  if (!program.starts_with('/')) return false;
  size_t start = 1;
  while (start <= program.size()) {
    size_t end = program.find('/', start);
    if (end == std::string::npos) end = program.size();
    const std::string_view part(program.data() + start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

bool matches(const StdioAllowRule& rule, const std::vector<std::string>& argv,
             const ProgramFinder& find) {
  const size_t own = rule.words.size();
  if (rule.moreArgs ? argv.size() < own : argv.size() != own) return false;
  const std::string& program = rule.words.front();
  if (program.find('/') != std::string::npos) {
    if (argv.front() != program) return false;
  } else {
    // A name means the program kaja itself would find for it: never whatever an ability
    // names by a path of its own.
    const auto found = find ? find(program) : std::nullopt;
    if (!found || *found != argv.front()) return false;
  }
  for (size_t i = 1; i < own; ++i) {
    if (argv[i] != rule.words[i]) return false;
  }
  return true;
}

}  // namespace

std::expected<StdioAllowRule, std::string> parseStdioAllowRule(std::string_view text) {
  std::vector<Word> words;
  if (std::string problem = splitWords(text, words); !problem.empty()) {
    return std::unexpected(std::move(problem));
  }
  if (words.empty()) {
    return std::unexpected(
        "is empty; give a command line such as \"npx -y @scope/server@1.2.3 *\".");
  }
  StdioAllowRule rule;
  rule.text = std::string(text);
  for (size_t i = 0; i < words.size(); ++i) {
    Word& word = words[i];
    if (word.looseStar) {
      const bool wildcard = word.text == "*" && !word.quoted;
      if (wildcard && i + 1 == words.size() && i > 0) {
        rule.moreArgs = true;
        break;
      }
      if (wildcard && i == 0) {
        return std::unexpected("must start with a program, not '*'.");
      }
      if (wildcard) {
        return std::unexpected(
            "has a '*' before its last word; '*' allows further arguments only as the last "
            "word.");
      }
      return std::unexpected("has a '*' inside the word \"" + word.text +
                             "\"; '*' is a wildcard only as a word of its own at the end (put "
                             "the word in double quotes to mean a literal '*').");
    }
    rule.words.push_back(std::move(word.text));
  }
  const std::string& program = rule.words.front();
  if (program.empty() || !plainProgram(program)) {
    return std::unexpected("starts with the program \"" + program +
                           "\"; give a name found on PATH, such as npx, or an absolute path "
                           "without '.' or '..' parts.");
  }
  return rule;
}

std::string formatStdioCommandLine(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& word : argv) {
    if (!out.empty()) out += ' ';
    bool quote = word.empty();
    for (const char c : word) quote = quote || c == ' ' || c == '"' || c == '*' || isControl(c);
    if (!quote) {
      out += word;
      continue;
    }
    out += '"';
    for (const char c : word) {
      if (isControl(c)) {
        char hex[5];
        std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned char>(c));
        out += hex;
        continue;
      }
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out;
}

bool StdioAllowList::allows(const std::vector<std::string>& argv, const ProgramFinder& find) const {
  if (argv.empty()) return false;
  for (const auto& rule : rules) {
    if (matches(rule, argv, find)) return true;
  }
  return false;
}

std::string StdioAllowList::refusal(const std::string& ability,
                                    const std::vector<std::string>& argv) const {
  return "the stdio allow-list does not allow ability " + ability + "'s command line `" +
         formatStdioCommandLine(argv) + "`; to allow it, add that line to " + whereToAdd +
         " (end it with ` *` to allow further arguments)";
}

}  // namespace kaja::core
