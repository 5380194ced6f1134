#include "cli/tool_view.h"

#include <algorithm>

#include "cli/output.h"
#include "core/policy/backup_tools.h"

namespace kaja::cli {
namespace {

using nlohmann::json;

// Bounds of one type string: how deep it looks (each $ref, items or alternative is a level),
// how many schemas it reads, and how many values of an enum or alternatives it names.
constexpr int kMaxTypeDepth = 6;
constexpr int kTypeBudget = 64;
constexpr std::size_t kMaxListed = 8;
constexpr std::size_t kMaxTypeColumns = 200;
constexpr std::size_t kMaxDescriptionColumns = 1000;
// $ref hops followed to find the object an argument holds; a loop ends here.
constexpr int kMaxRefHops = 8;

// Returns the schema a local $ref points at inside `root`, or null (not local, or dangling).
const json* resolveRef(const json& root, const std::string& ref) {
  if (ref == "#") return &root;
  if (!ref.starts_with("#/")) return nullptr;
  try {
    const json::json_pointer pointer(ref.substr(1));
    return root.contains(pointer) ? &root.at(pointer) : nullptr;
  } catch (const json::exception&) {
    return nullptr;
  }
}

// Follows a chain of $refs from `schema`; returns null when one dangles or the chain loops.
const json* followRefs(const json& schema, const json& root) {
  const json* at = &schema;
  for (int hop = 0; hop <= kMaxRefHops; ++hop) {
    if (!at->is_object()) return at;
    auto ref = at->find("$ref");
    if (ref == at->end() || !ref->is_string()) return at;
    at = resolveRef(root, ref->get<std::string>());
    if (at == nullptr) return nullptr;
  }
  return nullptr;
}

std::string valueText(const json& value, std::size_t columns = 40) {
  return fitWidth(value.is_string() ? value.get<std::string>() : jsonText(value, -1), columns);
}

class TypeWriter {
 public:
  explicit TypeWriter(const json& root) : root_(root) {}

  std::string describe(const json& schema, int depth) {
    if (--budget_ < 0 || depth > kMaxTypeDepth) return "…";
    if (schema.is_boolean()) return schema.get<bool>() ? "any" : "nothing";
    if (!schema.is_object()) return "any";
    if (auto ref = schema.find("$ref"); ref != schema.end() && ref->is_string()) {
      const json* target = resolveRef(root_, ref->get<std::string>());
      if (target == nullptr) return "$ref " + ref->get<std::string>();
      return describe(*target, depth + 1);
    }
    std::string base = typeNames(schema);
    if (base.empty() && schema.contains("properties")) base = "object";
    if (base == "array") {
      auto items = schema.find("items");
      if (items != schema.end() && !items->is_array()) base += " of " + describe(*items, depth + 1);
    }
    for (const char* key : {"anyOf", "oneOf", "allOf"}) {
      auto alternatives = schema.find(key);
      if (!base.empty() || alternatives == schema.end() || !alternatives->is_array()) continue;
      base = join(*alternatives, key == std::string_view("allOf") ? "&" : "|",
                  [&](const json& item) { return describe(item, depth + 1); });
    }
    if (auto values = schema.find("enum"); values != schema.end() && values->is_array()) {
      std::string listed = join(*values, "|", [](const json& v) { return valueText(v); });
      base = base.empty() ? listed : base + ": " + listed;
    }
    if (auto value = schema.find("const"); value != schema.end()) {
      base += (base.empty() ? "= " : " = ") + valueText(*value);
    }
    if (auto format = schema.find("format"); format != schema.end() && format->is_string()) {
      base += " (" + fitWidth(format->get<std::string>(), 30) + ")";
    }
    return base.empty() ? "any" : base;
  }

 private:
  static std::string typeNames(const json& schema) {
    auto type = schema.find("type");
    if (type == schema.end()) return "";
    if (type->is_string()) return type->get<std::string>();
    if (!type->is_array()) return "";
    return join(*type, "|", [](const json& v) { return valueText(v); });
  }

