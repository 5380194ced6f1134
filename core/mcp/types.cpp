#include "core/mcp/types.h"

#include <array>
#include <cstdio>

namespace kaja::core::mcp {
namespace {

std::string stringField(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// Returns "a number", "an object", … for the type of `value`.
std::string withArticle(const Json& value) {
  const std::string name = value.type_name();
  return (name[0] == 'a' || name[0] == 'o' ? "an " : "a ") + name;
}

/// Returns "" when `object` has no `key` or has it of `type`, else a sentence such as
/// "content[1].text is a number, not a string." that names the field by `path`.
std::string wrongType(const Json& object, const char* key, Json::value_t type,
                      const std::string& path, bool required = false) {
  const auto it = object.find(key);
  if (it == object.end()) {
    return required ? path + std::string(path.empty() ? "" : ".") + key + " is missing." : "";
  }
  if (it->type() == type) return "";
  const char* wanted = type == Json::value_t::string    ? "a string"
                       : type == Json::value_t::object  ? "an object"
                       : type == Json::value_t::array   ? "an array"
                       : type == Json::value_t::boolean ? "a boolean"
                                                        : "something else";
  return (path.empty() ? "" : path + ".") + key + " is " + withArticle(*it) + ", not " + wanted +
         ".";
}

/// Returns the first wrong field of one content block (or a resource's contents), or "".
std::string checkBlock(const Json& block, const std::string& path) {
  using Type = Json::value_t;
  if (!block.is_object()) {
    return path + " is " + withArticle(block) + ", not an object.";
  }
  std::string wrong = wrongType(block, "type", Type::string, path, true);
  if (!wrong.empty()) return wrong;
  const std::string& type = block["type"].get_ref<const std::string&>();
  auto first = [](std::initializer_list<std::string> checks) {
    for (const auto& check : checks) {
      if (!check.empty()) return check;
    }
    return std::string();
  };
  wrong = first({wrongType(block, "annotations", Type::object, path),
                 wrongType(block, "_meta", Type::object, path)});
  if (!wrong.empty()) return wrong;
  if (type == "text") return wrongType(block, "text", Type::string, path, true);
  if (type == "image" || type == "audio") {
    return first({wrongType(block, "data", Type::string, path, true),
                  wrongType(block, "mimeType", Type::string, path, true)});
  }
  if (type == "resource_link") {
    return first({wrongType(block, "uri", Type::string, path, true),
                  wrongType(block, "name", Type::string, path),
                  wrongType(block, "mimeType", Type::string, path),
                  wrongType(block, "description", Type::string, path)});
  }
  if (type == "resource") {
    wrong = wrongType(block, "resource", Type::object, path, true);
    if (!wrong.empty()) return wrong;
    const Json& resource = block["resource"];
    const std::string inner = path + ".resource";
    return first({wrongType(resource, "uri", Type::string, inner, true),
                  wrongType(resource, "mimeType", Type::string, inner),
                  wrongType(resource, "text", Type::string, inner),
                  wrongType(resource, "blob", Type::string, inner)});
  }
  return "";
}

}  // namespace

bool isSupportedProtocolVersion(std::string_view version) {
  static constexpr std::array<std::string_view, 4> kSupported = {"2024-11-05", "2025-03-26",
                                                                 "2025-06-18", "2025-11-25"};
  for (const auto supported : kSupported) {
    if (version == supported) return true;
  }
  return false;
}

bool Tool::readOnlyHint() const {
  const auto annotations = raw.find("annotations");
  if (annotations == raw.end() || !annotations->is_object()) return false;
  const auto hint = annotations->find("readOnlyHint");
  return hint != annotations->end() && hint->is_boolean() && hint->get<bool>();
}

Result<Tool> Tool::fromJson(const Json& value) {
  if (!value.is_object() || !value.contains("name") || !value["name"].is_string()) {
    return fail(ErrorCode::kProtocol, "A tool in tools/list has no name.");
  }
  Tool tool;
  tool.name = value["name"].get<std::string>();
  using Type = Json::value_t;
  for (const auto& wrong : {wrongType(value, "title", Type::string, ""),
                            wrongType(value, "description", Type::string, ""),
                            wrongType(value, "inputSchema", Type::object, ""),
                            wrongType(value, "outputSchema", Type::object, ""),
                            wrongType(value, "annotations", Type::object, ""),
                            wrongType(value, "_meta", Type::object, "")}) {
    if (!wrong.empty()) {
      return fail(ErrorCode::kProtocol,
                  "Tool '" + clip(tool.name, 60) + "' in tools/list is malformed: " + wrong);
    }
  }
  tool.title = stringField(value, "title");
  tool.description = stringField(value, "description");
  if (const auto schema = value.find("inputSchema"); schema != value.end())
    tool.inputSchema = *schema;
  tool.raw = value;
  return tool;
}

Result<ToolResult> ToolResult::fromJson(Json&& value) {
  using Type = Json::value_t;
  auto bad = [](const std::string& sentence) {
    return fail(ErrorCode::kProtocol, std::string(kMalformedResult) + sentence);
  };
  if (!value.is_object()) {
    return bad("it is " + withArticle(value) + ", not an object.");
  }
  for (const auto& wrong : {wrongType(value, "content", Type::array, ""),
                            wrongType(value, "resultType", Type::string, ""),
                            wrongType(value, "isError", Type::boolean, ""),
                            wrongType(value, "structuredContent", Type::object, ""),
                            wrongType(value, "_meta", Type::object, "")}) {
    if (!wrong.empty()) return bad(wrong);
  }
  if (const auto content = value.find("content"); content != value.end()) {
    for (std::size_t i = 0; i < content->size(); ++i) {
      const std::string wrong = checkBlock((*content)[i], "content[" + std::to_string(i) + "]");
      if (!wrong.empty()) return bad(wrong);
    }
  }
  ToolResult result;
  result.raw = std::move(value);
  return result;
}

const Json& ToolResult::content() const {
  static const Json kEmpty = Json::array();
  const auto it = raw.find("content");
  return it != raw.end() && it->is_array() ? *it : kEmpty;
}

bool ToolResult::isError() const {
  const auto it = raw.find("isError");
  return it != raw.end() && it->is_boolean() && it->get<bool>();
}

std::optional<Json> ToolResult::structuredContent() const {
  const auto it = raw.find("structuredContent");
  if (it == raw.end()) return std::nullopt;
  return *it;
}

std::string ToolResult::text() const {
  std::string out;
  for (const auto& block : content()) {
    if (!block.is_object() || stringField(block, "type") != "text") continue;
    if (!out.empty()) out += '\n';
    out += stringField(block, "text");
  }
  return out;
}

std::vector<Json> ToolResult::blocksOfType(std::string_view type) const {
  std::vector<Json> out;
  for (const auto& block : content()) {
    if (block.is_object() && stringField(block, "type") == type) out.push_back(block);
  }
  return out;
}

Json rootsToJson(const std::vector<Root>& roots) {
  Json out = Json::array();
  for (const auto& root : roots) {
    Json entry = {{"uri", root.uri}};
    if (!root.name.empty()) entry["name"] = root.name;
    out.push_back(std::move(entry));
  }
  return out;
}

std::string fileUri(std::string_view absolutePath) {
  std::string uri = "file://";
  for (const unsigned char c : absolutePath) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '/' || c == '-' || c == '_' || c == '.' || c == '~';
    if (plain) {
      uri += static_cast<char>(c);
    } else {
      std::array<char, 4> escaped{};
      std::snprintf(escaped.data(), escaped.size(), "%%%02X", c);
      uri += escaped.data();
    }
  }
  return uri;
}

}  // namespace kaja::core::mcp
