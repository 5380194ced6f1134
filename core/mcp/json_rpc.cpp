#include "core/mcp/json_rpc.h"

namespace kaja::core::mcp {
namespace {

bool isValidId(const Json& id) { return id.is_number_integer() || id.is_string(); }

Result<Message> protocolError(std::string sentence) {
  return fail(ErrorCode::kProtocol, std::move(sentence));
}

}  // namespace

std::string clip(std::string_view text, std::size_t limit) {
  std::size_t cut = text.size();
  if (text.size() > limit) {
    // Back off to a UTF-8 boundary so the clipped text stays valid.
    cut = limit;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  }
  std::string out(text.substr(0, cut));
  // Peer text lands in one-line messages on a terminal: no newlines, no escape sequences.
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return cut < text.size() ? out + "…" : out;
}

Result<Message> parseMessage(const Json& value) {
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
    Json paramsValue = params == value.end() ? Json() : *params;
    if (!paramsValue.is_null() && !paramsValue.is_object() && !paramsValue.is_array()) {
      return protocolError("The message's \"params\" is neither an object nor an array.");
    }
    if (id == value.end()) return Notification{method->get<std::string>(), std::move(paramsValue)};
    if (!isValidId(*id))
      return protocolError("The request's \"id\" is not a string or an integer.");
    return Request{*id, method->get<std::string>(), std::move(paramsValue)};
  }
  if (id == value.end())
    return protocolError("The message has neither a \"method\" nor an \"id\".");
  if (!isValidId(*id) && !id->is_null()) {
    return protocolError("The response's \"id\" is not a string or an integer.");
  }
  Response response{*id, std::nullopt, std::nullopt};
  const auto result = value.find("result");
  const auto error = value.find("error");
  if ((result == value.end()) == (error == value.end())) {
    return protocolError("The response must have exactly one of \"result\" and \"error\".");
  }
  if (result != value.end()) {
    response.result = *result;
    return response;
  }
  if (!error->is_object()) return protocolError("The response's \"error\" is not an object.");
  RpcError rpc;
  const auto code = error->find("code");
  const auto text = error->find("message");
  if (code == error->end() || !code->is_number_integer()) {
    return protocolError("The response's error has no integer \"code\".");
  }
  rpc.code = code->get<int>();
  if (text != error->end() && text->is_string()) rpc.message = text->get<std::string>();
  if (const auto data = error->find("data"); data != error->end()) rpc.data = *data;
  response.error = std::move(rpc);
  return response;
}

Result<std::vector<Message>> parseMessages(std::string_view line) {
  Json value = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return fail(ErrorCode::kProtocol, "The line is not JSON: \"" + clip(line, 120) + "\".");
  }
  std::vector<Message> messages;
  if (value.is_array()) {
    if (value.empty()) return fail(ErrorCode::kProtocol, "The batch is an empty array.");
    for (const auto& item : value) {
      auto message = parseMessage(item);
      if (!message) return std::unexpected(message.error());
      messages.push_back(std::move(*message));
    }
    return messages;
  }
  auto message = parseMessage(value);
  if (!message) return std::unexpected(message.error());
  messages.push_back(std::move(*message));
  return messages;
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

std::string serialize(const Message& message) {
  // dump() escapes control characters (newlines included), so the text is one line.
  return toJson(message).dump(-1, ' ', false, Json::error_handler_t::replace);
}

Response makeErrorResponse(Json id, int code, std::string message) {
  return Response{std::move(id), std::nullopt, RpcError{code, std::move(message), Json()}};
}

Response makeResultResponse(Json id, Json result) {
  return Response{std::move(id), std::move(result), std::nullopt};
}

}  // namespace kaja::core::mcp