  template <class Describe>
  static std::string join(const json& items, const char* separator, Describe&& describeOne) {
    std::string out;
    std::size_t count = 0;
    for (const auto& item : items) {
      if (count == kMaxListed) return out + separator + "…";
      if (count++ > 0) out += separator;
      out += describeOne(item);
    }
    return out;
  }

  const json& root_;
  int budget_ = kTypeBudget;
};

std::string descriptionOf(const json& schema, const json* resolved) {
  std::string text;
  for (const json* at : {&schema, resolved}) {
    if (at == nullptr || !at->is_object() || !text.empty()) continue;
    if (auto found = at->find("description"); found != at->end() && found->is_string()) {
      text = found->get<std::string>();
    }
  }
  for (const json* at : {&schema, resolved}) {
    if (at == nullptr || !at->is_object()) continue;
    if (auto value = at->find("default"); value != at->end()) {
      return text + (text.empty() ? "" : " ") + "(default " + valueText(*value, 80) + ")";
    }
  }
  return text;
}

// Returns the object schema whose properties an argument holds itself (an object) or in each
// item (an array of objects), and the suffix its children's names get.
std::pair<const json*, std::string> nestedObject(const json* schema, const json& root) {
  if (schema == nullptr || !schema->is_object()) return {nullptr, ""};
  if (auto properties = schema->find("properties");
      properties != schema->end() && properties->is_object() && !properties->empty()) {
    return {schema, "."};
  }
  auto items = schema->find("items");
  if (items == schema->end()) return {nullptr, ""};
  const json* item = followRefs(*items, root);
  if (item == nullptr || !item->is_object()) return {nullptr, ""};
  auto properties = item->find("properties");
  if (properties == item->end() || !properties->is_object() || properties->empty()) {
    return {nullptr, ""};
  }
  return {item, "[]."};
}

class ArgumentWalker {
 public:
  ArgumentWalker(const json& root, const SchemaViewLimits& limits) : root_(root), limits_(limits) {}

  void walk(const json& schema, const std::string& prefix, int level) {
    const json* object = followRefs(schema, root_);
    if (object == nullptr || !object->is_object()) return;
    auto properties = object->find("properties");
    if (properties == object->end() || !properties->is_object()) return;
    std::vector<std::string> required;
    if (auto names = object->find("required"); names != object->end() && names->is_array()) {
      for (const auto& name : *names) {
        if (name.is_string()) required.push_back(name.get<std::string>());
      }
    }
    // Required arguments first, then the others.
    for (bool wanted : {true, false}) {
      for (const auto& [key, child] : properties->items()) {
        bool isRequired = std::find(required.begin(), required.end(), key) != required.end();
        if (isRequired != wanted) continue;
        if (list_.rows.size() >= limits_.maxRows) {
          list_.tooMany = true;
          return;
        }
        add(prefix + key, child, isRequired, level);
      }
    }
  }

  ArgumentList take() { return std::move(list_); }

 private:
  void add(const std::string& name, const json& child, bool isRequired, int level) {
    const json* resolved = followRefs(child, root_);
    list_.rows.push_back(
        {name, TypeWriter(root_).describe(child, 0), isRequired, descriptionOf(child, resolved)});
    auto [nested, suffix] = nestedObject(resolved, root_);
    if (nested == nullptr) return;
    if (level + 1 >= limits_.maxLevels) {
      list_.tooDeep = true;
      list_.rows.back().type += " (not shown deeper)";
      return;
    }
    walk(*nested, name + suffix, level + 1);
  }

