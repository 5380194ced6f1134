#include "core/manifest/field_reader.h"

#include <algorithm>
#include <utility>

namespace kaja::core {
namespace {

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                  std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string joinQuoted(std::span<const std::string_view> words) {
  std::string out;
  for (auto word : words) {
    if (!out.empty()) out += ", ";
    out += '"';
    out += word;
    out += '"';
  }
  return out;
}

}  // namespace

std::string nearestWord(std::string_view word, std::span<const std::string_view> candidates) {
  std::string best;
  size_t bestDistance = std::max<size_t>(2, word.size() / 3) + 1;
  for (auto candidate : candidates) {
    size_t distance = editDistance(word, candidate);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string didYouMean(std::string_view word, std::span<const std::string_view> candidates) {
  std::string near = nearestWord(word, candidates);
  return near.empty() ? "" : "; did you mean \"" + near + "\"?";
}

FieldReader::FieldReader(const TomlValue& table, std::string file, std::string prefix)
    : table_(table), file_(std::move(file)), prefix_(std::move(prefix)) {}

std::string FieldReader::dotted(std::string_view key) const {
  return prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
}

Error FieldReader::errorAt(const TomlValue& value, std::string_view key,
                           const std::string& message) const {
  return Error{ErrorCode::kInvalidConfig,
               "\"" + dotted(key) + "\" " + message,
               file_ + ":" + std::to_string(value.line),
               {}};
}

Error FieldReader::errorHere(const std::string& message) const {
  std::string where = prefix_.empty() ? "" : "\"" + prefix_ + "\" ";
  return Error{
      ErrorCode::kInvalidConfig, where + message, file_ + ":" + std::to_string(table_.line), {}};
}

Result<void> FieldReader::onlyKeys(std::span<const std::string_view> allowed) const {
  for (const auto& [key, value] : table_.fields) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string message = "is not a known key";
    if (std::string near = nearestWord(key, allowed); !near.empty()) {
      message += "; did you mean \"" + dotted(near) + "\"?";
    } else {
      message += ".";
    }
    message += " Allowed here: " + joinQuoted(allowed) + ".";
    return std::unexpected(errorAt(value, key, message));
  }
  return {};
}

Result<std::optional<std::string>> FieldReader::string(std::string_view key) const {
  const TomlValue* value = get(key);
  if (value == nullptr) return std::optional<std::string>();
  if (value->type != TomlValue::Type::kString) {
    return std::unexpected(errorAt(
        *value, key, std::string("must be a string, not ") + describeType(value->type) + "."));
  }
  return std::optional<std::string>(value->text);
}

Result<std::optional<bool>> FieldReader::boolean(std::string_view key) const {
  const TomlValue* value = get(key);
  if (value == nullptr) return std::optional<bool>();
  if (value->type != TomlValue::Type::kBoolean) {
    return std::unexpected(errorAt(
        *value, key, std::string("must be true or false, not ") + describeType(value->type) + "."));
  }
  return std::optional<bool>(value->boolean);
}

Result<std::optional<std::int64_t>> FieldReader::integer(std::string_view key, std::int64_t min,
                                                         std::int64_t max) const {
  const TomlValue* value = get(key);
  if (value == nullptr) return std::optional<std::int64_t>();
  const std::string range = std::to_string(min) + " to " + std::to_string(max);
  if (value->type != TomlValue::Type::kInteger) {
    return std::unexpected(errorAt(
        *value, key,
        "must be a whole number from " + range + ", not " + describeType(value->type) + "."));
  }
  if (value->integer < min || value->integer > max) {
    return std::unexpected(errorAt(
        *value, key, "must be from " + range + ", not " + std::to_string(value->integer) + "."));
  }
  return std::optional<std::int64_t>(value->integer);
}

Result<std::optional<std::vector<std::string>>> FieldReader::strings(std::string_view key) const {
  const TomlValue* value = get(key);
  if (value == nullptr) return std::optional<std::vector<std::string>>();
  auto wrong = [&](const char* what) {
    return std::unexpected(
        errorAt(*value, key, std::string("must be an array of strings, but ") + what));
  };
  if (value->type != TomlValue::Type::kArray) {
    return wrong((std::string("it is ") + describeType(value->type) + ".").c_str());
  }
  std::vector<std::string> out;
  for (const auto& item : value->items) {
    if (item.type != TomlValue::Type::kString) {
      return wrong((std::string("it holds ") + describeType(item.type) + ".").c_str());
    }
    out.push_back(item.text);
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

Result<std::optional<std::map<std::string, std::string>>> FieldReader::stringMap(
    std::string_view key) const {
  const TomlValue* value = get(key);
  if (value == nullptr) return std::optional<std::map<std::string, std::string>>();
  if (value->type != TomlValue::Type::kTable) {
    return std::unexpected(
        errorAt(*value, key,
                std::string("must be a table of strings, not ") + describeType(value->type) + "."));
  }
  std::map<std::string, std::string> out;
  for (const auto& [name, item] : value->fields) {
    if (item.type != TomlValue::Type::kString) {
      return std::unexpected(
          errorAt(item, std::string(key) + "." + name,
                  std::string("must be a string, not ") + describeType(item.type) + "."));
    }
    out.emplace(name, item.text);
  }
  return std::optional<std::map<std::string, std::string>>(std::move(out));
}

Result<std::optional<std::string>> FieldReader::choice(
    std::string_view key, std::initializer_list<std::string_view> choices) const {
  std::span<const std::string_view> options(choices.begin(), choices.size());
  auto text = string(key);
  // A value of the wrong type hears what the right values are too.
  if (!text) {
    Error error = text.error();
    if (error.message.ends_with(".")) error.message.pop_back();
    error.message += "; one of " + joinQuoted(options) + ".";
    return std::unexpected(std::move(error));
  }
  if (!*text) return text;
  if (std::find(choices.begin(), choices.end(), **text) != choices.end()) return text;
  std::string message = "must be one of " + joinQuoted(options) + ", not \"" + **text + "\"";
  if (std::string near = nearestWord(**text, options); !near.empty()) {
    message += " (did you mean \"" + near + "\"?)";
  }
  return std::unexpected(errorAt(*get(key), key, message + "."));
}

}  // namespace kaja::core
