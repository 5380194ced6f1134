// The text normaliser and the injection scanner: normalisation is idempotent and yields
// well-formed UTF-8 without invisible characters or stray spaces; stripping invisibles is
// idempotent; and an invisible character slipped into a text hides none of its findings.
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
  KAJA_FUZZ_CHECK(!policy::hasInvisible(once), "normalised text has no invisible character");
  KAJA_FUZZ_CHECK(!once.starts_with(' ') && !once.ends_with(' '), "no space at either end");
  KAJA_FUZZ_CHECK(once.find("  ") == std::string::npos, "no run of spaces");
  KAJA_FUZZ_CHECK(policy::normalizeForScan(once, options) == once, "normalising is idempotent");
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
  const auto at = input.ConsumeIntegral<std::uint16_t>();
  const std::string text = input.ConsumeRemainingBytesAsString();

  checkNormalized(text, {});
  checkNormalized(text, {policy::InvisibleMode::kSpace, false});
  checkNormalized(text, {policy::InvisibleMode::kRemove, true});

  const std::string stripped = policy::stripInvisible(text);
  KAJA_FUZZ_CHECK(kaja::core::unicode::isValidUtf8(stripped), "stripped text is UTF-8");
  KAJA_FUZZ_CHECK(!policy::hasInvisible(stripped), "stripped text has no invisible character");
  KAJA_FUZZ_CHECK(policy::stripInvisible(stripped) == stripped, "stripping is idempotent");

  // A zero-width space between two characters (never inside one) of a text without invisible
  // characters hides nothing. (With two or more, "ig\u200bnore\u200bprevious" reads as neither
  // "ignoreprevious" nor "ig nore previous": a known gap, see the README.)
  if (policy::hasInvisible(text)) return 0;
  const std::set<std::string> found = patterns(text, identifier);
  std::size_t cut = text.empty() ? 0 : at % (text.size() + 1);
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  const std::string hidden = text.substr(0, cut) + "\u200b" + text.substr(cut);
  const std::set<std::string> foundHidden = patterns(hidden, identifier);
  for (const auto& pattern : found) {
    KAJA_FUZZ_CHECK(foundHidden.count(pattern) == 1, "an invisible character hides no finding");
  }
  return 0;
}