  const json& root_;
  const SchemaViewLimits& limits_;
  ArgumentList list_;
};

// Server text on one line: line breaks and tabs become spaces, anything else unsafe is escaped.
std::string flat(std::string text, std::size_t columns) {
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  return fitWidth(oneLine(text), columns);
}

// Like wrapWords, but a word wider than a line is broken over lines of its own, not cut.
std::vector<std::string> wrapAll(std::string_view text, std::size_t width) {
  std::vector<std::string> lines(1);
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = std::min(text.find(' ', start), text.size());
    std::string_view word = text.substr(start, end - start);
    start = end + 1;
    if (displayWidth(word) > width) {
      if (!lines.back().empty()) lines.emplace_back();
      for (const auto& piece : breakWord(word, width)) {
        if (!lines.back().empty()) lines.emplace_back();
        lines.back() = piece;
      }
      continue;
    }
    if (!lines.back().empty() && displayWidth(lines.back()) + 1 + displayWidth(word) > width) {
      lines.emplace_back();
    }
    if (!lines.back().empty()) lines.back() += ' ';
    lines.back() += word;
  }
  return lines;
}

constexpr std::size_t kLabelColumns = 15;

// "  label         value", the value wrapped under itself.
std::string field(const std::string& label, const std::string& value, std::size_t width) {
  std::string pad(kLabelColumns - std::min(kLabelColumns, label.size() + 2), ' ');
  std::string out = "  " + label + pad;
  std::size_t room = width > kLabelColumns + 20 ? width - kLabelColumns : 20;
  std::vector<std::string> lines = wrapAll(value, room);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    out += (i > 0 ? "\n" + std::string(kLabelColumns, ' ') : "") + lines[i];
  }
  return out + "\n";
}

const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto found = object.find(key);
  return found == object.end() ? nullptr : &*found;
}

std::string annotationsText(const json& annotations) {
  if (!annotations.is_object()) return flat(jsonText(annotations, -1), 200);
  static constexpr const char* kKnown[] = {"title", "readOnlyHint", "destructiveHint",
                                           "idempotentHint", "openWorldHint"};
  std::vector<std::string> parts;
  for (const char* key : kKnown) {
    if (const json* value = member(annotations, key)) {
      parts.push_back(std::string(key) + " " + flat(jsonText(*value, -1), 80));
    }
  }
  std::size_t others = 0;
  for (const auto& [key, value] : annotations.items()) {
    if (std::find(std::begin(kKnown), std::end(kKnown), key) != std::end(kKnown)) continue;
    if (others++ < kMaxListed) parts.push_back(flat(key, 40) + " " + flat(jsonText(value, -1), 40));
  }
  if (others > kMaxListed) parts.push_back("and " + std::to_string(others - kMaxListed) + " more");
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : ", ") + part;
  return out.empty() ? "none" : out;
}

// The output schema in brief: its type and, for an object, its top-level properties.
std::string outputText(const json& schema) {
  std::string out = TypeWriter(schema).describe(schema, 0);
  const json* properties = member(schema, "properties");
  if (properties == nullptr || !properties->is_object() || properties->empty()) {
    return flat(out, kMaxTypeColumns);
  }
  std::string listed;
  std::size_t count = 0;
  for (const auto& [key, value] : properties->items()) {
    if (count++ == kMaxListed) {
      listed += ", …";
      break;
    }
    listed += (listed.empty() ? "" : ", ") + key + ": " + TypeWriter(schema).describe(value, 1);
  }
  return flat(out + " {" + listed + "}", kMaxTypeColumns);
}

std::string descriptionBlock(const std::string& description, std::size_t width) {
  std::string out;
  std::size_t start = 0;
  while (start <= description.size()) {
    std::size_t end = std::min(description.find('\n', start), description.size());
    for (const auto& line : wrapAll(flat(description.substr(start, end - start), 100000),
                                    width > 24 ? width - 4 : 20)) {
      out += "  " + line + "\n";
    }
    start = end + 1;
  }
  return out;
}

