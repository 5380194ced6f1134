// The text normaliser and the injection scanner: normalisation is idempotent and yields
// well-formed UTF-8 without invisible characters (but its own word-break marks) or stray
// spaces; stripping invisibles is idempotent; and invisible characters slipped into a text,
// or put in place of its spaces, hide none of its findings.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "core/policy/injection_scanner.h"
#include "core/policy/text_normalizer.h"
#include "core/util/unicode.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace policy = kaja::core::policy;

void checkNormalized(std::string_view text, const policy::NormalizeOptions& options) {
  const std::string once = policy::normalizeForScan(text, options);
  KAJA_FUZZ_CHECK(kaja::core::unicode::isValidUtf8(once), "normalised text is UTF-8");
  std::string unmarked = once;
  std::erase(unmarked, policy::kWordBreakMark);
  KAJA_FUZZ_CHECK(!policy::hasInvisible(unmarked), "normalised text has no invisible character");
  if (options.invisibles == policy::InvisibleMode::kRemove) {
    KAJA_FUZZ_CHECK(unmarked == once, "only marking puts marks in");
  }
  const char mark = policy::kWordBreakMark;
  for (std::size_t i = 0; i < once.size(); ++i) {
    if (once[i] != mark) continue;
    bool inside = i > 0 && i + 1 < once.size();
    KAJA_FUZZ_CHECK(inside && once[i - 1] != ' ' && once[i + 1] != ' ' && once[i + 1] != mark,
                    "a mark stands between two characters that are no space or mark");
  }
  KAJA_FUZZ_CHECK(!once.starts_with(' ') && !once.ends_with(' '), "no space at either end");
  KAJA_FUZZ_CHECK(once.find("  ") == std::string::npos, "no run of spaces");
  KAJA_FUZZ_CHECK(policy::normalizeForScan(once, options) == once, "normalising is idempotent");
}

// Invisible characters of several kinds, one per 3-bit choice.
constexpr std::string_view kInvisibles[] = {"\u200b", "\u00ad", "\u2060", "\ufeff",
                                            "\u200d", "\u034f", "\ufe0f", "\U000E0041"};

// Returns `text` with `count` invisible characters put in: each in place of a space, or
// slipped in before a character (never inside one). `choices` picks where and which.
std::string withInvisibles(const std::string& text, std::uint64_t choices, int count) {
  std::string out = text;
  for (int k = 0; k < count; ++k) {
    std::string_view invisible = kInvisibles[choices & 7];
    choices >>= 3;
    std::size_t at = out.empty() ? 0 : (choices & 0xFFFF) % (out.size() + 1);
    choices >>= 16;
    while (at > 0 && at < out.size() && (static_cast<unsigned char>(out[at]) & 0xC0) == 0x80) {
      --at;
    }
    if (at < out.size() && out[at] == ' ') {
      out.replace(at, 1, invisible);
    } else {
      out.insert(at, invisible);
    }
  }
  return out;
}

std::set<std::string> patterns(std::string_view text, bool identifier) {
  std::set<std::string> out;
  for (const auto& finding : policy::scanText(text, "field", identifier)) {
    KAJA_FUZZ_CHECK(finding.field == "field", "a finding names its field");
    out.insert(finding.pattern);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  FuzzedDataProvider input(bytes, size);
  const bool identifier = input.ConsumeBool();
  const auto choices = input.ConsumeIntegral<std::uint64_t>();
  const std::string text = input.ConsumeRemainingBytesAsString();

  checkNormalized(text, {});
  checkNormalized(text, {policy::InvisibleMode::kMark, false});
  checkNormalized(text, {policy::InvisibleMode::kRemove, true});
  checkNormalized(text, {policy::InvisibleMode::kMark, true});

  const std::string stripped = policy::stripInvisible(text);
  KAJA_FUZZ_CHECK(kaja::core::unicode::isValidUtf8(stripped), "stripped text is UTF-8");
  KAJA_FUZZ_CHECK(!policy::hasInvisible(stripped), "stripped text has no invisible character");
  KAJA_FUZZ_CHECK(policy::stripInvisible(stripped) == stripped, "stripping is idempotent");

  // One to three invisible characters, in place of spaces or slipped in anywhere, in any mix,
  // hide none of a text's findings ("ig\u200bnore\u200bprevious instructions").
  if (policy::hasInvisible(text)) return 0;
  const std::set<std::string> found = patterns(text, identifier);
  if (found.empty()) return 0;
  const std::string hidden =
      withInvisibles(text, choices >> 2, 1 + static_cast<int>(choices & 3) % 3);
  const std::set<std::string> foundHidden = patterns(hidden, identifier);
  for (const auto& pattern : found) {
    KAJA_FUZZ_CHECK(foundHidden.count(pattern) == 1, "invisible characters hide no finding");
  }
  return 0;
}
