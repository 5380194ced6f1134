#pragma once

#include <string>
#include <string_view>

namespace kaja::core {

/// Returns the line of a child's stderr that best says why it failed, trimmed ("" only when
/// `text` has no line that is not blank). Reading from the end, it prefers:
///   1. the last line of the last Python `Traceback`, or the last line that states an error
///      (`Error:`, `error:`, `ERROR`, `Error [`, `Exception`, `Cannot find module`,
///      `panic:`, `fatal:`), whichever comes later;
///   2. else the last line naming a system failure (`ENOENT`, `EACCES`, `No such file`,
///      `Permission denied`, `command not found`, dash's `: not found`);
///   3. else the last line that is not noise, and only then the last noise.
/// Noise is never chosen while anything else is there: runtime banners (`Node.js v20.1.0`,
/// `Bun v1.1.0`), stack frames (`    at f (x.js:1:2)`, `  File "x.py", line 3`, a Go frame
/// after a tab), caret lines (`    ^`) and lines of punctuation only (`}`).
/// With `cutAtStart`, the text is the kept tail of a longer stream, so its first line may
/// be a fragment and is skipped (unless it is all there is). Time is linear in `text`.
std::string tellingStderrLine(std::string_view text, bool cutAtStart = false);

}  // namespace kaja::core
