// Reading JSON-RPC text from a peer that may be hostile: nesting and size are judged before
// anything is built, malformed bytes are repaired rather than lost, and a reply that cannot be
// used still fails its own request at once.
#include <algorithm>
#include <climits>
#include <cstdint>

#include "core/mcp/json_rpc.h"
#include "core/mcp/json_rpc_envelope.h"
#include "core/util/unicode.h"

namespace kaja::core::mcp {
namespace {

// A batch too large to read whole is read element by element, up to this many.
constexpr std::size_t kMaxBatchElements = 4096;

bool isValidId(const Json& id) { return id.is_number_integer() || id.is_string(); }

Result<Message> protocolError(std::string sentence) {
  return fail(ErrorCode::kProtocol, std::move(sentence));
}

/// What one pass over a message's text found before it is parsed.
struct TextScan {
  std::size_t maxDepth = 0;  ///< the deepest nesting of arrays and objects
  std::size_t values = 0;    ///< arrays, objects and comma-separated members
  bool needsRepair = false;  ///< a lone surrogate escape or a raw control character in a string
  bool highBytes = false;    ///< bytes past ASCII in a string, which may be ill-formed UTF-8
};

/// Returns the four hex digits at `at` as a number, or -1 when they are not four hex digits.
int hex4(std::string_view text, std::size_t at) {
  if (at + 4 > text.size()) return -1;
  int value = 0;
  for (std::size_t i = at; i < at + 4; ++i) {
    const char c = text[i];
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

bool isHighSurrogate(int unit) { return unit >= 0xD800 && unit <= 0xDBFF; }
bool isLowSurrogate(int unit) { return unit >= 0xDC00 && unit <= 0xDFFF; }

/// Returns true when the `\uXXXX` escape at `at` (the backslash) is a high surrogate followed
/// by an escaped low one.
bool pairedSurrogate(std::string_view text, std::size_t at) {
  return at + 12 <= text.size() && text[at + 6] == '\\' && text[at + 7] == 'u' &&
         isLowSurrogate(hex4(text, at + 8));
}

/// Scans `text` once, without parsing it: nlohmann::json reads deep nesting without
/// recursion, but copying or printing what it read recurses, so depth is judged here.
TextScan scanText(std::string_view text) {
  TextScan scan;
  std::size_t depth = 0;
  const std::size_t size = text.size();
  for (std::size_t i = 0; i < size; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"') {
      for (++i; i < size; ++i) {
        const auto s = static_cast<unsigned char>(text[i]);
        if (s == '"') break;
        if (s >= 0x80) {
          scan.highBytes = true;
        } else if (s < 0x20) {
          scan.needsRepair = true;
        } else if (s == '\\' && i + 1 < size) {
          if (text[i + 1] == 'u') {
            const int unit = hex4(text, i + 2);
            if (isHighSurrogate(unit) && pairedSurrogate(text, i)) {
              i += 6;
            } else if (isHighSurrogate(unit) || isLowSurrogate(unit)) {
              scan.needsRepair = true;
            }
          }
          ++i;
        }
      }
      continue;
    }
    if (c == '[' || c == '{') {
      ++scan.values;
      scan.maxDepth = std::max(scan.maxDepth, ++depth);
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    } else if (c == ',') {
      ++scan.values;
    }
  }
  return scan;
}

/// Returns `text` with ill-formed UTF-8 and lone surrogate escapes replaced by U+FFFD and raw
/// control characters in strings escaped, so that a reply is read rather than lost.
std::string repairText(std::string_view text) {
  const std::string valid = unicode::sanitizeUtf8(text);
  std::string out;
  out.reserve(valid.size() + 64);
  bool inString = false;
  for (std::size_t i = 0; i < valid.size(); ++i) {
    const auto c = static_cast<unsigned char>(valid[i]);
    if (!inString || c == '"') {
      inString = inString ? false : c == '"';
      out += static_cast<char>(c);
      continue;
    }
    if (c == '\\' && i + 1 < valid.size()) {
      const int unit = valid[i + 1] == 'u' ? hex4(valid, i + 2) : -1;
      if (isHighSurrogate(unit) && pairedSurrogate(valid, i)) {
        out.append(valid, i, 12);
        i += 11;
      } else if (isHighSurrogate(unit) || isLowSurrogate(unit)) {
        out += "\\ufffd";
        i += 5;
      } else {
        out.append(valid, i, 2);
        ++i;
      }
      continue;
    }
    if (c < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
      continue;
    }
    out += static_cast<char>(c);
  }
  return out;
}

/// nlohmann::json's parse, which must not throw out of here (it can on allocation failure).
Json parseJson(std::string_view text) {
  try {
    return Json::parse(text, nullptr, /*allow_exceptions=*/false);
  } catch (const std::exception&) {
    return Json(Json::value_t::discarded);
  }
}

/// Returns the id of `value` when it looks like a reply (an object with a string or integer
/// id and no method), else null.
Json replyId(const Json& value) {
  if (!value.is_object() || value.contains("method")) return Json();
  const auto id = value.find("id");
  return id != value.end() && isValidId(*id) ? *id : Json();
}

Response unreadableReply(Json id, const Error& error, std::size_t bytes) {
  Response response{std::move(id), std::nullopt, std::nullopt};
  response.unreadable = error;
  response.bytes = bytes;
  return response;
}

Result<RpcError> readRpcError(const Json& error) {
  if (!error.is_object())
    return fail(ErrorCode::kProtocol, "The response's \"error\" is not an object.");
  RpcError rpc;
  const auto code = error.find("code");
  if (code == error.end() || !code->is_number_integer()) {
    return fail(ErrorCode::kProtocol, "The response's error has no integer \"code\".");
  }
  if (code->is_number_unsigned() &&
      code->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
    return fail(ErrorCode::kProtocol, "The response's error \"code\" is beyond a 64-bit integer.");
  }
  rpc.code = code->get<std::int64_t>();
  if (const auto text = error.find("message"); text != error.end() && text->is_string())
    rpc.message = text->get<std::string>();
  if (const auto data = error.find("data"); data != error.end()) rpc.data = *data;
  return rpc;
}

/// Reads one element of a batch: a bad element becomes an unreadable reply (for its id, when
/// it has one) so that the batch's other elements are kept.
Message readElement(Json&& value, std::size_t bytes) {
  Json id = replyId(value);
  auto message = parseMessage(std::move(value));
  if (!message) return unreadableReply(std::move(id), message.error(), bytes);
  if (auto* response = std::get_if<Response>(&*message)) response->bytes = bytes;
  return std::move(*message);
}

/// Keeps only the envelope of a message ("jsonrpc", "id" and "method") as nlohmann::json's
/// SAX parser reads it, so that a message too deep or too large to hold is never built.
// NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json members fool the check.
class EnvelopeReader final : public nlohmann::json_sax<Json> {
 public:
  /// The top-level value: an object of the envelope members, an empty array, or a scalar.
  Json envelope;

  bool null() override { return scalar(Json()); }
  bool boolean(bool value) override { return scalar(Json(value)); }
  bool number_integer(number_integer_t value) override { return scalar(Json(value)); }
  bool number_unsigned(number_unsigned_t value) override { return scalar(Json(value)); }
  bool number_float(number_float_t value, const string_t& /*text*/) override {
    return scalar(Json(value));
  }
  bool string(string_t& value) override { return wanted() ? scalar(Json(value)) : true; }
  bool binary(binary_t& /*value*/) override { return true; }
  bool start_object(std::size_t /*size*/) override {
    if (depth_++ == 0) envelope = Json::object();
    return true;
  }
  bool key(string_t& name) override {
    if (depth_ == 1) key_ = name;
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t /*size*/) override {
    if (depth_++ == 0) envelope = Json::array();
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& error) override {
    // "[json.exception.out_of_range.406] number overflow parsing '1e400'": the part after
    // the tag says what broke.
    const std::string_view what = error.what();
    const auto tag = what.find("] ");
    problem = std::string(tag == std::string_view::npos ? what : what.substr(tag + 2));
    return false;
  }

  /// What stopped the parse, when it failed ("number overflow parsing '1e400'").
  std::string problem;

 private:
  [[nodiscard]] bool wanted() const {
    return depth_ == 0 || (depth_ == 1 && envelope.is_object() &&
                           (key_ == "jsonrpc" || key_ == "id" || key_ == "method"));
  }
  bool scalar(Json value) {
    if (depth_ == 0) {
      envelope = std::move(value);
    } else if (wanted()) {
      envelope[key_] = std::move(value);
    }
    return true;
  }

  std::size_t depth_ = 0;
  std::string key_;
};

/// Returns the error for a message that `scan` found too deep or too large.
Error oversizedError(const TextScan& scan) {
  const bool tooMany = scan.values > kMaxJsonValues;
  return Error{ErrorCode::kProtocol,
               tooMany ? "The message holds more than " + std::to_string(kMaxJsonValues) +
                             " values, more than kaja reads."
                       : "The message is nested deeper than " + std::to_string(kMaxJsonDepth) +
                             " levels, more than kaja reads.",
               {},
               {}};
}

/// Reads one message that is too deep or too large: only its envelope, so that a reply still
/// fails its request. Returns `why` as the error when it is not a reply.
Result<Message> readTooLarge(std::string_view text, const Error& why, std::size_t bytes) {
  EnvelopeReader reader;
  bool parsed = false;
  try {
    parsed = Json::sax_parse(text, &reader);
  } catch (const std::exception&) {
    parsed = false;
  }
  if (!parsed)
    return fail(ErrorCode::kProtocol, "The line is not JSON: \"" + clip(text, 120) + "\".");
  Json id = replyId(reader.envelope);
  if (id.is_null()) return std::unexpected(why);
  return Message(unreadableReply(std::move(id), why, bytes));
}

/// Returns the error for a line that is not JSON, as an unreadable reply when the id of a
/// reply came before what broke it (a number out of range, say), so that its request fails at
/// once with the reason instead of at its timeout.
Result<std::vector<Message>> unparsable(std::string_view text, std::size_t bytes) {
  const std::string shown = ": \"" + clip(text, 120) + "\".";
  EnvelopeReader reader;
  try {
    Json::sax_parse(text, &reader);
  } catch (const std::exception&) {
    return fail(ErrorCode::kProtocol, "The line is not JSON" + shown);
  }
  Json id = replyId(reader.envelope);
  if (id.is_null()) return fail(ErrorCode::kProtocol, "The line is not JSON" + shown);
  const std::string problem = reader.problem.empty() ? "" : " (" + clip(reader.problem, 80) + ")";
  return std::vector<Message>{unreadableReply(
      std::move(id), Error{ErrorCode::kProtocol, "The reply is not JSON" + problem + shown, {}, {}},
      bytes)};
}

/// Returns the elements of the batch `text` (an array) as text, or nullopt when it holds more
/// than kMaxBatchElements or is cut short.
std::optional<std::vector<std::string_view>> splitBatch(std::string_view text) {
  std::vector<std::string_view> elements;
  std::size_t depth = 0;
  std::size_t begin = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      continue;
    }
    const bool open = c == '[' || c == '{';
    const bool close = c == ']' || c == '}';
    if (open && depth++ == 0) begin = i + 1;
    if ((c == ',' && depth == 1) || (close && depth == 1)) {
      if (elements.size() == kMaxBatchElements) return std::nullopt;
      elements.push_back(text.substr(begin, i - begin));
      begin = i + 1;
    }
    if (close && depth > 0 && --depth == 0) return elements;
  }
  return std::nullopt;
}

/// Reads a message nested too deep or holding too many values without building it: a single
/// message keeps only its envelope; a batch is read element by element, so that the elements
/// within bounds survive and each other one fails only its own request.
Result<std::vector<Message>> readOversized(std::string_view text, const TextScan& scan,
                                           std::size_t bytes) {
  const auto first = text.find_first_not_of(" \t\r\n");
  std::vector<Message> messages;
  if (first == std::string_view::npos || text[first] != '[') {
    auto message = readTooLarge(text, oversizedError(scan), bytes);
    if (!message) return std::unexpected(message.error());
    messages.push_back(std::move(*message));
    return messages;
  }
  auto elements = splitBatch(text);
  if (!elements) {
    return fail(ErrorCode::kProtocol, "The batch holds more than " +
                                          std::to_string(kMaxBatchElements) +
                                          " messages or is cut short, and is too large to read.");
  }
  for (const std::string_view element : *elements) {
    const TextScan inner = scanText(element);
    if (inner.maxDepth > kMaxJsonDepth || inner.values > kMaxJsonValues) {
      const Error why = oversizedError(inner);
      auto message = readTooLarge(element, why, bytes);
      messages.push_back(message ? std::move(*message)
                                 : Message(unreadableReply(Json(), message.error(), bytes)));
      continue;
    }
    Json value = parseJson(element);
    if (value.is_discarded()) {
      messages.push_back(unreadableReply(
          Json(), Error{ErrorCode::kProtocol, "An element of the batch is not JSON.", {}, {}},
          bytes));
      continue;
    }
    messages.push_back(readElement(std::move(value), bytes));
  }
  return messages;
}

}  // namespace

