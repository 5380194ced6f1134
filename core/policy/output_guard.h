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
};

/// What the guard changed.
struct OutputReport {
  size_t textBytesCut = 0;         ///< bytes of text not shown
  size_t mediaBlocksReplaced = 0;  ///< images/audio/blobs replaced by a note
  bool structuredDropped = false;  ///< structuredContent removed
  /// Returns true when the result was changed at all.
  [[nodiscard]] bool changed() const {
    return textBytesCut > 0 || mediaBlocksReplaced > 0 || structuredDropped;
  }
};

/// The guarded result and what was done to it.
struct GuardedOutput {
  mcp::ToolResult result;
  OutputReport report;
};

/// Returns the largest n <= `limit` such that text[0, n) ends on a UTF-8 character boundary.
size_t utf8CutPoint(std::string_view text, size_t limit);

/// The output guard step: returns `result` with text cut (at a UTF-8 boundary) once the text
/// budget is spent, followed by a marker saying how many bytes were cut; image, audio and blob
/// blocks kept whole while they fit the media budget and otherwise replaced by a text note;
/// structuredContent over its limit removed with a note (the text is kept). Other blocks and
/// fields (isError, _meta, resource links) pass unchanged. The input is not modified.
GuardedOutput guardOutput(const mcp::ToolResult& result, const OutputLimits& limits = {});

}  // namespace kaja::core::policy
