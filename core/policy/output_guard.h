#pragma once

#include <cstddef>
#include <string_view>

#include "core/mcp/types.h"

namespace kaja::core::policy {

/// How much of a tool result reaches the model (K24, U3).
struct OutputLimits {
  size_t textBytes = 32UL * 1024;  ///< all text blocks (and embedded text resources) together
  size_t mediaBytes =
      5UL * 1024 * 1024;                 ///< all image, audio and blob data together (base64 bytes)
  size_t structuredBytes = 32UL * 1024;  ///< structuredContent as serialised JSON
  /// Everything else, as serialised JSON: `_meta`, annotations, titles and unknown fields of
  /// the result and of its blocks.
  size_t metaBytes = 16UL * 1024;
};

/// What the guard changed.
struct OutputReport {
  size_t textBytesCut = 0;         ///< bytes of text not shown
  size_t mediaBlocksReplaced = 0;  ///< images/audio/blobs replaced by a note
  bool structuredDropped = false;  ///< structuredContent removed (it was no JSON kaja can keep)
  size_t structuredBytesCut = 0;   ///< bytes of structuredContent cut or left out
  size_t metaBytesCut = 0;         ///< bytes of other fields cut or left out
  size_t blocksReplaced = 0;       ///< blocks of an unknown type or shape, shown as JSON text
  size_t blocksLeftOut = 0;  ///< blocks past the budget for block frames, not passed on at all
  size_t hiddenCharactersRemoved = 0;  ///< Unicode tag characters taken out of text
  bool isErrorReplaced = false;        ///< isError was no boolean, and became true
  /// Returns true when the result was changed at all.
  [[nodiscard]] bool changed() const {
    return textBytesCut > 0 || mediaBlocksReplaced > 0 || structuredDropped ||
           structuredBytesCut > 0 || metaBytesCut > 0 || blocksReplaced > 0 || blocksLeftOut > 0 ||
           hiddenCharactersRemoved > 0 || isErrorReplaced;
  }
};

/// The guarded result and what was done to it.
struct GuardedOutput {
  mcp::ToolResult result;
  OutputReport report;
};

/// Returns the largest n <= `limit` such that text[0, n) ends on a UTF-8 character boundary.
size_t utf8CutPoint(std::string_view text, size_t limit);

/// The output guard step. Every part of `result` is bounded, and every change is said in a
/// marker the model reads:
/// - text blocks and embedded text resources share `textBytes`; the text is cut at a UTF-8
///   boundary once it is spent, followed by a marker saying how many bytes were cut;
/// - image, audio and blob data is kept whole while it fits `mediaBytes`, else replaced by a
///   text note;
/// - a block of an unknown or miscased type, or whose fields have the wrong JSON types (a
///   `text` that is no string), or that is no object, becomes a text block: a note naming
///   it, then its JSON, within the text budget;
/// - structuredContent is cut to `structuredBytes` keeping its JSON types (long strings end
///   in a marker, arrays and objects lose their last members), with a note in the content;
/// - `_meta`, annotations and any other field are cut the same way to `metaBytes`;
/// - Unicode tag characters (U+E0000–E007F), which draw nothing yet read as ASCII to a
///   model, are taken out of every kept string; ill-formed UTF-8 becomes U+FFFD.
/// The input is not modified; the cost is bounded by the limits, not by the result's size.
GuardedOutput guardOutput(const mcp::ToolResult& result, const OutputLimits& limits = {});

}  // namespace kaja::core::policy
