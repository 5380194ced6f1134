#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace kaja::core::net {

/// One dispatched server-sent event.
struct SseEvent {
  std::string type = "message";  ///< the `event:` field, "message" when absent
  std::string data;              ///< `data:` lines joined with '\n'
  std::string id;                ///< the last event id in force when it was dispatched
};

/// An incremental text/event-stream parser (the WHATWG rules): feed it bytes as they
/// arrive, in any split, and it returns whole events. Tracks the last event id and the
/// server's `retry:` delay for reconnecting.
class SseParser {
 public:
  /// The longest event id kept; ids are sent back as Last-Event-ID.
  static constexpr std::size_t kMaxIdBytes = 256;

  /// An event (or a line) over `maxEventBytes` is an error, so a hostile stream cannot
  /// grow memory without bound.
  explicit SseParser(std::size_t maxEventBytes = 16UL * 1024 * 1024)
      : maxEventBytes_(maxEventBytes) {}

  /// Consumes `chunk`; returns the events it completed, or kProtocol (a clause: "it sent
  /// …") when an event or a line is too large or an event id could not be sent back as
  /// a header (anything but 1 to kMaxIdBytes visible ASCII characters). After an error
  /// the parser is spent.
  Result<std::vector<SseEvent>> feed(std::string_view chunk);

  /// Returns the last `id:` seen ("" when none), for Last-Event-ID.
  [[nodiscard]] const std::string& lastEventId() const { return lastEventId_; }
  /// Starts from an id learned on an earlier stream (resumption continues from it).
  void setLastEventId(std::string id) { lastEventId_ = std::move(id); }
  /// Returns the last `retry:` the server asked for.
  [[nodiscard]] std::optional<std::chrono::milliseconds> retry() const { return retry_; }

 private:
  void processLine(std::string_view line, std::vector<SseEvent>& out);

  std::size_t maxEventBytes_;
  std::string line_;
  bool skipLf_ = false;  // the previous chunk ended in '\r'
  std::string data_;
  bool hasData_ = false;
  std::string type_;
  std::string lastEventId_;
  std::optional<std::chrono::milliseconds> retry_;
  bool badId_ = false;
};

}  // namespace kaja::core::net
