#include "core/mcp/json_rpc.h"

#include <algorithm>
#include <cstdio>

namespace kaja::core::mcp {
namespace {

/// Appends compact JSON text to one string, as Json::dump() would produce it, without
/// dump()'s string of its own. Invalid UTF-8 is replaced; control characters (newlines
/// included) are escaped, so what it writes stays on one line.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out)
      : out_(out),
        serializer_(nlohmann::detail::output_adapter<char, std::string>(out), ' ',
                    Json::error_handler_t::replace) {}

  void value(const Json& value) { serializer_.dump(value, false, false, 0); }

  /// Writes `text` as a JSON string; method names are plain ASCII, which needs no escaping.
  void string(const std::string& text) {
    const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
      return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
    });
    if (!plain) {
      value(Json(text));
      return;
    }
    out_ += '"';
    out_ += text;
    out_ += '"';
  }

 private:
  std::string& out_;
  nlohmann::detail::serializer<Json> serializer_;
};

}  // namespace

namespace {
void appendEscape(std::string& out, unsigned code) {
  char escape[8];
  std::snprintf(escape, sizeof escape, "\\u%04x", code);
  out += escape;
}
}  // namespace

std::string clip(std::string_view text, std::size_t limit) {
  std::size_t cut = text.size();
  if (text.size() > limit) {
    // Back off to a UTF-8 boundary so the clipped text stays valid.
    cut = limit;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  }
  // Peer text lands in one-line messages on a terminal and before a model: no newlines, no
  // escape sequences, and none of the characters that break a line or turn text around
  // where it is shown (C1 controls, line and paragraph separators, direction controls) or
  // draw nothing (zero-width spaces and joiners, word joiners, U+FEFF), which are written as
  // escapes (`\u202e`) so that a reader sees they were there.
  std::string out;
  out.reserve(cut);
  for (std::size_t i = 0; i < cut; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      out += ' ';
    } else if (c == 0xC2 && i + 1 < cut && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      appendEscape(out, static_cast<unsigned char>(text[i + 1]));  // U+0080..U+009F
      ++i;
    } else if (c == 0xE2 && i + 2 < cut) {
      const auto b = static_cast<unsigned char>(text[i + 1]);
      const auto d = static_cast<unsigned char>(text[i + 2]);
      const bool hidden = (b == 0x80 && ((d >= 0x8B && d <= 0x8F) || (d >= 0xA8 && d <= 0xAE))) ||
                          (b == 0x81 && ((d >= 0xA0 && d <= 0xA4) || (d >= 0xA6 && d <= 0xA9)));
      if (hidden) {
        // U+200B..U+200F, U+2028..U+202E, U+2060..U+2064, U+2066..U+2069
        appendEscape(out, 0x2000U + ((b & 0x0FU) << 6U) + (d & 0x3FU));
        i += 2;
      } else {
        out += static_cast<char>(c);
      }
    } else if (c == 0xEF && i + 2 < cut && static_cast<unsigned char>(text[i + 1]) == 0xBB &&
               static_cast<unsigned char>(text[i + 2]) == 0xBF) {
      appendEscape(out, 0xFEFFU);  // a zero-width no-break space
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  return cut < text.size() ? out + "…" : out;
}

Json toJson(const Message& message) {
  Json out = {{"jsonrpc", "2.0"}};
  if (const auto* request = std::get_if<Request>(&message)) {
    out["id"] = request->id;
    out["method"] = request->method;
    if (!request->params.is_null()) out["params"] = request->params;
  } else if (const auto* notification = std::get_if<Notification>(&message)) {
    out["method"] = notification->method;
    if (!notification->params.is_null()) out["params"] = notification->params;
  } else {
    const auto& response = std::get<Response>(message);
    out["id"] = response.id;
    if (response.error) {
      Json error = {{"code", response.error->code}, {"message", response.error->message}};
      if (!response.error->data.is_null()) error["data"] = response.error->data;
      out["error"] = std::move(error);
    } else {
      out["result"] = response.result.value_or(Json::object());
    }
  }
  return out;
}

void serializeTo(const Message& message, std::string& out) {
  // Written member by member in the order dump() sorts them, so the text is the same as
  // toJson(message).dump() without copying params or result into a temporary tree.
  JsonWriter writer(out);
  if (const auto* request = std::get_if<Request>(&message)) {
    out += R"({"id":)";
    writer.value(request->id);
    out += R"(,"jsonrpc":"2.0","method":)";
    writer.string(request->method);
    if (!request->params.is_null()) {
      out += R"(,"params":)";
      writer.value(request->params);
    }
  } else if (const auto* notification = std::get_if<Notification>(&message)) {
    out += R"({"jsonrpc":"2.0","method":)";
    writer.string(notification->method);
    if (!notification->params.is_null()) {
      out += R"(,"params":)";
      writer.value(notification->params);
    }
  } else {
    const auto& response = std::get<Response>(message);
    if (response.error) {
      Json error = {{"code", response.error->code}, {"message", response.error->message}};
      if (!response.error->data.is_null()) error["data"] = response.error->data;
      out += R"({"error":)";
      writer.value(error);
      out += R"(,"id":)";
      writer.value(response.id);
      out += R"(,"jsonrpc":"2.0")";
    } else {
      out += R"({"id":)";
      writer.value(response.id);
      out += R"(,"jsonrpc":"2.0","result":)";
      if (response.result) {
        writer.value(*response.result);
      } else {
        out += "{}";
      }
    }
  }
  out += '}';
}

std::string serialize(const Message& message) {
  std::string out;
  serializeTo(message, out);
  return out;
}

Response makeErrorResponse(Json id, std::int64_t code, std::string message) {
  return Response{std::move(id), std::nullopt, RpcError{code, std::move(message), Json()}};
}

Response makeResultResponse(Json id, Json result) {
  return Response{std::move(id), std::move(result), std::nullopt};
}

}  // namespace kaja::core::mcp
