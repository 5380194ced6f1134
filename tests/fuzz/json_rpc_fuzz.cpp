// JSON-RPC message parsing: parseMessages() never throws, keeps a reply's shape (exactly one
// of result and error, or unreadable), and what kaja sends on is one line of well-formed
// UTF-8 JSON, the same text as toJson().dump(), which reads back to the same message. The id a
// refusal answers (refusedRequestId) is a valid id or null, never another than that of a request
// that parses.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "core/mcp/json_rpc.h"
#include "core/mcp/json_rpc_envelope.h"
#include "core/util/unicode.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace mcp = kaja::core::mcp;

bool oneLine(std::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20) return false;
  }
  return true;
}

void checkMessage(const mcp::Message& message, std::size_t lineBytes) {
  if (const auto* request = std::get_if<mcp::Request>(&message)) {
    KAJA_FUZZ_CHECK(request->id.is_string() || request->id.is_number(),
                    "a request id is a number or a string");
  }
  if (const auto* response = std::get_if<mcp::Response>(&message)) {
    KAJA_FUZZ_CHECK(response->bytes == lineBytes, "a reply knows the size of its line");
    if (response->unreadable) {
      KAJA_FUZZ_CHECK(!response->result && !response->error, "unreadable replaces the reply");
      return;
    }
    KAJA_FUZZ_CHECK(response->result.has_value() != response->error.has_value(),
                    "exactly one of result and error");
  }
  const std::string text = mcp::serialize(message);
  KAJA_FUZZ_CHECK(oneLine(text), "a serialised message is one line without raw controls");
  KAJA_FUZZ_CHECK(kaja::core::unicode::isValidUtf8(text), "a serialised message is UTF-8");
  const std::string dumped =
      mcp::toJson(message).dump(-1, ' ', false, mcp::Json::error_handler_t::strict);
  KAJA_FUZZ_CHECK(text == dumped, "serialize() writes what toJson().dump() does");
  auto again = mcp::parseMessages(text);
  KAJA_FUZZ_CHECK(again.has_value(), "a serialised message reads back");
  KAJA_FUZZ_CHECK(again->size() == 1, "a serialised message is one message");
  KAJA_FUZZ_CHECK(again->front().index() == message.index(), "of the same kind");
  KAJA_FUZZ_CHECK(mcp::serialize(again->front()) == text, "to the same message");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(bytes), size);
  auto messages = mcp::parseMessages(line);
  const mcp::Json refusedId = mcp::refusedRequestId(line);
  KAJA_FUZZ_CHECK(refusedId.is_null() || refusedId.is_string() || refusedId.is_number_integer(),
                  "a refusal answers a valid id or none");
  if (messages && messages->size() == 1) {
    if (const auto* request = std::get_if<mcp::Request>(&messages->front())) {
      // Null where the raw line needed repair (a lone surrogate) or was a batch of one.
      KAJA_FUZZ_CHECK(refusedId.is_null() || refusedId == request->id,
                      "a request's envelope names its id");
    }
  }
  if (!messages) {
    KAJA_FUZZ_CHECK(!messages.error().message.empty(), "an error says what happened");
    KAJA_FUZZ_CHECK(messages.error().message.find('\n') == std::string::npos,
                    "an error is one line");
    return 0;
  }
  KAJA_FUZZ_CHECK(!messages->empty(), "a line that parses holds a message");
  for (const auto& message : *messages) checkMessage(message, size);
  return 0;
}
