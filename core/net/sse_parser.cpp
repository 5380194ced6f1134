#include "core/net/sse_parser.h"

#include <algorithm>

#include "core/net/http_worker.h"

namespace kaja::core::net {

Result<std::vector<SseEvent>> SseParser::feed(std::string_view chunk) {
  std::vector<SseEvent> events;
  for (const char c : chunk) {
    if (skipLf_) {
      skipLf_ = false;
      if (c == '\n') continue;
    }
    if (c == '\r' || c == '\n') {
      skipLf_ = c == '\r';
      processLine(line_, events);
      line_.clear();
      if (data_.size() > maxEventBytes_ || badId_) break;
      continue;
    }
    line_.push_back(c);
    if (line_.size() > maxEventBytes_) break;
  }
  if (badId_) {
    return fail(ErrorCode::kProtocol,
                "it sent an event id that kaja cannot send back (an id must be 1 to " +
                    std::to_string(kMaxIdBytes) + " visible ASCII characters)");
  }
  if (line_.size() > maxEventBytes_ || data_.size() > maxEventBytes_) {
    return fail(ErrorCode::kProtocol, "it sent an event larger than " +
                                          std::to_string(maxEventBytes_ / (1024UL * 1024)) +
                                          " MB on its event stream");
  }
  return events;
}

void SseParser::processLine(std::string_view line, std::vector<SseEvent>& out) {
  if (line.empty()) {
    if (hasData_) {
      if (!data_.empty() && data_.back() == '\n') data_.pop_back();
      out.push_back(SseEvent{type_.empty() ? "message" : type_, std::move(data_), lastEventId_});
    }
    data_.clear();
    hasData_ = false;
    type_.clear();
    return;
  }
  if (line.front() == ':') return;  // a comment, often a keep-alive
  const auto colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "data") {
    data_.append(value);
    data_.push_back('\n');
    hasData_ = true;
  } else if (field == "event") {
    type_ = std::string(value);
  } else if (field == "id") {
    // The spec ignores an id holding NUL; an empty one forgets the last.
    if (value.find('\0') != std::string_view::npos) return;
    if (!value.empty() && !isVisibleAscii(value, kMaxIdBytes)) {
      badId_ = true;
      return;
    }
    lastEventId_ = std::string(value);
  } else if (field == "retry") {
    if (!value.empty() && value.size() < 10 &&
        std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      retry_ = std::chrono::milliseconds(std::stoll(std::string(value)));
    }
  }
}

}  // namespace kaja::core::net
