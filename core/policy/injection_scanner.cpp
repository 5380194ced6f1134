#include "core/policy/injection_scanner.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <string_view>
#include <unordered_map>

#include "core/policy/text_normalizer.h"
#include "core/util/quote.h"
#include "core/util/unicode.h"

namespace kaja::core::policy {
namespace {

// A pattern is a sequence of slots over the words of a normalised string. A slot accepts one
// of its words between `min` and `max` times in a row; a slot with no words accepts any word
// (a gap). Words are compiled to ids so that matching is a table lookup per token.
struct Slot {
  std::vector<std::string> words;
  int min = 1;
  int max = 1;
  std::vector<char> accepts;  // by word id; empty for a gap
};

struct Pattern {
  std::string name;
  std::vector<Slot> slots;
};

struct WordHash {
  using is_transparent = void;
  size_t operator()(std::string_view word) const { return std::hash<std::string_view>{}(word); }
};

// Every word any pattern names, by id; id 0 is every other word.
using Dictionary = std::unordered_map<std::string, uint32_t, WordHash, std::equal_to<>>;

// Spec syntax: slots separated by spaces, alternatives by commas; `x?` optional, `x*` up to
// three times, `x+` once or twice, `~N` up to N words of anything.
Pattern parsePattern(std::string_view name, std::string_view spec) {
  Pattern pattern{std::string(name), {}};
  size_t pos = 0;
  while (pos < spec.size()) {
    size_t end = spec.find(' ', pos);
    if (end == std::string_view::npos) end = spec.size();
    std::string_view piece = spec.substr(pos, end - pos);
    pos = end + 1;
    if (piece.empty()) continue;
    Slot slot;
    if (piece.front() == '~') {
      slot.min = 0;
      slot.max = piece[1] - '0';
      pattern.slots.push_back(std::move(slot));
      continue;
    }
    if (piece.size() > 1 && (piece.back() == '?' || piece.back() == '*' || piece.back() == '+')) {
      slot.min = piece.back() == '+' ? 1 : 0;
      slot.max = piece.back() == '?' ? 1 : piece.back() == '+' ? 2 : 3;
      piece.remove_suffix(1);
    }
    size_t start = 0;
    while (start <= piece.size()) {
      size_t comma = piece.find(',', start);
      if (comma == std::string_view::npos) comma = piece.size();
      slot.words.emplace_back(piece.substr(start, comma - start));
      start = comma + 1;
    }
    pattern.slots.push_back(std::move(slot));
  }
  return pattern;
}

#define KAJA_VERB "ignore,disregard,forget,override,bypass,neglect,overlook,discard,abandon"
#define KAJA_DET "all,any,the,of,your,my,these,those,every,its,their,our,previously,given"
#define KAJA_PRIOR                                                                             \
  "previous,prior,above,earlier,preceding,former,foregoing,original,initial,system,developer," \
  "safety,security,given"
#define KAJA_RULES                                                                           \
  "instructions,instruction,prompts,prompt,rules,directives,directions,guidelines,guidance," \
  "constraints,restrictions,programming,orders,policies"
#define KAJA_TELL "tell,inform,mention,reveal,disclose,notify,alert,say,show"
#define KAJA_USER "user,users,human,humans"

struct CompiledPatterns {
  Dictionary dictionary;
  std::vector<Pattern> patterns;
};

const CompiledPatterns& compiledPatterns() {
  static const auto* all = [] {
    struct Spec {
      std::string_view name, spec;
    };
    static constexpr std::array kSpecs = {
        Spec{"role-tag", "< /? system,assistant,developer >"},
        Spec{"role-tag", "< | im start,end,sep | >"},
        Spec{"role-tag", "< | system,assistant,user,endoftext | >"},
        Spec{"role-tag", "< | start,end header id | >"},
        Spec{"role-tag", "< | eot id | >"},
        Spec{"role-tag", "< start,end of turn >"},
        Spec{"role-tag", "[ /? inst ]"},
        Spec{"role-tag", "[ system,assistant ]"},
        Spec{"role-tag", "< < /? sys > >"},
        Spec{"role-tag", "# # # system,assistant"},
        Spec{"ignore-instructions", KAJA_VERB " " KAJA_DET "* " KAJA_PRIOR "+ " KAJA_RULES},
        Spec{"ignore-instructions",
             KAJA_VERB " all,your,any,these,those,my "
                       "instructions,instruction,prompts,directives,programming,guidelines,orders"},
        Spec{"ignore-instructions",
             KAJA_VERB " everything,anything above,before,prior,previously,earlier,else"},
        Spec{"ignore-instructions",
             KAJA_VERB " everything,anything,all you ~2 told,said,learned,know,were,been"},
        Spec{"ignore-instructions",
             "not,t,never follow,obey,heed,respect " KAJA_DET "* " KAJA_PRIOR "+ " KAJA_RULES},
        Spec{"ignore-instructions",
             KAJA_PRIOR " " KAJA_RULES
                        " are,were,is,have,has ~2 longer,obsolete,void,cancelled,canceled,invalid,"
                        "overridden,revoked,superseded,replaced,null"},
        Spec{"new-instructions",
             "new,updated,revised,real,actual,true,secret,hidden,override system? "
             "instructions,instruction,directive,directives,orders :"},
        Spec{"new-instructions",
             "new,updated,revised,real,actual,true,secret,hidden,override system prompt,message :"},
        Spec{"new-instructions",
             "your new,real,true,actual,updated "
             "task,role,goal,purpose,instructions,job,objective,mission is,are,now"},
        Spec{"you-are-now",
             "you are,re now,henceforth,hereby "
             "a,an,the,in,acting,my,dan,free,no,going,unrestricted,jailbroken,operating,playing,"
             "called,named,allowed,authorized,permitted,instructed,to,under"},
        Spec{"you-are-now",
             "from now on,onward,onwards,forward "
             "you,your,always,never,ignore,respond,act,only,answer"},
        Spec{"you-are-now", "pretend,imagine you are,re"},
        Spec{"act-as-system",
             "act,behave,respond,pose as,like the,a,an? "
             "system,superuser,developer,admin,administrator,jailbreak,jailbroken,dan,"
             "unrestricted,god"},
        Spec{"act-as-system", "you are,re the,a,an? system,superuser"},
        Spec{"act-as-system",
             "enable,enter,activate,switch,unlock to? god,jailbreak,jailbroken,dan,unrestricted "
             "mode"},
        Spec{"conceal-from-user", "do,don not,t " KAJA_TELL " ~3 " KAJA_USER},
        Spec{"conceal-from-user", "never " KAJA_TELL " ~3 " KAJA_USER},
        Spec{"conceal-from-user",
             "without telling,informing,notifying,alerting,letting ~2 " KAJA_USER},
        Spec{"conceal-from-user", "hide,conceal ~3 from ~1 " KAJA_USER},
        Spec{"conceal-from-user", "keep ~3 secret,hidden,private,confidential from ~1 " KAJA_USER},
        Spec{"conceal-from-user", KAJA_USER " must,should,shall,will,may not,never ~1 "
                                            "know,notice,find,learn,suspect,told,informed,aware"},
    };
    auto* compiled = new CompiledPatterns;
    for (const auto& spec : kSpecs)
      compiled->patterns.push_back(parsePattern(spec.name, spec.spec));
    for (const auto& pattern : compiled->patterns) {
      for (const auto& slot : pattern.slots) {
        for (const auto& word : slot.words) {
          compiled->dictionary.emplace(word,
                                       static_cast<uint32_t>(compiled->dictionary.size() + 1));
        }
      }
    }
    for (auto& pattern : compiled->patterns) {
      for (auto& slot : pattern.slots) {
        if (slot.words.empty()) continue;
        slot.accepts.assign(compiled->dictionary.size() + 1, 0);
        for (const auto& word : slot.words)
          slot.accepts[compiled->dictionary.find(word)->second] = 1;
      }
    }
    return compiled;
  }();
  return *all;
}

#undef KAJA_VERB
#undef KAJA_DET
#undef KAJA_PRIOR
#undef KAJA_RULES
#undef KAJA_TELL
#undef KAJA_USER

bool isPunctuationToken(char c) {
  return std::string_view("<>|[]#/:").find(c) != std::string_view::npos;
}

// Returns the length of the UTF-8 sequence at text[i] (1 for a stray byte) and whether the
// code point is a letter or a combining mark of any script.
std::pair<size_t, bool> nonAsciiAt(std::string_view text, size_t i) {
  auto lead = static_cast<unsigned char>(text[i]);
  size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  if (length == 1 || i + length > text.size()) return {1, false};
  char32_t c = lead & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80) return {1, false};
    c = (c << 6) | (next & 0x3F);
  }
  auto kind = unicode::charKind(c);
  return {length, kind == unicode::CharKind::kLetter || kind == unicode::CharKind::kMark};
}

