#include "core/policy/output_guard.h"

#include <optional>
#include <string>

namespace kaja::core::policy {
namespace {

using mcp::Json;

Json textBlock(std::string text) { return Json{{"type", "text"}, {"text", std::move(text)}}; }

std::string stringAt(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Cuts text blocks against one shared budget and remembers where the marker goes.
class TextBudget {
 public:
  explicit TextBudget(size_t bytes) : remaining_(bytes) {}

  // Returns the part of `text` that fits; the rest is counted as cut.
  std::string take(const std::string& text) {
    if (text.size() <= remaining_) {
      remaining_ -= text.size();
      return text;
    }
    size_t keep = utf8CutPoint(text, remaining_);
    remaining_ = 0;
    cut_ += text.size() - keep;
    return text.substr(0, keep);
  }
  [[nodiscard]] size_t cut() const { return cut_; }

 private:
  size_t remaining_;
  size_t cut_ = 0;
};

std::string mediaNote(const std::string& kind, const std::string& mimeType, size_t bytes,
                      size_t limit) {
  return "[kaja: " + kind + (mimeType.empty() ? "" : " (" + mimeType + ")") + " of " +
         std::to_string(bytes) + " bytes was left out: images, audio and files over " +
         std::to_string(limit) + " bytes in total are not passed on]";
}

}  // namespace

size_t utf8CutPoint(std::string_view text, size_t limit) {
  if (limit >= text.size()) return text.size();
  size_t cut = limit;
  // Step back over continuation bytes (10xxxxxx) so the cut falls before a lead byte.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

GuardedOutput guardOutput(const mcp::ToolResult& result, const OutputLimits& limits) {
  GuardedOutput out{result, {}};
  Json& raw = out.result.raw;
  TextBudget text(limits.textBytes);
  size_t mediaLeft = limits.mediaBytes;
  std::optional<size_t> markerBlock;  // the first block that lost text
  Json content = Json::array();
  // A media block is kept whole while the media budget lasts, else replaced by a note.
  auto keepMedia = [&](const Json& block, size_t size, const std::string& what,
                       const std::string& mimeType) {
    if (size <= mediaLeft) {
      mediaLeft -= size;
      content.push_back(block);
      return;
    }
    ++out.report.mediaBlocksReplaced;
    content.push_back(textBlock(mediaNote(what, mimeType, size, limits.mediaBytes)));
  };
  for (const auto& block : result.content()) {
    std::string type = block.is_object() ? stringAt(block, "type") : std::string();
    size_t cutBefore = text.cut();
    if (type == "text") {
      std::string kept = text.take(stringAt(block, "text"));
      if (text.cut() == cutBefore) {
        content.push_back(block);
      } else if (!markerBlock) {
        Json cut = block;
        cut["text"] = kept;
        markerBlock = content.size();
        content.push_back(std::move(cut));
      }
      continue;
    }
    if (type == "resource" && block.contains("resource") && block["resource"].is_object()) {
      const Json& resource = block["resource"];
      if (resource.contains("text")) {
        std::string kept = text.take(stringAt(resource, "text"));
        if (text.cut() == cutBefore) {
          content.push_back(block);
        } else if (!markerBlock) {
          Json cut = block;
          cut["resource"]["text"] = kept;
          markerBlock = content.size();
          content.push_back(std::move(cut));
        }
        continue;
      }
      keepMedia(block, stringAt(resource, "blob").size(), "file", stringAt(resource, "mimeType"));
      continue;
    }
    if (type == "image" || type == "audio") {
      keepMedia(block, stringAt(block, "data").size(), type == "image" ? "an image" : "audio",
                stringAt(block, "mimeType"));
      continue;
    }
    content.push_back(block);
  }
  out.report.textBytesCut = text.cut();
  if (markerBlock) {
    std::string marker = "\n[kaja: output cut here; " + std::to_string(text.cut()) +
                         " more bytes of text were not shown (limit " +
                         std::to_string(limits.textBytes) + " bytes)]";
    Json& block = content[*markerBlock];
    if (block["type"] == "text") {
      block["text"] = block["text"].get<std::string>() + marker;
    } else {
      block["resource"]["text"] = block["resource"]["text"].get<std::string>() + marker;
    }
  }
  if (auto structured = raw.find("structuredContent"); structured != raw.end()) {
    size_t size = structured->dump(-1, ' ', false, Json::error_handler_t::replace).size();
    if (size > limits.structuredBytes) {
      raw.erase(structured);
      out.report.structuredDropped = true;
      content.push_back(textBlock(
          "[kaja: structured content of " + std::to_string(size) + " bytes was left out (limit " +
          std::to_string(limits.structuredBytes) + " bytes); the text content has the result]"));
    }
  }
  if (raw.contains("content") || !content.empty()) raw["content"] = std::move(content);
  return out;
}

}  // namespace kaja::core::policy
