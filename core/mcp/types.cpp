#include "core/mcp/types.h"

#include <array>
#include <cstdio>

namespace kaja::core::mcp {
namespace {

std::string stringField(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
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
  tool.title = stringField(value, "title");
  tool.description = stringField(value, "description");
  if (const auto schema = value.find("inputSchema"); schema != value.end())
    tool.inputSchema = *schema;
  tool.raw = value;
  return tool;
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