// Splits normalised text into words and the punctuation that role tags are made of. A word is
// a run of letters (with their marks); every other code point (digits, punctuation, symbols,
// the braille blank, "·", "’") separates words, so no character can glue two words together.
std::vector<std::string_view> tokenize(std::string_view text) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  size_t start = std::string_view::npos;
  auto endWord = [&](size_t at) {
    if (start != std::string_view::npos) tokens.push_back(text.substr(start, at - start));
    start = std::string_view::npos;
  };
  while (i < text.size()) {
    char c = text[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      auto [length, letter] = nonAsciiAt(text, i);
      if (letter && start == std::string_view::npos) start = i;
      if (!letter) endWord(i);
      i += length;
      continue;
    }
    if (c >= 'a' && c <= 'z') {
      if (start == std::string_view::npos) start = i;
      ++i;
      continue;
    }
    endWord(i);
    if (isPunctuationToken(c)) tokens.push_back(text.substr(i, 1));
    ++i;
  }
  endWord(text.size());
  return tokens;
}

std::vector<uint32_t> wordIds(const std::vector<std::string_view>& tokens,
                              const Dictionary& dictionary) {
  std::vector<uint32_t> ids;
  ids.reserve(tokens.size());
  for (auto token : tokens) {
    auto it = dictionary.find(token);
    ids.push_back(it == dictionary.end() ? 0 : it->second);
  }
  return ids;
}

