#include "core/policy/word_lattice.h"

#include <algorithm>
#include <array>

#include "core/policy/text_normalizer.h"
#include "core/util/unicode.h"

namespace kaja::core::policy {
namespace {

struct Token {
  size_t begin = 0;
  size_t end = 0;
  bool word = false;  // a run of letters, not a punctuation token
};

bool isPunctuationToken(char c) {
  return std::string_view("<>|[]#/:").find(c) != std::string_view::npos;
}

// Returns the code point at text[i] and sets `length` to its UTF-8 length; a stray byte reads
// as U+FFFD with length 1 (normalised text has none, but nothing here relies on that).
char32_t codePointAt(std::string_view text, size_t i, size_t& length) {
  auto lead = static_cast<unsigned char>(text[i]);
  length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
  if (length == 0 || i + length > text.size()) {
    length = 1;
    return 0xFFFD;
  }
  if (length == 1) return lead;
  char32_t c = lead & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80) {
      length = 1;
      return 0xFFFD;
    }
    c = (c << 6) | (next & 0x3F);
  }
  return c;
}

bool isLetterOrMark(char32_t c) {
  if (c < 0x80) return c >= 'a' && c <= 'z';
  auto kind = unicode::charKind(c);
  return kind == unicode::CharKind::kLetter || kind == unicode::CharKind::kMark;
}

// Splits normalised text into words and the punctuation that role tags are made of. A word is
// a run of letters (with their marks); every other code point (digits, punctuation, symbols,
// the braille blank, "·", "’", the word-break mark) separates words.
std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> tokens;
  size_t start = std::string_view::npos;
  auto endWord = [&](size_t at) {
    if (start != std::string_view::npos) tokens.push_back({start, at, true});
    start = std::string_view::npos;
  };
  size_t length = 0;
  for (size_t i = 0; i < text.size(); i += length) {
    char32_t c = codePointAt(text, i, length);
    if (isLetterOrMark(c)) {
      if (start == std::string_view::npos) start = i;
      continue;
    }
    endWord(i);
    if (c < 0x80 && isPunctuationToken(static_cast<char>(c))) tokens.push_back({i, i + 1, false});
  }
  endWord(text.size());
  return tokens;
}

// Marks a reader skips inside a word: "ig.nore", "ig-nore", "ig_nore", "ig'nore", "ig*nore",
// "ig·nore" (a dictionary's syllable dot) and "ig‧nore" (the hyphenation point).
bool isInWordMark(char32_t c) {
  return c == '.' || c == '-' || c == '_' || c == '\'' || c == '*' || c == 0x00B7 || c == 0x2027;
}

// Whether the text between two words may be read as nothing: only word-break marks; one or
// two in-word marks; a hyphen and a space (a word hyphenated at the end of a line, once
// whitespace is collapsed); a space between two single letters ("i g n o r e").
bool isSoftBreak(std::string_view between, bool singleLetters) {
  std::array<char32_t, 2> seen{};
  size_t count = 0;
  size_t length = 0;
  for (size_t i = 0; i < between.size(); i += length) {
    char32_t c = codePointAt(between, i, length);
    if (c == static_cast<char32_t>(kWordBreakMark)) continue;
    if (count == seen.size()) return false;
    seen[count++] = c;
  }
  if (count == 0) return true;
  if (count == 1 && seen[0] == ' ') return singleLetters;
  if (count == 2 && seen[0] == '-' && seen[1] == ' ') return true;
  return std::all_of(seen.begin(), seen.begin() + count, isInWordMark);
}

}  // namespace

uint32_t Vocabulary::add(std::string_view word) {
  longest = std::max(longest, word.size());
  return ids.emplace(std::string(word), static_cast<uint32_t>(ids.size() + 1)).first->second;
}

uint32_t Vocabulary::idOf(std::string_view word) const {
  auto it = ids.find(word);
  return it == ids.end() ? 0 : it->second;
}

WordLattice::WordLattice(std::string_view normalized, const Vocabulary& vocabulary) {
  addEdges(normalized, vocabulary);
}

