#include "core/manifest/toml_value.h"

#include <toml++/toml.h>

#include <cstdio>
#include <vector>

#include "core/util/sys.h"

namespace kaja::core {
namespace {

// Manifests, personas and kaja's own files are small; a larger one is refused unread.
constexpr std::size_t kMaxTomlFileBytes = std::size_t{16} << 20;

int lineOf(const toml::node& node) { return static_cast<int>(node.source().begin.line); }

TomlValue convert(const toml::node& node) {
  TomlValue out;
  out.line = lineOf(node);
  if (const auto* table = node.as_table()) {
    out.type = TomlValue::Type::kTable;
    for (const auto& [key, child] : *table) {
      TomlValue value = convert(child);
      // A key's own line is more useful than its value's when the value is a table.
      if (key.source().begin.line != 0) value.line = static_cast<int>(key.source().begin.line);
      out.fields.emplace_back(std::string(key.str()), std::move(value));
    }
  } else if (const auto* array = node.as_array()) {
    out.type = TomlValue::Type::kArray;
    for (const auto& child : *array) out.items.push_back(convert(child));
  } else if (const auto* str = node.as_string()) {
    out.type = TomlValue::Type::kString;
    out.text = str->get();
  } else if (const auto* integer = node.as_integer()) {
    out.type = TomlValue::Type::kInteger;
    out.integer = integer->get();
  } else if (const auto* number = node.as_floating_point()) {
    out.type = TomlValue::Type::kFloat;
    out.number = number->get();
  } else if (const auto* boolean = node.as_boolean()) {
    out.type = TomlValue::Type::kBoolean;
    out.boolean = boolean->get();
  } else {
    out.type = TomlValue::Type::kDateTime;
    // Dates and times are not used by any kaja file; keep a printable placeholder.
    out.text = "<date or time>";
  }
  return out;
}

Result<TomlValue> parseWith(const auto& parse, const std::string& sourceName) {
  try {
    toml::table table = parse();
    TomlValue root = convert(table);
    root.line = 1;
    return root;
  } catch (const toml::parse_error& err) {
    return fail(ErrorCode::kInvalidConfig, "not valid TOML: " + std::string(err.description()),
                sourceName + ":" + std::to_string(err.source().begin.line));
  } catch (const std::exception& err) {
    return fail(ErrorCode::kIo, std::string("cannot read the file: ") + err.what(), sourceName);
  }
}

void appendQuoted(std::string& out, const std::string& text) {
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        // TOML allows no raw control character in a basic string, DEL included.
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

bool isBareKey(const std::string& key) {
  if (key.empty()) return false;
  for (char c : key) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

void appendKey(std::string& out, const std::string& key) {
  if (isBareKey(key)) {
    out += key;
  } else {
    appendQuoted(out, key);
  }
}

void appendInline(std::string& out, const TomlValue& value) {
  switch (value.type) {
    case TomlValue::Type::kString:
      appendQuoted(out, value.text);
      break;
    case TomlValue::Type::kInteger:
      out += std::to_string(value.integer);
      break;
    case TomlValue::Type::kFloat:
      out += std::to_string(value.number);
      break;
    case TomlValue::Type::kBoolean:
      out += value.boolean ? "true" : "false";
      break;
    case TomlValue::Type::kDateTime:
      out += value.text;
      break;
    case TomlValue::Type::kArray: {
      out += '[';
      for (size_t i = 0; i < value.items.size(); ++i) {
        if (i > 0) out += ", ";
        appendInline(out, value.items[i]);
      }
      out += ']';
      break;
    }
    case TomlValue::Type::kTable: {
      out += '{';
      for (size_t i = 0; i < value.fields.size(); ++i) {
        out += i > 0 ? ", " : " ";
        appendKey(out, value.fields[i].key);
        out += " = ";
        appendInline(out, value.fields[i].value);
      }
      out += value.fields.empty() ? "}" : " }";
      break;
    }
  }
}

void appendTable(std::string& out, const TomlValue& table, const std::string& prefix) {
  for (const auto& [key, value] : table.fields) {
    if (value.type == TomlValue::Type::kTable) continue;
    appendKey(out, key);
    out += " = ";
    appendInline(out, value);
    out += '\n';
  }
  for (const auto& [key, value] : table.fields) {
    if (value.type != TomlValue::Type::kTable) continue;
    std::string name = prefix;
    if (!name.empty()) name += '.';
    if (isBareKey(key)) {
      name += key;
    } else {
      appendQuoted(name, key);
    }
    out += "\n[" + name + "]\n";
    appendTable(out, value, name);
  }
}

// The most dotted parts one key may have. toml++ nests a table for each part and recurses
// that deep, so a key of 100,000 parts (200 KB of text) overflows the stack; arrays and
// inline tables it limits itself, at 256.
constexpr std::size_t kMaxKeyParts = 128;

/// Returns the line of the first key (in a key-value pair, a table header or an inline
/// table) with more than kMaxKeyParts dotted parts, or 0 when there is none. A light reading
/// of TOML's lexical rules: strings and comments are skipped, and only keys are counted, so
/// the dots of floats and of text are not.
std::size_t lineOfOverlongKey(std::string_view text) {
  std::vector<char> open;  // '[' arrays and '{' inline tables the reader is inside
  bool inKey = true;       // at a line's start, or after '{' or ',' in an inline table
  bool header = false;     // inside a [table] or [[array]] header
  std::size_t parts = 1;
  std::size_t line = 1;
  std::size_t i = 0;
  const auto skipString = [&](char quote) {
    const bool multi = text.substr(i, 3) == std::string(3, quote);
    const std::string close = multi ? std::string(3, quote) : std::string(1, quote);
    i += close.size();
    while (i < text.size() && text.compare(i, close.size(), close) != 0) {
      if (text[i] == '\\' && quote == '"') ++i;
      if (i < text.size() && text[i] == '\n') ++line;
      ++i;
    }
    i += close.size();
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      skipString(c);
      continue;
    }
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == '\n') {
      ++line;
      if (open.empty()) {
        inKey = true;
        header = false;
        parts = 1;
      }
    } else if (c == '}' && !header && !open.empty() && open.back() == '{') {
      // An empty inline table, or one closed after a trailing comma, ends where a key
      // would start.
      open.pop_back();
      inKey = false;
    } else if (inKey || header) {
      if (c == '.') {
        if (++parts > kMaxKeyParts) return line;
      } else if (c == '[' && inKey && open.empty() && parts == 1) {
        header = true;
        inKey = false;
      } else if (c == '=' && inKey) {
        inKey = false;
      } else if (c == ']' && header) {
        header = false;
      }
    } else if (c == '[' || c == '{') {
      open.push_back(c);
      if (c == '{') {
        inKey = true;
        parts = 1;
      }
    } else if ((c == ']' || c == '}') && !open.empty()) {
      open.pop_back();
    } else if (c == ',' && !open.empty() && open.back() == '{') {
      inKey = true;
      parts = 1;
    }
    ++i;
  }
  return 0;
}

}  // namespace

const TomlValue* TomlValue::find(std::string_view key) const {
  for (const auto& [name, value] : fields) {
    if (name == key) return &value;
  }
  return nullptr;
}

const char* describeType(TomlValue::Type type) {
  switch (type) {
    case TomlValue::Type::kString:
      return "a string";
    case TomlValue::Type::kInteger:
      return "an integer";
    case TomlValue::Type::kFloat:
      return "a number";
    case TomlValue::Type::kBoolean:
      return "a boolean";
    case TomlValue::Type::kArray:
      return "an array";
    case TomlValue::Type::kTable:
      return "a table";
    case TomlValue::Type::kDateTime:
      return "a date";
  }
  return "a value";
}

Result<TomlValue> parseTomlFile(const std::string& path) {
  // Read without blocking and from a regular file only: a FIFO named persona.toml must not
  // hang every command, as toml::parse_file would while it waits for a writer.
  auto text = readRegularFile(path, kMaxTomlFileBytes, "it");
  if (!text) {
    const Error& err = text.error();
    if (err.code == ErrorCode::kNotFound) {
      return fail(ErrorCode::kNotFound, "cannot read the file: it does not exist", path);
    }
    return fail(ErrorCode::kIo, "cannot read the file: " + err.message, path);
  }
  return parseTomlText(*text, path);
}

Result<TomlValue> parseTomlText(std::string_view text, const std::string& sourceName) {
  if (const std::size_t line = lineOfOverlongKey(text); line != 0) {
    return fail(ErrorCode::kInvalidConfig,
                "not valid TOML for kaja: a key has more than " + std::to_string(kMaxKeyParts) +
                    " dotted parts",
                sourceName + ":" + std::to_string(line));
  }
  return parseWith([&] { return toml::parse(text, sourceName); }, sourceName);
}

std::string formatToml(const TomlValue& table) {
  std::string out;
  appendTable(out, table, "");
  return out;
}

std::string formatTomlInline(const TomlValue& value) {
  std::string out;
  appendInline(out, value);
  return out;
}

}  // namespace kaja::core