std::string argumentBlock(const json& schema, std::size_t width, const SchemaViewLimits& limits) {
  ArgumentList arguments = listArguments(schema, limits);
  if (arguments.rows.empty()) return "  No arguments.\n";
  Table table({"ARGUMENT", "TYPE", "REQUIRED", "DESCRIPTION"});
  table.wrapColumn(0, 30);
  table.wrapColumn(1, 28);
  for (const auto& row : arguments.rows) {
    table.addRow({flat(row.name, kMaxTypeColumns), flat(row.type, kMaxTypeColumns),
                  row.required ? "yes" : "no", flat(row.description, kMaxDescriptionColumns)});
  }
  std::string out;
  std::string rendered = table.render(width > 22 ? width - 2 : 20, false);
  std::size_t start = 0;
  while (start < rendered.size()) {
    std::size_t end = rendered.find('\n', start);
    out += "  " + rendered.substr(start, end - start) + "\n";
    start = end + 1;
  }
  if (arguments.tooMany || arguments.tooDeep) out += "\n";
  if (arguments.tooMany) {
    out += "  Only the first " + std::to_string(limits.maxRows) +
           " arguments are shown; --json prints the whole schema.\n";
  }
  if (arguments.tooDeep) {
    out += "  Arguments nested more than " + std::to_string(limits.maxLevels) +
           " levels deep are not shown; --json prints the whole schema.\n";
  }
  return out;
}

}  // namespace

ArgumentList listArguments(const json& schema, const SchemaViewLimits& limits) {
  ArgumentWalker walker(schema, limits);
  walker.walk(schema, "", 0);
  return walker.take();
}

std::string describeType(const json& schema, const json& root) {
  return TypeWriter(root).describe(schema, 0);
}

std::string renderToolDetail(const core::gateway::CatalogTool& tool, std::size_t width,
                             const SchemaViewLimits& limits) {
  const json& raw = tool.tool.raw;
  std::string out = oneLine(tool.name) + "\n";
  if (tool.ability != core::policy::kKajaAbility &&
      tool.name != "mcp__" + tool.ability + "__" + tool.tool.name) {
    out += field("server name", oneLine(tool.tool.name), width);
  }
  std::string title = tool.tool.title;
  if (const json* annotations = member(raw, "annotations"); title.empty() && annotations) {
    if (const json* named = member(*annotations, "title"); named && named->is_string()) {
      title = named->get<std::string>();
    }
  }
  if (!title.empty()) out += field("title", flat(title, 200), width);
  out += field("read-only", tool.readOnly ? "yes" : "no (a call is a write)", width);
  out += field("schema", "~" + std::to_string(schemaChars(tool) / 4) + " tokens", width);
  if (const json* annotations = member(raw, "annotations")) {
    out += field("annotations", annotationsText(*annotations), width);
  }
  if (const json* output = member(raw, "outputSchema")) {
    out += field("returns", outputText(*output), width);
  }
  if (!tool.tool.description.empty()) out += "\n" + descriptionBlock(tool.tool.description, width);
  return out + "\n" + argumentBlock(tool.tool.inputSchema, width, limits);
}

json toolJson(const core::gateway::CatalogTool& tool) {
  std::size_t chars = schemaChars(tool);
  json out = {{"name", tool.name},
              {"ability", tool.ability},
              {"tool", tool.tool.name},
              {"readOnly", tool.readOnly},
              {"schemaChars", chars},
              {"schemaTokens", chars / 4},
              {"description", tool.tool.description},
              {"inputSchema", tool.tool.inputSchema}};
  if (!tool.tool.title.empty()) out["title"] = tool.tool.title;
  for (const char* key : {"outputSchema", "annotations"}) {
    if (const json* value = member(tool.tool.raw, key)) out[key] = *value;
  }
  return out;
}

std::size_t schemaChars(const core::gateway::CatalogTool& tool) {
  return tool.tool.name.size() + tool.tool.description.size() +
         tool.tool.inputSchema.dump(-1, ' ', false, json::error_handler_t::replace).size();
}

}  // namespace kaja::cli
