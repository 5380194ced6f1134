#include "core/mcp/mcp_headers.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace kaja::core::mcp {

namespace {

// RFC 9110 token characters: what a header name may be made of.
bool isTokenChar(unsigned char c) {
  if (std::isalnum(c) != 0) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned n = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i < bytes.size()) {
    unsigned n = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool needsBase64(std::string_view text) {
  const bool unsafe = std::any_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 || byte > 0x7E;
  });
  const auto isSpace = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  return unsafe || (!text.empty() && (isSpace(text.front()) || isSpace(text.back())));
}

Error invalid(const std::string& property, const std::string& why) {
  return Error{ErrorCode::kProtocol,
               "its x-mcp-header on \"" + clip(property, 60) + "\" " + why + ".",
               {},
               {}};
}

}  // namespace

Result<std::vector<ParamHeader>> paramHeaders(const Json& inputSchema) {
  std::vector<ParamHeader> headers;
  if (!inputSchema.is_object()) return headers;
  const auto properties = inputSchema.find("properties");
  if (properties == inputSchema.end() || !properties->is_object()) return headers;
  std::set<std::string> seen;
  for (const auto& [property, schema] : properties->items()) {
    if (!schema.is_object()) continue;
    const auto annotation = schema.find("x-mcp-header");
    if (annotation == schema.end()) continue;
    if (!annotation->is_string() || annotation->get_ref<const std::string&>().empty())
      return std::unexpected(invalid(property, "is empty or not a string"));
    const auto& name = annotation->get_ref<const std::string&>();
    if (!std::all_of(name.begin(), name.end(),
                     [](char c) { return isTokenChar(static_cast<unsigned char>(c)); }))
      return std::unexpected(invalid(property, "is not a valid header name"));
    const auto type = schema.find("type");
    const bool primitive = type != schema.end() && type->is_string() &&
                           (*type == "string" || *type == "integer" || *type == "boolean");
    if (!primitive)
      return std::unexpected(
          invalid(property, "is on a type other than string, integer or boolean"));
    if (!seen.insert(lower(name)).second)
      return std::unexpected(invalid(property, "repeats the header \"" + name + "\""));
    headers.push_back(ParamHeader{property, name});
  }
  return headers;
}

std::string encodeHeaderValue(const Json& value) {
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return value.dump();
  if (value.is_number()) return value.dump();
  if (!value.is_string()) return {};
  const auto& text = value.get_ref<const std::string&>();
  return needsBase64(text) ? "=?base64?" + base64(text) + "?=" : text;
}

std::vector<std::pair<std::string, std::string>> standardHeaders(const Message& message,
                                                                 const ToolParamHeaders& tools) {
  std::vector<std::pair<std::string, std::string>> headers;
  const std::string* method = nullptr;
  const Json* params = nullptr;
  if (const auto* request = std::get_if<Request>(&message)) {
    method = &request->method;
    params = &request->params;
  } else if (const auto* notification = std::get_if<Notification>(&message)) {
    method = &notification->method;
    params = &notification->params;
  }
  if (method == nullptr) return headers;
  headers.emplace_back("Mcp-Method", *method);
  if (!params->is_object()) return headers;
  const char* nameKey = *method == "resources/read"                             ? "uri"
                        : (*method == "tools/call" || *method == "prompts/get") ? "name"
                                                                                : nullptr;
  if (nameKey == nullptr) return headers;
  const auto name = params->find(nameKey);
  if (name == params->end() || !name->is_string()) return headers;
  headers.emplace_back("Mcp-Name", encodeHeaderValue(*name));
  if (*method != "tools/call") return headers;
  const auto tool = tools.find(name->get<std::string>());
  const auto arguments = params->find("arguments");
  if (tool == tools.end() || arguments == params->end() || !arguments->is_object()) return headers;
  for (const auto& [property, header] : tool->second) {
    const auto value = arguments->find(property);
    if (value == arguments->end() || value->is_null()) continue;
    headers.emplace_back("Mcp-Param-" + header, encodeHeaderValue(*value));
  }
  return headers;
}

}  // namespace kaja::core::mcp
