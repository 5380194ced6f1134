#include "core/policy/output_guard.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "core/policy/json_cutter.h"
#include "core/util/quote.h"

namespace kaja::core::policy {
namespace {

using mcp::Json;

// A URI, name or MIME type longer than this is cut: it is there to identify, not to carry.
constexpr size_t kIdentifierBytes = 1024;
// What one content block's frame costs at least: `{"type":"text","text":""},` and a little.
constexpr size_t kBlockFrameBytes = 32;
// The budget for block frames is as large as the text limit, and never below this.
constexpr size_t kMinFrameBudget = 4096;

// The budget for block frames of one result.
size_t frameBudget(const OutputLimits& limits) {
  return std::max(limits.textBytes, kMinFrameBudget);
}

Json textBlock(std::string text) { return Json{{"type", "text"}, {"text", std::move(text)}}; }

const std::string* stringMember(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

// Cuts text against one shared budget; kept text is well-formed UTF-8 without tag characters.
class TextBudget {
 public:
  explicit TextBudget(size_t bytes) : remaining_(bytes) {}

  // Returns the part of `text` that fits; the rest is counted as cut.
  std::string take(std::string_view text) {
    size_t keep = text.size() <= remaining_ ? text.size() : utf8CutPoint(text, remaining_);
    remaining_ -= std::min(remaining_, text.size());
    cut_ += text.size() - keep;
    return cleanText(text.substr(0, keep), hidden_);
  }
  [[nodiscard]] size_t cut() const { return cut_; }
  [[nodiscard]] size_t hidden() const { return hidden_; }
  [[nodiscard]] size_t remaining() const { return remaining_; }
  // Counts text cut before it reached take().
  void countCut(size_t bytes) { cut_ += bytes; }

 private:
  size_t remaining_;
  size_t cut_ = 0;
  size_t hidden_ = 0;
};

std::string mediaNote(const std::string& kind, const std::string& mimeType, size_t bytes,
                      size_t limit) {
  return "[kaja: " + kind + (mimeType.empty() ? "" : " (" + mimeType + ")") + " of " +
         std::to_string(bytes) + " bytes was left out: images, audio and files over " +
         std::to_string(limit) + " bytes in total are not passed on]";
}

// The content block kinds of MCP, and what is wrong with a block that is none of them.
enum class Kind { kText, kMedia, kLink, kResourceText, kResourceBlob, kBad };

struct Classified {
  Kind kind = Kind::kBad;
  std::string why;  // for kBad: "its text is not a string"
};

Classified classify(const Json& block) {
  if (!block.is_object()) return {Kind::kBad, "it is not a JSON object"};
  const std::string* type = stringMember(block, "type");
  if (type == nullptr) return {Kind::kBad, "its type is missing or not a string"};
  if (*type == "text") {
    if (stringMember(block, "text") == nullptr) return {Kind::kBad, "its text is not a string"};
    return {Kind::kText, {}};
  }
  if (*type == "image" || *type == "audio") {
    if (stringMember(block, "data") == nullptr) return {Kind::kBad, "its data is not a string"};
    if (stringMember(block, "mimeType") == nullptr) {
      return {Kind::kBad, "its mimeType is not a string"};
    }
    return {Kind::kMedia, {}};
  }
  if (*type == "resource_link") {
    if (stringMember(block, "uri") == nullptr) return {Kind::kBad, "its uri is not a string"};
    if (block.contains("name") && stringMember(block, "name") == nullptr) {
      return {Kind::kBad, "its name is not a string"};
    }
    return {Kind::kLink, {}};
  }
  if (*type == "resource") {
    auto resource = block.find("resource");
    if (resource == block.end() || !resource->is_object()) {
      return {Kind::kBad, "its resource is not an object"};
    }
    if (stringMember(*resource, "uri") == nullptr) {
      return {Kind::kBad, "its resource uri is not a string"};
    }
    bool text = stringMember(*resource, "text") != nullptr;
    bool blob = stringMember(*resource, "blob") != nullptr;
    if (text == blob) return {Kind::kBad, "its resource has not exactly one string text or blob"};
    return {text ? Kind::kResourceText : Kind::kResourceBlob, {}};
  }
  std::string shown(type->substr(0, utf8CutPoint(*type, 64)));
  return {Kind::kBad, "its type " + quoteForMessage(shown) +
                          " is not one of text, image, audio, resource_link, resource"};
}

// Guards one result: holds the three budgets and what was done.
class Guard {
 public:
  explicit Guard(const OutputLimits& limits)
      : limits_(limits),
        text_(limits.textBytes),
        meta_(limits.metaBytes),
        framesLeft_(frameBudget(limits)) {}

  Json guardContent(const Json& content);
  Json guardStructured(const Json& structured);
  void finish(Json& content, OutputReport& report);
  JsonCutter& meta() { return meta_; }
  void note(std::string text) { notes_.push_back(std::move(text)); }

 private:
  void addBlock(const Json& block, Json& content);
  void addText(Json block, std::string_view text, bool inResource, Json& content);
  void addMedia(const Json& block, const std::string& data, const std::string& mimeType,
                const std::string& kind, Json& content);
  void addBad(const Json& block, const std::string& why, Json& content);
  std::string identifier(const std::string& value);
  /// Takes `bytes` from the budget for block frames; false (the block is left out) when
  /// they do not fit.
  bool takeFrame(size_t bytes);

  const OutputLimits& limits_;
  TextBudget text_;
  JsonCutter meta_;
  size_t mediaLeft_ = limits_.mediaBytes;
  size_t mediaReplaced_ = 0;
  size_t blocksReplaced_ = 0;
  // Each block's keys, identifiers and the note kaja may put in its place cost this budget, so
  // that a result of many tiny or many replaced blocks cannot grow past every limit.
  size_t framesLeft_;
  size_t blocksLeftOut_ = 0;
  size_t structuredCut_ = 0;
  size_t structuredHidden_ = 0;
  bool structuredDropped_ = false;
  size_t identifierCut_ = 0;
  size_t fieldsHidden_ = 0;  // tag characters out of identifiers, media and blocks shown as JSON
  std::optional<std::pair<size_t, bool>> marker_;  // first block that lost text; in a resource?
  std::vector<std::string> notes_;
};

std::string Guard::identifier(const std::string& value) {
  if (value.size() <= kIdentifierBytes) return cleanText(value, fieldsHidden_);
  size_t keep = utf8CutPoint(value, kIdentifierBytes);
  identifierCut_ += value.size() - keep;
  return cleanText(std::string_view(value).substr(0, keep), fieldsHidden_) +
         "…[kaja: " + std::to_string(value.size() - keep) + " more bytes cut]";
}

Json Guard::guardContent(const Json& content) {
  Json out = Json::array();
  if (!content.is_array()) {
    addBad(content, "the content is not an array", out);
    return out;
  }
  for (const auto& block : content) addBlock(block, out);
  return out;
}

bool Guard::takeFrame(size_t bytes) {
  if (bytes > framesLeft_) {
    framesLeft_ = 0;  // later blocks are left out too, so the ones shown keep their order
    ++blocksLeftOut_;
    return false;
  }
  framesLeft_ -= bytes;
  return true;
}

// Returns the bytes of a block's frame: its keys and punctuation and its identifiers (URI,
// name, MIME type), as far as kaja keeps them.
size_t frameBytes(const Json& block, Kind kind) {
  size_t bytes = kBlockFrameBytes;
  const auto add = [&bytes](const Json& object, const char* key) {
    if (!object.is_object()) return;
    if (const std::string* value = stringMember(object, key)) {
      bytes += std::min(value->size(), kIdentifierBytes) + std::strlen(key) + 4;
    }
  };
  switch (kind) {
    case Kind::kMedia:
      add(block, "mimeType");
      break;
    case Kind::kLink:
      add(block, "uri");
      add(block, "name");
      break;
    case Kind::kResourceText:
    case Kind::kResourceBlob:
      add(block["resource"], "uri");
      add(block["resource"], "mimeType");
      break;
    case Kind::kText:
    case Kind::kBad:
      break;
  }
  return bytes;
}

void Guard::addBlock(const Json& block, Json& content) {
  Classified classified = classify(block);
  if (!takeFrame(frameBytes(block, classified.kind))) return;
  switch (classified.kind) {
    case Kind::kText: {
      Json out = {{"type", "text"}};
      meta_.copyMembers(block, out, {"type", "text"});
      addText(std::move(out), *stringMember(block, "text"), false, content);
      return;
    }
    case Kind::kMedia: {
      const std::string& type = *stringMember(block, "type");
      addMedia(block, *stringMember(block, "data"), *stringMember(block, "mimeType"),
               type == "image" ? "an image" : "audio", content);
      return;
    }
    case Kind::kLink: {
      Json out = {{"type", "resource_link"}, {"uri", identifier(*stringMember(block, "uri"))}};
      if (const auto* name = stringMember(block, "name")) out["name"] = identifier(*name);
      meta_.copyMembers(block, out, {"type", "uri", "name"});
      content.push_back(std::move(out));
      return;
    }
    case Kind::kResourceText: {
      const Json& resource = block["resource"];
      Json inner = {{"uri", identifier(*stringMember(resource, "uri"))}};
      meta_.copyMembers(resource, inner, {"uri", "text"});
      Json out = {{"type", "resource"}, {"resource", std::move(inner)}};
      meta_.copyMembers(block, out, {"type", "resource"});
      addText(std::move(out), *stringMember(resource, "text"), true, content);
      return;
    }
    case Kind::kResourceBlob: {
      const Json& resource = block["resource"];
      const std::string* mimeType = stringMember(resource, "mimeType");
      addMedia(block, *stringMember(resource, "blob"), mimeType ? *mimeType : std::string(), "file",
               content);
      return;
    }
    case Kind::kBad:
      addBad(block, classified.why, content);
      return;
  }
}

void Guard::addText(Json block, std::string_view text, bool inResource, Json& content) {
  size_t cutBefore = text_.cut();
  std::string kept = text_.take(text);
  bool cut = text_.cut() != cutBefore;
  // Once the budget is spent, later text blocks are left out whole: the marker counts them.
  if (cut && marker_) return;
  if (cut) marker_ = std::make_pair(content.size(), inResource);
  (inResource ? block["resource"]["text"] : block["text"]) = std::move(kept);
  content.push_back(std::move(block));
}

void Guard::addMedia(const Json& block, const std::string& data, const std::string& mimeType,
                     const std::string& kind, Json& content) {
  if (data.size() <= mediaLeft_) {
    mediaLeft_ -= data.size();
    bool resource = kind == "file";
    Json out = {{"type", resource ? "resource" : block["type"].get<std::string>()}};
    if (resource) {
      const Json& from = block["resource"];
      Json inner = {{"uri", identifier(*stringMember(from, "uri"))},
                    {"blob", cleanText(data, fieldsHidden_)}};
      meta_.copyMembers(from, inner, {"uri", "blob"});
      out["resource"] = std::move(inner);
      meta_.copyMembers(block, out, {"type", "resource"});
    } else {
      out["data"] = cleanText(data, fieldsHidden_);
      out["mimeType"] = identifier(mimeType);
      meta_.copyMembers(block, out, {"type", "data", "mimeType"});
    }
    content.push_back(std::move(out));
    return;
  }
  std::string shownType = escapeForMessage(identifier(mimeType).substr(0, 128));
  std::string note = mediaNote(kind, shownType, data.size(), limits_.mediaBytes);
  if (!takeFrame(note.size())) return;
  ++mediaReplaced_;
  content.push_back(textBlock(std::move(note)));
}

void Guard::addBad(const Json& block, const std::string& why, Json& content) {
  std::string note = "[kaja: a content block was passed on as JSON text because " + why + "]\n";
  // Room for the note and for the one on bytes cut that may follow it.
  if (!takeFrame(note.size() + 64)) return;
  ++blocksReplaced_;
  // The block's JSON is cut to the text budget before it is written, so a huge block costs
  // no more than the budget.
  JsonCutter cutter(text_.remaining());
  auto shown = cutter.cut(block);
  std::string json = shown ? shown->dump(-1, ' ', false, Json::error_handler_t::replace) : "";
  size_t cutBefore = text_.cut();
  std::string kept = text_.take(json);
  text_.countCut(cutter.cutBytes());
  fieldsHidden_ += cutter.hidden();
  size_t lost = text_.cut() - cutBefore;
  if (lost > 0) note += "[kaja: " + std::to_string(lost) + " bytes of it were cut]\n";
  content.push_back(textBlock(note + kept));
}

Json Guard::guardStructured(const Json& structured) {
  JsonCutter cutter(limits_.structuredBytes);
  auto kept = cutter.cut(structured);
  structuredCut_ = cutter.cutBytes();
  structuredHidden_ = cutter.hidden();
  if (!kept) {
    structuredDropped_ = true;
    note("[kaja: structured content of " + std::to_string(structuredCut_) +
         " bytes was left out (limit " + std::to_string(limits_.structuredBytes) +
         " bytes); the text content has the result]");
    return Json();
  }
  if (structuredCut_ > 0) {
    // The cutter also leaves out keys with hidden characters and nesting past its depth, so
    // the note names every reason rather than the size alone.
    note("[kaja: structured content was cut to its first " +
         std::to_string(limits_.structuredBytes) + " bytes, without keys that hold hidden " +
         "characters and below 64 levels of nesting; " + std::to_string(structuredCut_) +
         " bytes were not shown, and each cut string ends in a marker]");
  }
  return std::move(*kept);
}

void Guard::finish(Json& content, OutputReport& report) {
  if (marker_) {
    std::string marker = "\n[kaja: output cut here; " + std::to_string(text_.cut()) +
                         " more bytes of text were not shown (limit " +
                         std::to_string(limits_.textBytes) + " bytes)]";
    Json& block = content[marker_->first];
    Json& text = marker_->second ? block["resource"]["text"] : block["text"];
    text = text.get<std::string>() + marker;
  }
  if (blocksLeftOut_ > 0) {
    note("[kaja: " + std::to_string(blocksLeftOut_) +
         " content blocks were left out: the result has more blocks than kaja passes on (their "
         "frames, names and notes are limited to " +
         std::to_string(frameBudget(limits_)) + " bytes)]");
  }
  size_t hidden = text_.hidden() + meta_.hidden() + structuredHidden_ + fieldsHidden_;
  if (hidden > 0) {
    note("[kaja: " + std::to_string(hidden) +
         " invisible Unicode tag characters (U+E0000 to U+E007F) were taken out of the text]");
  }
  size_t metaCut = meta_.cutBytes() + identifierCut_;
  if (metaCut > 0) {
    note("[kaja: " + std::to_string(metaCut) +
         " bytes of _meta, annotations, names and other fields were cut or left out (limit " +
         std::to_string(limits_.metaBytes) + " bytes)]");
  }
  for (auto& text : notes_) content.push_back(textBlock(std::move(text)));
  report.textBytesCut = text_.cut();
  report.mediaBlocksReplaced = mediaReplaced_;
  report.structuredDropped = structuredDropped_;
  report.structuredBytesCut = structuredCut_;
  report.metaBytesCut = metaCut;
  report.blocksReplaced = blocksReplaced_;
  report.blocksLeftOut = blocksLeftOut_;
  report.hiddenCharactersRemoved = hidden;
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
  GuardedOutput out;
  Guard guard(limits);
  const Json& raw = result.raw;
  Json& guarded = out.result.raw;
  guarded = Json::object();
  Json content = Json::array();
  if (!raw.is_object()) {
    content = guard.guardContent(Json::array({raw}));
    guarded["isError"] = true;
    guard.finish(content, out.report);
    guarded["content"] = std::move(content);
    return out;
  }
  auto rawContent = raw.find("content");
  if (rawContent != raw.end()) content = guard.guardContent(*rawContent);
  if (auto isError = raw.find("isError"); isError != raw.end()) {
    if (isError->is_boolean()) {
      guarded["isError"] = *isError;
    } else {
      guarded["isError"] = true;
      out.report.isErrorReplaced = true;
      guard.note(
          "[kaja: the server's isError was not true or false, so the result is marked "
          "as an error]");
    }
  }
  if (auto structured = raw.find("structuredContent"); structured != raw.end()) {
    Json kept = guard.guardStructured(*structured);
    if (!kept.is_null() || structured->is_null()) guarded["structuredContent"] = std::move(kept);
  }
  guard.meta().copyMembers(raw, guarded, {"content", "isError", "structuredContent"});
  guard.finish(content, out.report);
  if (rawContent != raw.end() || !content.empty()) guarded["content"] = std::move(content);
  return out;
}

}  // namespace kaja::core::policy
