#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kaja::core::policy {

/// The words phrase patterns name, each with an id from 1 up; 0 stands for every other word.
struct Vocabulary {
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view word) const { return std::hash<std::string_view>{}(word); }
  };
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> ids;
  size_t longest = 0;  ///< bytes in the longest word

  /// Returns the id of `word`, giving it the next id if it has none; updates `longest`.
  uint32_t add(std::string_view word);
  /// Returns the id of `word`, or 0 when no pattern names it.
  uint32_t idOf(std::string_view word) const;
};

/// One slot of a phrase pattern: one word it accepts (by id) between `min` and `max` times in
/// a row, or, when `accepts` is empty, a gap of up to `max` words of anything.
struct PhraseSlot {
  std::vector<std::string> words;  ///< as written in the pattern; empty for a gap
  int min = 1;
  int max = 1;
  std::vector<char> accepts;  ///< by word id; empty for a gap
  std::vector<uint32_t> ids;  ///< the ids of `words`
};

/// A named sequence of slots ("ignore-instructions": verb, determiners, prior, rules).
struct PhrasePattern {
  std::string name;
  std::vector<PhraseSlot> slots;
};

/// Every way a reader can split one normalised text (see normalizeForScan) into words, and a
/// matcher of phrase patterns over all of them at once.
///
/// A word is a run of letters; every other code point breaks words, and the punctuation role
/// tags are made of ("<>|[]#/:") is a word of its own. Some breaks are soft, read both as a
/// break and as nothing, because a reader may see one word across them:
/// - a kWordBreakMark, where invisible characters stood ("ig\u200bnore\u200bprevious");
/// - one or two marks a reader skips inside a word ("ig.nore", "ig-nore", "ig_nore",
///   "ig·nore"), or a hyphen at the end of a line ("in-\nstructions");
/// - a space between two single letters ("i g n o r e").
/// Letters joined across soft breaks count only where they spell a vocabulary word, and a gap
/// counts words the fewest ways a reading allows, so that "t\u200bh\u200bi\u200bs" is one.
class WordLattice {
 public:
  /// Reads `normalized`, which must outlive the lattice.
  WordLattice(std::string_view normalized, const Vocabulary& vocabulary);

  /// Returns true when some word of some reading is a vocabulary word; a text for which this
  /// is false matches no pattern.
  bool mentionsAnyWord() const { return mentionsAnyWord_; }

  /// Returns true when some reading of the text holds `pattern`. Linear in the text's length
  /// for a given pattern.
  bool matches(const PhrasePattern& pattern);

 private:
  struct Edge {
    uint32_t to;  // the token after the word
    uint32_t id;  // the word's vocabulary id
  };

  // A set of token positions that empties in constant time.
  struct PositionSet {
    std::vector<uint32_t> items;
    std::vector<uint32_t> stamps;  // by position: the `stamp` it was added under
    uint32_t stamp = 1;
    void clear() {
      items.clear();
      ++stamp;
    }
    void add(uint32_t position) {
      if (stamps[position] == stamp) return;
      stamps[position] = stamp;
      items.push_back(position);
    }
  };

  void addEdges(std::string_view normalized, const Vocabulary& vocabulary);
  void stepWords(const PhraseSlot& slot, bool anywhere);
  void stepGap(const PhraseSlot& slot);

  std::vector<Edge> edges_;           // grouped by the token they start at
  std::vector<uint32_t> firstEdge_;   // token -> its first edge; one past the last token too
  std::vector<uint32_t> hardBefore_;  // token -> hard breaks before it
  std::vector<char> present_;         // word id -> some reading holds the word
  bool mentionsAnyWord_ = false;
  // Matching scratch, kept to spare allocations across patterns.
  std::vector<uint32_t> frontier_, current_;
  PositionSet next_, reached_;
};

}  // namespace kaja::core::policy
