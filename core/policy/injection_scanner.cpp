#include "core/policy/injection_scanner.h"

#include <algorithm>
#include <array>
#include <set>
#include <string_view>

#include "core/policy/text_normalizer.h"
#include "core/policy/word_lattice.h"
#include "core/util/quote.h"

namespace kaja::core::policy {
namespace {

// A pattern is a sequence of slots over the words of a normalised string (see WordLattice).
// Words are compiled to vocabulary ids so that matching is a table lookup per word.
// Spec syntax: slots separated by spaces, alternatives by commas; `x?` optional, `x*` up to
// three times, `x+` once or twice, `~N` up to N words of anything.
PhrasePattern parsePattern(std::string_view name, std::string_view spec) {
  PhrasePattern pattern{std::string(name), {}};
  size_t pos = 0;
  while (pos < spec.size()) {
    size_t end = spec.find(' ', pos);
    if (end == std::string_view::npos) end = spec.size();
    std::string_view piece = spec.substr(pos, end - pos);
    pos = end + 1;
    if (piece.empty()) continue;
    PhraseSlot slot;
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
  Vocabulary vocabulary;
  std::vector<PhrasePattern> patterns;
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
        for (const auto& word : slot.words) compiled->vocabulary.add(word);
      }
    }
    for (auto& pattern : compiled->patterns) {
      for (auto& slot : pattern.slots) {
        if (slot.words.empty()) continue;
        slot.accepts.assign(compiled->vocabulary.ids.size() + 1, 0);
        for (const auto& word : slot.words) {
          slot.ids.push_back(compiled->vocabulary.idOf(word));
          slot.accepts[slot.ids.back()] = 1;
        }
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

bool isAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// `.env` names a secrets file; these suffixes name templates that by convention hold none.
// Returns the length of the one `rest` starts with (ending a word), or 0.
size_t envTemplateLength(std::string_view rest) {
  for (std::string_view suffix : {"example", "sample", "template", "dist"}) {
    if (rest.starts_with(suffix) &&
        (rest.size() == suffix.size() || !isAlnum(rest[suffix.size()]))) {
      return suffix.size();
    }
  }
  return 0;
}

// Returns true when `normalized` names a secrets file. In marked text (InvisibleMode::kMark)
// each mark is read as nothing or as a break, whichever names one: ".s\u200bsh",
// "cat\u200b.env\u200bfirst" and ".env\u200b.example" all do.
bool mentionsSecretPath(std::string_view normalized) {
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
  std::string unmarked;
  std::vector<char> markBefore;  // by position in `text`: a mark stood just before it
  std::string_view text = normalized;
  if (normalized.find(kWordBreakMark) != std::string_view::npos) {
    markBefore.assign(normalized.size() + 1, 0);
    for (char c : normalized) {
      if (c == kWordBreakMark) {
        markBefore[unmarked.size()] = 1;
      } else {
        unmarked += c;
      }
    }
    text = unmarked;
  }
  auto marked = [&](size_t at) { return !markBefore.empty() && markBefore[at] != 0; };
  auto wordChar = [&](size_t at) {
    return at < text.size() && (isAlnum(text[at]) || text[at] == '_');
  };
  for (std::string_view needle : kNeedles) {
    for (size_t at = text.find(needle); at != std::string_view::npos;
         at = text.find(needle, at + 1)) {
      // "process.env" is a property and "myid_rsa" another word: the mention must start one.
      if (at > 0 && !marked(at) && wordChar(at - 1)) continue;
      size_t end = at + needle.size();
      if (needle == "keychain" && text.substr(end).starts_with("s")) ++end;
      if (!marked(end) && wordChar(end)) continue;
      if (needle == ".env" && text.substr(end).starts_with(".")) {
        // A template only if it reads as one however its marks are read.
        size_t length = envTemplateLength(text.substr(end + 1));
        bool markInside = false;
        for (size_t i = end; length != 0 && i <= end + 1 + length && i < markBefore.size(); ++i) {
          markInside = markInside || markBefore[i] != 0;
        }
        if (length != 0 && !markInside) continue;
      }
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
    WordLattice lattice(normalized, compiled.vocabulary);
    // Most strings share no word with any pattern; they need no matching at all.
    if (lattice.mentionsAnyWord()) {
      for (const auto& pattern : compiled.patterns) {
        if (!found.contains(pattern.name) && lattice.matches(pattern)) found.insert(pattern.name);
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
  // Each way of reading the text that can give other words: invisible characters removed,
  // or each run of them read as nothing or as a word break (whichever gives a word), and for
  // identifiers camelCase kept or split.
  bool invisible = hasInvisible(text);
  // The step is looked for with invisible characters taken out: one slipped in between the
  // two letters ("keychain\u200bSen") must not hide it.
  bool camel = identifier && hasCamelStep(invisible ? stripInvisible(text) : std::string(text));
  std::vector<NormalizeOptions> variants = {{InvisibleMode::kRemove, false}};
  if (invisible) variants.push_back({InvisibleMode::kMark, false});
  if (camel) variants.push_back({InvisibleMode::kRemove, true});
  if (invisible && camel) variants.push_back({InvisibleMode::kMark, true});
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