void WordLattice::addEdges(std::string_view text, const Vocabulary& vocabulary) {
  std::vector<Token> tokens = tokenize(text);
  const size_t count = tokens.size();
  // soft[k]: the break between tokens k and k+1 may be read as nothing.
  std::vector<char> soft(count, 0);
  for (size_t k = 0; k + 1 < count; ++k) {
    const Token& left = tokens[k];
    const Token& right = tokens[k + 1];
    if (!left.word || !right.word) continue;
    bool singleLetters = left.end - left.begin == 1 && right.end - right.begin == 1;
    soft[k] = isSoftBreak(text.substr(left.end, right.begin - left.end), singleLetters) ? 1 : 0;
  }
  hardBefore_.assign(count, 0);
  for (size_t k = 1; k < count; ++k) hardBefore_[k] = hardBefore_[k - 1] + (soft[k - 1] ? 0 : 1);
  firstEdge_.assign(count + 1, 0);
  edges_.reserve(count);
  present_.assign(vocabulary.ids.size() + 1, 0);
  std::string joined;
  for (size_t i = 0; i < count; ++i) {
    firstEdge_[i] = static_cast<uint32_t>(edges_.size());
    std::string_view word = text.substr(tokens[i].begin, tokens[i].end - tokens[i].begin);
    uint32_t id = vocabulary.idOf(word);
    edges_.push_back({static_cast<uint32_t>(i + 1), id});
    present_[id] = 1;
    if (soft[i] == 0) continue;
    joined.assign(word);
    // Letters joined across soft breaks: only a vocabulary word can matter to a pattern.
    for (size_t j = i + 1; j < count && soft[j - 1]; ++j) {
      joined.append(text.substr(tokens[j].begin, tokens[j].end - tokens[j].begin));
      if (joined.size() > vocabulary.longest) break;
      if (uint32_t joinedId = vocabulary.idOf(joined); joinedId != 0) {
        edges_.push_back({static_cast<uint32_t>(j + 1), joinedId});
        present_[joinedId] = 1;
      }
    }
  }
  firstEdge_[count] = static_cast<uint32_t>(edges_.size());
  mentionsAnyWord_ = std::find(present_.begin() + 1, present_.end(), 1) != present_.end();
}

// Adds the positions after taking the slot's word `min` to `max` times from any position of
// frontier_, or from any position at all when `anywhere`.
void WordLattice::stepWords(const PhraseSlot& slot, bool anywhere) {
  const auto end = static_cast<uint32_t>(hardBefore_.size());
  if (slot.min == 0) {
    if (anywhere) {
      for (uint32_t position = 0; position < end; ++position) next_.add(position);
    } else {
      for (uint32_t position : frontier_) next_.add(position);
    }
  }
  for (int taken = 1; taken <= slot.max; ++taken) {
    reached_.clear();
    auto follow = [&](uint32_t position) {
      for (uint32_t e = firstEdge_[position]; e < firstEdge_[position + 1]; ++e) {
        if (slot.accepts[edges_[e].id] != 0) reached_.add(edges_[e].to);
      }
    };
    if (taken == 1 && anywhere) {
      for (uint32_t position = 0; position < end; ++position) follow(position);
    } else {
      for (uint32_t position : taken == 1 ? frontier_ : current_) {
        if (position < end) follow(position);
      }
    }
    if (reached_.items.empty()) return;
    if (taken >= slot.min) {
      for (uint32_t position : reached_.items) next_.add(position);
    }
    current_.swap(reached_.items);
  }
}

// Adds the positions after a gap of up to slot.max words from any position of frontier_. A
// gap over tokens p..q-1 is one word more than the hard breaks inside it.
void WordLattice::stepGap(const PhraseSlot& slot) {
  std::sort(frontier_.begin(), frontier_.end());
  const auto end = static_cast<uint32_t>(hardBefore_.size());
  uint32_t nextFree = 0;
  for (uint32_t position : frontier_) {
    uint32_t last = position;
    if (slot.max > 0 && position < end) {
      uint32_t allowed = hardBefore_[position] + static_cast<uint32_t>(slot.max) - 1;
      auto it = std::upper_bound(hardBefore_.begin() + position, hardBefore_.end(), allowed);
      last = static_cast<uint32_t>(it - hardBefore_.begin());
    }
    for (uint32_t q = std::max(position, nextFree); q <= last; ++q) next_.add(q);
    nextFree = std::max(nextFree, last + 1);
  }
}

bool WordLattice::matches(const PhrasePattern& pattern) {
  // Most patterns need a word no reading holds.
  for (const auto& slot : pattern.slots) {
    if (slot.accepts.empty() || slot.min == 0) continue;
    if (std::none_of(slot.ids.begin(), slot.ids.end(), [&](uint32_t id) { return present_[id]; })) {
      return false;
    }
  }
  const size_t positions = hardBefore_.size() + 1;
  if (next_.stamps.size() != positions) {
    next_.stamps.assign(positions, 0);
    reached_.stamps.assign(positions, 0);
  }
  bool first = true;
  for (const auto& slot : pattern.slots) {
    next_.clear();
    if (slot.accepts.empty()) {
      if (first) {
        frontier_.clear();
        for (uint32_t position = 0; position + 1 < positions; ++position) {
          frontier_.push_back(position);
        }
      }
      stepGap(slot);
    } else {
      stepWords(slot, first);
    }
    first = false;
    frontier_.swap(next_.items);
    if (frontier_.empty()) return false;
  }
  return !first;
}

}  // namespace kaja::core::policy