Json refusedRequestId(std::string_view text) {
  EnvelopeReader reader;
  try {
    if (!Json::sax_parse(text, &reader)) return Json();
  } catch (const std::exception&) {
    return Json();
  }
  const Json& envelope = reader.envelope;
  if (!envelope.is_object() || !envelope.contains("method")) return Json();
  const auto id = envelope.find("id");
  return id != envelope.end() && isValidId(*id) ? *id : Json();
}

Result<Message> parseMessage(Json&& value) {
  if (!value.is_object()) return protocolError("The message is not a JSON object.");
  const auto version = value.find("jsonrpc");
  if (version == value.end() || *version != "2.0") {
    return protocolError("The message does not say \"jsonrpc\": \"2.0\".");
  }
  const auto method = value.find("method");
  const auto id = value.find("id");
  const auto params = value.find("params");
  if (method != value.end()) {
    if (!method->is_string()) return protocolError("The message's \"method\" is not a string.");
    Json paramsValue = params == value.end() ? Json() : std::move(*params);
    if (!paramsValue.is_null() && !paramsValue.is_object() && !paramsValue.is_array()) {
      return protocolError("The message's \"params\" is neither an object nor an array.");
    }
    auto& methodName = method->get_ref<std::string&>();
    if (id == value.end()) return Notification{std::move(methodName), std::move(paramsValue)};
    if (!isValidId(*id))
      return protocolError("The request's \"id\" is not a string or an integer.");
    return Request{std::move(*id), std::move(methodName), std::move(paramsValue)};
  }
  if (id == value.end())
    return protocolError("The message has neither a \"method\" nor an \"id\".");
  if (!isValidId(*id) && !id->is_null()) {
    return protocolError("The response's \"id\" is not a string or an integer.");
  }
  const auto result = value.find("result");
  const auto error = value.find("error");
  if ((result == value.end()) == (error == value.end())) {
    return protocolError("The response must have exactly one of \"result\" and \"error\".");
  }
  Response response{std::move(*id), std::nullopt, std::nullopt};
  if (result != value.end()) {
    response.result = std::move(*result);
    return response;
  }
  auto rpc = readRpcError(*error);
  if (!rpc) return std::unexpected(rpc.error());
  response.error = std::move(*rpc);
  return response;
}

