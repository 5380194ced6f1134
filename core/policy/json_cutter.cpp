#include "core/policy/json_cutter.h"

#include <algorithm>

#include "core/policy/output_guard.h"
#include "core/util/unicode.h"

namespace kaja::core::policy {
namespace {

using mcp::Json;

size_t scalarSize(const Json& value) {
  if (value.is_boolean()) return value.get<bool>() ? 4 : 5;
  if (value.is_null() || value.is_discarded()) return 4;
  if (value.is_number()) return value.dump().size();
  return 0;
}

size_t sizeAt(const Json& value, int depth, int maxDepth) {
  if (value.is_string()) return value.get_ref<const std::string&>().size() + 2;
  if (!value.is_structured()) return scalarSize(value);
  if (depth >= maxDepth) return 2;
  // The brackets, and a comma between each two members.
  size_t size = value.empty() ? 2 : 1 + value.size();
  if (value.is_array()) {
    for (const auto& item : value) size += sizeAt(item, depth + 1, maxDepth);
    return size;
  }
  for (const auto& [key, item] : value.items()) {
    size += key.size() + 3 + sizeAt(item, depth + 1, maxDepth);  // "key":
  }
  return size;
}

bool skipped(std::string_view key, std::initializer_list<std::string_view> skip) {
  return std::find(skip.begin(), skip.end(), key) != skip.end();
}

}  // namespace

// Removes Unicode tag characters U+E0000–E007F (UTF-8 F3 A0 80 80 – F3 A0 81 BF) in place
// and returns how many there were.
size_t removeTagCharacters(std::string& text) {
  if (text.find('\xF3') == std::string::npos) return 0;
  size_t removed = 0;
  size_t out = 0;
  for (size_t i = 0; i < text.size();) {
    if (i + 3 < text.size() && text[i] == '\xF3' && text[i + 1] == '\xA0' &&
        (text[i + 2] == '\x80' || text[i + 2] == '\x81') &&
        (static_cast<unsigned char>(text[i + 3]) & 0xC0) == 0x80) {
      ++removed;
      i += 4;
      continue;
    }
    text[out++] = text[i++];
  }
  text.resize(out);
  return removed;
}

std::string cleanText(std::string_view text, size_t& hidden) {
  // Made well-formed first: taking a tag character out of ill-formed text could join the
  // bytes around it into a new one.
  std::string kept = unicode::sanitizeUtf8(text);
  hidden += removeTagCharacters(kept);
  return kept;
}

size_t jsonSizeEstimate(const Json& value, int maxDepth) { return sizeAt(value, 0, maxDepth); }

std::optional<Json> JsonCutter::cut(const Json& value) { return cutAt(value, 0); }

void JsonCutter::copyMembers(const Json& from, Json& to,
                             std::initializer_list<std::string_view> skip) {
  if (from.is_object()) cutObject(from, to, 0, skip);
}

std::optional<Json> JsonCutter::cutAt(const Json& value, int depth) {
  if (left_ == 0) {
    cut_ += sizeAt(value, depth, maxDepth_);
    return std::nullopt;
  }
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    // An empty string has nothing to cut: when its quotes do not fit it is left out like a
    // number, since a marker would change it while counting no byte as cut.
    if (text.empty() && left_ < 2) {
      cut_ += 2;
      return std::nullopt;
    }
    return cutString(text);
  }
  if (!value.is_structured()) {
    size_t size = scalarSize(value);
    if (size > left_) {
      cut_ += size;
      return std::nullopt;
    }
    left_ -= size;
    return value;
  }
  if (depth >= maxDepth_) {
    cut_ += sizeAt(value, depth, maxDepth_);
    return cutString("[kaja: nested more than " + std::to_string(maxDepth_) +
                     " levels deep; left out]");
  }
  if (left_ < 2) {
    cut_ += sizeAt(value, depth, maxDepth_);
    return std::nullopt;
  }
  left_ -= 2;
  Json out = value.is_array() ? Json::array() : Json::object();
  if (value.is_array()) {
    cutArray(value, out, depth);
  } else {
    cutObject(value, out, depth, {});
  }
  return out;
}

Json JsonCutter::cutString(std::string_view text) {
  if (text.size() + 2 <= left_) {
    left_ -= text.size() + 2;
    return cleanText(text, hidden_);
  }
  size_t room = left_ > 2 ? left_ - 2 : 0;
  size_t keep = utf8CutPoint(text, room);
  left_ = 0;
  cut_ += text.size() - keep;
  return cleanText(text.substr(0, keep), hidden_) +
         "…[kaja: " + std::to_string(text.size() - keep) + " more bytes cut]";
}

void JsonCutter::cutArray(const Json& from, Json& to, int depth) {
  for (size_t i = 0; i < from.size(); ++i) {
    auto item = cutAt(from[i], depth + 1);
    if (!item) {
      for (size_t rest = i + 1; rest < from.size(); ++rest) {
        cut_ += sizeAt(from[rest], depth + 1, maxDepth_) + 1;
      }
      return;
    }
    to.push_back(std::move(*item));
    if (left_ > 0) --left_;  // the comma
  }
}

void JsonCutter::cutObject(const Json& from, Json& to, int depth,
                           std::initializer_list<std::string_view> skip) {
  for (const auto& [key, item] : from.items()) {
    if (skipped(key, skip)) continue;
    size_t keySize = key.size() + 4;
    if (keySize > left_) {
      cut_ += keySize + sizeAt(item, depth + 1, maxDepth_);
      continue;
    }
    size_t tags = 0;
    std::string name = cleanText(key, tags);
    // A key that cleaning changes (tag characters, ill-formed bytes) is left out, not renamed:
    // "_me" + a tag character + "ta" must not become a `_meta` of the wrong type, nor "type"
    // plus one replace the block's own type. A key the guard set or kept already is not
    // replaced either.
    if (name != key || skipped(name, skip) || to.contains(name)) {
      cut_ += keySize + sizeAt(item, depth + 1, maxDepth_);
      continue;
    }
    left_ -= keySize;
    auto kept = cutAt(item, depth + 1);
    if (!kept) {
      left_ += keySize;
      cut_ += keySize;
      continue;
    }
    to[std::move(name)] = std::move(*kept);
  }
}

}  // namespace kaja::core::policy
