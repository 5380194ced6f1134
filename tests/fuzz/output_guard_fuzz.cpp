// The output guard: whatever a server returns, the guarded result is strict JSON (well-formed
// UTF-8), a valid tool result again when it was one, within the limits plus a fixed allowance for
// kaja's notes, free of Unicode tag characters in its text, and unchanged when nothing was changed.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/mcp/types.h"
#include "core/policy/json_cutter.h"
#include "core/policy/output_guard.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace mcp = kaja::core::mcp;
namespace policy = kaja::core::policy;

bool hasTagCharacter(const std::string& text) {
  // U+E0000–E007F are F3 A0 80 80 to F3 A0 81 BF in UTF-8.
  for (std::size_t i = 0; i + 2 < text.size(); ++i) {
    if (static_cast<unsigned char>(text[i]) == 0xF3 &&
        static_cast<unsigned char>(text[i + 1]) == 0xA0 &&
        (static_cast<unsigned char>(text[i + 2]) == 0x80 ||
         static_cast<unsigned char>(text[i + 2]) == 0x81)) {
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  FuzzedDataProvider input(bytes, size);
  policy::OutputLimits limits;
  limits.textBytes = input.ConsumeIntegralInRange<std::size_t>(0, 512);
  limits.mediaBytes = input.ConsumeIntegralInRange<std::size_t>(0, 512);
  limits.structuredBytes = input.ConsumeIntegralInRange<std::size_t>(0, 512);
  limits.metaBytes = input.ConsumeIntegralInRange<std::size_t>(0, 512);
  const std::string text = input.ConsumeRemainingBytesAsString();
  mcp::Json raw = mcp::Json::parse(text, nullptr, false);
  if (raw.is_discarded()) return 0;

  mcp::ToolResult result;
  result.raw = raw;
  const policy::GuardedOutput out = policy::guardOutput(result, limits);
  std::string strict;
  try {
    strict = out.result.raw.dump();
  } catch (const mcp::Json::exception&) {
    KAJA_FUZZ_CHECK(false, "the guarded result is well-formed UTF-8");
  }
  // Block frames (keys, identifiers, notes in place of blocks) have a budget of their own, as
  // large as the text limit and at least 4 KB.
  const std::size_t bound = limits.textBytes + std::max<std::size_t>(limits.textBytes, 4096) +
                            limits.mediaBytes + limits.structuredBytes + limits.metaBytes + 8192;
  KAJA_FUZZ_CHECK(strict.size() <= bound, "the guarded result stays within its limits");
  // kaja guards only results that passed ToolResult::fromJson; those stay valid.
  if (mcp::ToolResult::fromJson(mcp::Json(raw))) {
    KAJA_FUZZ_CHECK(mcp::ToolResult::fromJson(mcp::Json(out.result.raw)).has_value(),
                    "the guarded result is a valid tool result");
  }
  for (const auto& block : out.result.content()) {
    if (block.is_object() && block.contains("text") && block["text"].is_string()) {
      KAJA_FUZZ_CHECK(!hasTagCharacter(block["text"].get<std::string>()),
                      "no tag character in text");
    }
  }
  if (!out.report.changed() && raw.is_object()) {
    KAJA_FUZZ_CHECK(out.result.raw == raw, "a result the guard did not change is the same");
  }
  // The cutter alone: what it keeps is strict JSON within its budget plus one marker.
  policy::JsonCutter cutter(limits.structuredBytes);
  if (const auto kept = cutter.cut(raw)) {
    std::string cut;
    try {
      cut = kept->dump();
    } catch (const mcp::Json::exception&) {
      KAJA_FUZZ_CHECK(false, "what the cutter keeps is well-formed UTF-8");
    }
    KAJA_FUZZ_CHECK(cut.size() <= limits.structuredBytes + 4096, "the cutter keeps its budget");
  }
  return 0;
}