bool slotAccepts(const Slot& slot, uint32_t id) {
  return slot.accepts.empty() || slot.accepts[id] != 0;
}

bool matchesAt(const std::vector<uint32_t>& ids, size_t pos, const Pattern& pattern,
               size_t slotIndex) {
  if (slotIndex == pattern.slots.size()) return true;
  const Slot& slot = pattern.slots[slotIndex];
  int taken = 0;
  while (true) {
    if (taken >= slot.min && matchesAt(ids, pos + taken, pattern, slotIndex + 1)) return true;
    if (taken == slot.max || pos + taken >= ids.size()) return false;
    if (!slotAccepts(slot, ids[pos + taken])) return false;
    ++taken;
  }
}

bool matches(const std::vector<uint32_t>& ids, const Pattern& pattern) {
  for (size_t pos = 0; pos < ids.size(); ++pos) {
    if (slotAccepts(pattern.slots.front(), ids[pos]) && matchesAt(ids, pos, pattern, 0)) {
      return true;
    }
  }
  return false;
}

bool isAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// `.env` names a secrets file; these suffixes name templates that by convention hold none.
bool isEnvTemplate(std::string_view rest) {
  for (std::string_view suffix : {"example", "sample", "template", "dist"}) {
    if (rest.starts_with(suffix) &&
        (rest.size() == suffix.size() || !isAlnum(rest[suffix.size()]))) {
      return true;
    }
  }
  return false;
}

bool mentionsSecretPath(std::string_view text) {
  static constexpr std::array<std::string_view, 19> kNeedles = {".ssh",
                                                                "id_rsa",
                                                                "id_dsa",
                                                                "id_ecdsa",
                                                                "id_ed25519",
                                                                "authorized_keys",
                                                                ".aws/credentials",
                                                                "/etc/shadow",
                                                                ".netrc",
                                                                ".git-credentials",
                                                                ".kube/config",
                                                                ".docker/config.json",
                                                                "keychain",
                                                                ".pgpass",
                                                                ".npmrc",
                                                                ".pypirc",
                                                                ".gnupg",
                                                                ".envrc",
                                                                ".env"};
  for (std::string_view needle : kNeedles) {
    for (size_t at = text.find(needle); at != std::string_view::npos;
         at = text.find(needle, at + 1)) {
      // "process.env" is a property and "myid_rsa" another word: the mention must start one.
      if (at > 0 && (isAlnum(text[at - 1]) || text[at - 1] == '_')) continue;
      size_t end = at + needle.size();
      std::string_view rest = text.substr(end);
      if (needle == "keychain" && rest.starts_with("s")) rest.remove_prefix(1);
      if (!rest.empty() && (isAlnum(rest.front()) || rest.front() == '_')) continue;
      if (needle == ".env" && rest.starts_with(".") && isEnvTemplate(rest.substr(1))) continue;
      return true;
    }
  }
  return false;
}

void scanVariants(std::string_view text, const std::vector<NormalizeOptions>& variants,
                  std::set<std::string_view>& found) {
  const auto& compiled = compiledPatterns();
  for (const auto& options : variants) {
    std::string normalized = normalizeForScan(text, options);
    auto ids = wordIds(tokenize(normalized), compiled.dictionary);
    // Most strings share no word with any pattern; they need no matching at all.
    if (std::any_of(ids.begin(), ids.end(), [](uint32_t id) { return id != 0; })) {
      for (const auto& pattern : compiled.patterns) {
        if (!found.contains(pattern.name) && matches(ids, pattern)) found.insert(pattern.name);
      }
    }
    if (mentionsSecretPath(normalized)) found.insert("secret-path");
  }
}