Result<std::vector<Message>> parseMessages(std::string_view line) {
  const TextScan scan = scanText(line);
  std::string repaired;
  std::string_view text = line;
  if (scan.needsRepair) {
    repaired = repairText(line);
    text = repaired;
  }
  if (scan.maxDepth > kMaxJsonDepth || scan.values > kMaxJsonValues) {
    if (scan.highBytes && !scan.needsRepair && !unicode::isValidUtf8(line)) {
      repaired = repairText(line);
      text = repaired;
    }
    return readOversized(text, scan, line.size());
  }
  Json value = parseJson(text);
  if (value.is_discarded() && scan.highBytes && !scan.needsRepair) {
    // Ill-formed UTF-8 is rare enough that it is looked for only once a parse has failed.
    repaired = repairText(line);
    value = parseJson(repaired);
  }
  if (value.is_discarded()) return unparsable(repaired.empty() ? text : repaired, line.size());
  std::vector<Message> messages;
  if (value.is_array()) {
    if (value.empty()) return fail(ErrorCode::kProtocol, "The batch is an empty array.");
    messages.reserve(value.size());
    for (auto& item : value) messages.push_back(readElement(std::move(item), line.size()));
    return messages;
  }
  const Json id = replyId(value);
  auto message = parseMessage(std::move(value));
  if (!message) {
    // A reply that names its request fails that request now, rather than at its timeout.
    if (id.is_null()) return std::unexpected(message.error());
    return std::vector<Message>{unreadableReply(id, message.error(), line.size())};
  }
  if (auto* response = std::get_if<Response>(&*message)) response->bytes = line.size();
  messages.push_back(std::move(*message));
  return messages;
}

}  // namespace kaja::core::mcp
