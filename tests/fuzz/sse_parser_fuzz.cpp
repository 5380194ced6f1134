// The SSE parser against a reference reading of the WHATWG event-stream rules: the same
// events, last id and retry whatever the split of the bytes, an error exactly when the
// reference sees an oversized line or event or an id kaja cannot send back, and every event
// well formed.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/net/sse_parser.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using kaja::core::net::SseEvent;
using kaja::core::net::SseParser;

constexpr std::size_t kMaxEvent = 512;

struct Outcome {
  std::vector<SseEvent> events;
  bool failed = false;
  std::string lastId;
  std::optional<std::chrono::milliseconds> retry;
};

bool visibleAscii(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](unsigned char c) { return c >= 0x21 && c <= 0x7e; });
}

// A straightforward reading of the rules: complete lines only (CR, LF or CRLF end one).
Outcome reference(std::string_view stream) {
  Outcome out;
  std::string data;
  std::string type;
  bool hasData = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i < stream.size(); ++i) {
    const char c = stream[i];
    if (c != '\r' && c != '\n') {
      if (i - start + 1 > kMaxEvent) return Outcome{{}, true, {}, {}};
      continue;
    }
    const std::string_view line = stream.substr(start, i - start);
    if (c == '\r' && i + 1 < stream.size() && stream[i + 1] == '\n') ++i;
    start = i + 1;
    if (line.empty()) {
      if (hasData) {
        if (data.ends_with('\n')) data.pop_back();
        out.events.push_back(SseEvent{type.empty() ? "message" : type, data, out.lastId});
      }
      data.clear();
      type.clear();
      hasData = false;
      continue;
    }
    if (line.front() == ':') continue;
    const auto colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
    if (value.starts_with(' ')) value.remove_prefix(1);
    if (field == "data") {
      data.append(value);
      data.push_back('\n');
      hasData = true;
      if (data.size() > kMaxEvent) return Outcome{{}, true, {}, {}};
    } else if (field == "event") {
      type = value;
    } else if (field == "id" && value.find('\0') == std::string_view::npos) {
      if (!value.empty() && (value.size() > SseParser::kMaxIdBytes || !visibleAscii(value))) {
        return Outcome{{}, true, {}, {}};
      }
      out.lastId = value;
    } else if (field == "retry" && !value.empty() && value.size() < 10 &&
               std::all_of(value.begin(), value.end(),
                           [](char d) { return d >= '0' && d <= '9'; })) {
      out.retry = std::chrono::milliseconds(std::stoll(std::string(value)));
    }
  }
  // A trailing line without its end is not processed yet, but it may already be too long.
  if (stream.size() - start > kMaxEvent) return Outcome{{}, true, {}, {}};
  return out;
}

Outcome parseInChunks(std::string_view stream, const std::vector<std::size_t>& cuts) {
  SseParser parser(kMaxEvent);
  Outcome out;
  std::size_t at = 0;
  for (std::size_t i = 0; at < stream.size(); ++i) {
    const std::size_t size =
        i < cuts.size() ? std::min(cuts[i], stream.size() - at) : stream.size() - at;
    auto events = parser.feed(stream.substr(at, size));
    at += size;
    if (!events) {
      out.failed = true;
      return out;
    }
    out.events.insert(out.events.end(), events->begin(), events->end());
  }
  out.lastId = parser.lastEventId();
  out.retry = parser.retry();
  return out;
}

bool same(const SseEvent& a, const SseEvent& b) {
  return a.type == b.type && a.data == b.data && a.id == b.id;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  FuzzedDataProvider input(bytes, size);
  std::vector<std::size_t> cuts;
  const auto count = input.ConsumeIntegralInRange<std::size_t>(0, 8);
  for (std::size_t i = 0; i < count; ++i) {
    cuts.push_back(input.ConsumeIntegralInRange<std::size_t>(0, 64));
  }
  const std::string stream = input.ConsumeRemainingBytesAsString();

  const Outcome expected = reference(stream);
  const Outcome whole = parseInChunks(stream, {});
  const Outcome split = parseInChunks(stream, cuts);
  KAJA_FUZZ_CHECK(whole.failed == expected.failed, "an error exactly when the rules give one");
  KAJA_FUZZ_CHECK(split.failed == expected.failed, "the split of the bytes changes no error");
  if (expected.failed) return 0;
  for (const Outcome* got : {&whole, &split}) {
    KAJA_FUZZ_CHECK(got->events.size() == expected.events.size(), "the same number of events");
    for (std::size_t i = 0; i < expected.events.size(); ++i) {
      KAJA_FUZZ_CHECK(same(got->events[i], expected.events[i]), "the same events");
      const SseEvent& event = got->events[i];
      KAJA_FUZZ_CHECK(!event.type.empty(), "an event has a type");
      KAJA_FUZZ_CHECK(event.data.find('\r') == std::string::npos, "no CR inside data");
      KAJA_FUZZ_CHECK(event.data.size() <= kMaxEvent, "data within the limit");
      KAJA_FUZZ_CHECK(event.id.size() <= SseParser::kMaxIdBytes && visibleAscii(event.id),
                      "an id kaja can send back as Last-Event-ID");
    }
    KAJA_FUZZ_CHECK(got->lastId == expected.lastId, "the same last event id");
    KAJA_FUZZ_CHECK(got->retry == expected.retry, "the same retry");
  }
  return 0;
}