// True when `text` has a lowercase-uppercase step that splitting camelCase would break.
bool hasCamelStep(std::string_view text) {
  for (size_t i = 1; i < text.size(); ++i) {
    if (text[i] >= 'A' && text[i] <= 'Z' && text[i - 1] >= 'a' && text[i - 1] <= 'z') return true;
  }
  return false;
}

void scanInto(std::string_view text, const std::string& field, bool identifier,
              std::vector<InjectionFinding>& out) {
  std::set<std::string_view> found;
  // Each way of reading the text that can give other words: invisible characters removed
  // or read as spaces, and for identifiers camelCase kept or split.
  bool invisible = hasInvisible(text);
  bool camel = identifier && hasCamelStep(text);
  std::vector<NormalizeOptions> variants = {{InvisibleMode::kRemove, false}};
  if (invisible) variants.push_back({InvisibleMode::kSpace, false});
  if (camel) variants.push_back({InvisibleMode::kRemove, true});
  if (invisible && camel) variants.push_back({InvisibleMode::kSpace, true});
  std::vector<std::string> texts = {std::string(text)};
  if (invisible) {
    // What tag characters spell is read by a model though no one sees it: scan it too, and
    // refuse it outright, since no tool has an honest reason to hide text.
    if (std::string hidden = hiddenTagText(text); !hidden.empty()) {
      found.insert("hidden-text");
      texts.push_back(std::move(hidden));
    }
    // A name or key is sent back to the server as written: with invisible characters in it,
    // what the model is shown and what the server receives would differ.
    if (identifier) found.insert("invisible-characters");
  }
  for (const auto& scanned : texts) scanVariants(scanned, variants, found);
  for (auto name : found) out.push_back({std::string(name), field});
}

void scanJson(const mcp::Json& value, const std::string& path, int depth, const ScanLimits& limits,
              std::vector<InjectionFinding>& out) {
  if (value.is_string()) {
    scanInto(value.get_ref<const std::string&>(), path, false, out);
    return;
  }
  if (!value.is_object() && !value.is_array()) return;
  if (depth >= limits.maxSchemaDepth) {
    out.push_back({"schema-too-deep", path});
    return;
  }
  if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      scanJson(value[i], path + "[" + std::to_string(i) + "]", depth + 1, limits, out);
    }
    return;
  }
  for (const auto& [key, child] : value.items()) {
    std::string childPath = path + "." + key;
    scanInto(key, childPath + " (key)", true, out);
    scanJson(child, childPath, depth + 1, limits, out);
  }
}

}  // namespace

std::vector<InjectionFinding> scanText(std::string_view text, std::string_view field,
                                       bool identifier) {
  std::vector<InjectionFinding> findings;
  scanInto(text, std::string(field), identifier, findings);
  return findings;
}

std::vector<InjectionFinding> scanTool(const mcp::Tool& tool, const ScanLimits& limits) {
  std::vector<InjectionFinding> findings;
  scanInto(tool.name, "name", true, findings);
  if (!tool.title.empty()) scanInto(tool.title, "title", false, findings);
  if (decodeUtf8(tool.description).size() > limits.maxDescriptionChars) {
    findings.push_back({"description-too-long", "description"});
  }
  scanInto(tool.description, "description", false, findings);
  if (tool.raw.is_object()) {
    auto annotations = tool.raw.find("annotations");
    if (annotations != tool.raw.end() && annotations->is_object()) {
      auto title = annotations->find("title");
      if (title != annotations->end() && title->is_string()) {
        scanInto(title->get_ref<const std::string&>(), "annotations.title", false, findings);
      }
    }
    auto output = tool.raw.find("outputSchema");
    if (output != tool.raw.end()) scanJson(*output, "outputSchema", 0, limits, findings);
  }
  scanJson(tool.inputSchema, "inputSchema", 0, limits, findings);
  return findings;
}

std::string describeFindings(const std::vector<InjectionFinding>& findings) {
  std::string text;
  for (const auto& finding : findings) {
    if (!text.empty()) text += ", ";
    // A field names a schema key, which the server chose: shown escaped, on one line.
    text += finding.pattern + " in " + escapeForMessage(finding.field);
  }
  return text;
}

}  // namespace kaja::core::policy
