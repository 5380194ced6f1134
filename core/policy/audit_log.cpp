#include "core/policy/audit_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <ctime>

#include "core/util/sys.h"
#include "core/util/utc_digits.h"

namespace kaja::core::policy {

const char* toString(AuditDecision decision) {
  switch (decision) {
    case AuditDecision::kAllowed:
      return "allowed";
    case AuditDecision::kRefused:
      return "refused";
    case AuditDecision::kDeclined:
      return "declined";
    case AuditDecision::kFailed:
      return "failed";
  }
  return "failed";
}

std::vector<std::string> declaredArguments(const mcp::Json& inputSchema) {
  std::vector<std::string> names;
  if (!inputSchema.is_object()) return names;
  const auto properties = inputSchema.find("properties");
  if (properties == inputSchema.end() || !properties->is_object()) return names;
  for (const auto& item : properties->items()) names.push_back(item.key());
  return names;
}

std::vector<std::string> argumentNames(const mcp::Json& arguments,
                                       const std::vector<std::string>& declared) {
  std::vector<std::string> names;
  if (!arguments.is_object()) return names;
  size_t undeclared = 0;
  for (const auto& item : arguments.items()) {
    if (std::find(declared.begin(), declared.end(), item.key()) == declared.end()) {
      ++undeclared;
    } else {
      names.push_back(item.key().substr(0, kMaxAuditName));
    }
  }
  std::sort(names.begin(), names.end());
  if (names.size() > kMaxAuditNames) {
    const size_t more = names.size() - kMaxAuditNames;
    names.resize(kMaxAuditNames);
    names.push_back("(" + std::to_string(more) + " more)");
  }
  if (undeclared > 0) names.push_back("(" + std::to_string(undeclared) + " undeclared)");
  return names;
}

std::string formatIsoUtc(std::chrono::system_clock::time_point time) {
  auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  int fraction = static_cast<int>(millis % 1000);
  if (fraction < 0) {
    fraction += 1000;
    --seconds;
  }
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char text[80];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, fraction);
  return text;
}

std::string formatLocalTime(std::chrono::system_clock::time_point time) {
  std::time_t seconds =
      std::chrono::system_clock::to_time_t(std::chrono::floor<std::chrono::seconds>(time));
  std::tm local{};
  ::localtime_r(&seconds, &local);
  char text[80];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
  return text;
}

mcp::Json auditRowJson(const AuditRecord& record) {
  return {
      {"time", formatIsoUtc(record.time)},
      {"persona", record.persona},
      {"ability", record.ability},
      {"tool", record.tool.substr(0, kMaxAuditTool)},
      {"decision", toString(record.decision)},
      {"rule", record.rule},
      {"durationMs", record.duration.count()},
      {"resultBytes", record.resultBytes},
      {"isError", record.isError},
      {"arguments", record.argumentNames},
  };
}

namespace {

// Appends `text` as a JSON string, exactly as nlohmann writes it in auditRowJson's dump.
// Printable ASCII without a quote or backslash is written as it is; anything else (control
// characters, which could start a new row, and bytes that are not UTF-8) goes through nlohmann.
void appendJsonString(std::string& out, std::string_view text) {
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= 0x20 && byte < 0x80 && c != '"' && c != '\\';
  });
  if (plain) {
    out += '"';
    out += text;
    out += '"';
    return;
  }
  out += mcp::Json(std::string(text)).dump(-1, ' ', false, mcp::Json::error_handler_t::replace);
}

}  // namespace

std::string formatAuditLine(const AuditRecord& record) {
  // The row auditRowJson builds, written directly: a row goes out with every call, and a JSON
  // object of ten fields cost a tenth of kaja serve's time per call. Keys in nlohmann's order.
  std::string line;
  line.reserve(192 + record.tool.size() + record.ability.size() + record.persona.size());
  line += "{\"ability\":";
  appendJsonString(line, record.ability);
  line += ",\"arguments\":[";
  for (std::size_t i = 0; i < record.argumentNames.size(); ++i) {
    if (i > 0) line += ',';
    appendJsonString(line, record.argumentNames[i]);
  }
  line += "],\"decision\":";
  appendJsonString(line, toString(record.decision));
  line += ",\"durationMs\":" + std::to_string(record.duration.count());
  line += record.isError ? ",\"isError\":true" : ",\"isError\":false";
  line += ",\"persona\":";
  appendJsonString(line, record.persona);
  line += ",\"resultBytes\":" + std::to_string(record.resultBytes);
  line += ",\"rule\":";
  appendJsonString(line, record.rule);
  line += ",\"time\":";
  appendJsonString(line, formatIsoUtc(record.time));
  line += ",\"tool\":";
  appendJsonString(line, std::string_view(record.tool).substr(0, kMaxAuditTool));
  line += "}\n";
  return line;
}

std::string auditLogPath(const std::string& dataDir) { return dataDir + "/audit.jsonl"; }

Result<AuditLog> AuditLog::open(const std::string& dataDir) {
  if (auto made = makeDirectories(dataDir, 0700); !made) return std::unexpected(made.error());
  std::string path = auditLogPath(dataDir);
  // Without blocking: a FIFO put there has no reader, and the open fails instead of waiting.
  UniqueFd fd(retryOnEintr([&] {
    return ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0600);
  }));
  if (!fd.valid()) {
    return fail(ErrorCode::kIo, errno == ENXIO ? path + " is not a regular file; move it away"
                                               : syscallMessage("open", path, errno));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
    return fail(ErrorCode::kIo, path + " is not a regular file; move it away");
  }
  return AuditLog(std::move(fd), std::move(path));
}

Result<void> AuditLog::append(const AuditRecord& record) {
  std::string line = formatAuditLine(record);
  ssize_t written = retryOnEintr([&] { return ::write(fd_.get(), line.data(), line.size()); });
  if (written < 0) return fail(ErrorCode::kIo, syscallMessage("write", path_, errno));
  if (static_cast<size_t>(written) != line.size()) {
    return fail(ErrorCode::kIo, "write(" + path_ + "): wrote " + std::to_string(written) + " of " +
                                    std::to_string(line.size()) + " bytes of an audit row");
  }
  return {};
}

namespace {

constexpr size_t kChunk = size_t{64} * 1024;
// Rows carry the time their call ended and go out as soon as it has, so several processes
// write them out of time order by no more than this.
constexpr std::chrono::minutes kOrderSlack{1};

// A line as the walks hand it on: its text, or nullopt for one longer than kMaxAuditLine.
using Line = std::optional<std::string_view>;

std::unexpected<Error> rowError(std::string message) {
  return fail(ErrorCode::kProtocol, std::move(message));
}

// Reads up to `size` bytes at `offset`; fewer only at the end of the file.
Result<size_t> readAt(int fd, char* buffer, size_t size, uint64_t offset, const std::string& path) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = retryOnEintr(
        [&] { return ::pread(fd, buffer + done, size - done, static_cast<off_t>(offset + done)); });
    if (n < 0) return fail(ErrorCode::kIo, syscallMessage("pread", path, errno));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

// Hands the lines of the first `size` bytes of `fd` to `visit`, last first, each with the
// offset it starts at, until `visit` returns false.
Result<void> walkBackward(int fd, const std::string& path, uint64_t size,
                          const std::function<bool(Line, uint64_t)>& visit) {
  std::vector<char> chunk(kChunk);
  std::string pending;  // the end of the current line, found in the chunks after this one
  bool tooLong = false;
  auto emit = [&](std::string_view head, uint64_t start) {
    bool more = false;
    if (tooLong || head.size() + pending.size() > kMaxAuditLine) {
      more = visit(std::nullopt, start);
    } else if (pending.empty()) {
      more = visit(head, start);
    } else {
      pending.insert(0, head);
      more = visit(std::string_view(pending), start);
    }
    pending.clear();
    tooLong = false;
    return more;
  };
  for (uint64_t at = size; at > 0;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, at));
    at -= n;
    auto got = readAt(fd, chunk.data(), n, at, path);
    if (!got) return std::unexpected(got.error());
    if (*got != n) return fail(ErrorCode::kIo, "read(" + path + "): the file shrank while read");
    size_t end = n;
    for (size_t i = n; i-- > 0;) {
      if (chunk[i] != '\n') continue;
      if (!emit(std::string_view(chunk.data() + i + 1, end - i - 1), at + i + 1)) return {};
      end = i;
    }
    if (tooLong || pending.size() + end > kMaxAuditLine) {
      tooLong = true;
      pending.clear();
    } else {
      pending.insert(0, chunk.data(), end);
    }
  }
  emit({}, 0);
  return {};
}

// Hands the lines of bytes [from, to) of `fd` to `visit`, first first; a last line without
// its newline too.
Result<void> walkForward(int fd, const std::string& path, uint64_t from, uint64_t to,
                         const std::function<void(Line)>& visit) {
  std::vector<char> chunk(kChunk);
  std::string line;
  bool tooLong = false;
  auto append = [&](const char* data, size_t size) {
    if (tooLong || line.size() + size > kMaxAuditLine) {
      tooLong = true;
      line.clear();
    } else {
      line.append(data, size);
    }
  };
  auto emit = [&] {
    visit(tooLong ? Line() : Line(line));
    line.clear();
    tooLong = false;
  };
  for (uint64_t at = from; at < to;) {
    auto got = readAt(fd, chunk.data(), static_cast<size_t>(std::min<uint64_t>(kChunk, to - at)),
                      at, path);
    if (!got) return std::unexpected(got.error());
    if (*got == 0) break;
    size_t begin = 0;
    for (size_t i = 0; i < *got; ++i) {
      if (chunk[i] != '\n') continue;
      append(chunk.data() + begin, i - begin);
      emit();
      begin = i + 1;
    }
    append(chunk.data() + begin, *got - begin);
    at += *got;
  }
  if (!line.empty() || tooLong) emit();
  return {};
}

// Reads the string at `key` into `out`; false when it is there but no string, or missing
// while `required`.
bool readString(const mcp::Json& row, const char* key, std::string& out, bool required) {
  auto it = row.find(key);
  if (it == row.end()) return !required;
  if (!it->is_string()) return false;
  out = it->get<std::string>();
  return true;
}

// Returns the time of a row without parsing the rest: in JSON a `"` inside a string is
// always escaped, so `"time":"` can only be a key.
std::optional<std::chrono::system_clock::time_point> quickTime(std::string_view line) {
  constexpr std::string_view kKey = "\"time\":\"";
  auto at = line.find(kKey);
  if (at == std::string_view::npos) return std::nullopt;
  return parseIsoUtc(
      line.substr(at + kKey.size(), std::string_view("2026-11-29T19:30:00.123Z").size()));
}

}  // namespace

std::optional<AuditDecision> parseAuditDecision(std::string_view text) {
  for (auto decision : {AuditDecision::kAllowed, AuditDecision::kRefused, AuditDecision::kDeclined,
                        AuditDecision::kFailed}) {
    if (text == toString(decision)) return decision;
  }
  return std::nullopt;
}

std::optional<std::chrono::system_clock::time_point> parseIsoUtc(std::string_view text) {
  // "2026-11-29T19:30:00.123Z": digits where formatIsoUtc puts them, and its separators.
  constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (text.size() != kShape.size()) return std::nullopt;
  for (size_t i = 0; i < kShape.size(); ++i) {
    bool digit = text[i] >= '0' && text[i] <= '9';
    if (kShape[i] == 'd' ? !digit : text[i] != kShape[i]) return std::nullopt;
  }
  return utcFromDigits(text, {0, 5, 8, 11, 14, 17, 20});
}

Result<AuditRecord> parseAuditLine(std::string_view line) {
  mcp::Json row = mcp::Json::parse(line.begin(), line.end(), nullptr, false);
  if (row.is_discarded()) return rowError("the line is not JSON");
  if (!row.is_object()) return rowError("the line is no JSON object");
  AuditRecord record;
  std::string time, decision;
  if (!readString(row, "time", time, true)) return rowError("it has no \"time\" string");
  auto when = parseIsoUtc(time);
  if (!when) return rowError("its \"time\" is no time such as 2026-11-29T19:30:00.123Z");
  record.time = *when;
  if (!readString(row, "ability", record.ability, true) ||
      !readString(row, "tool", record.tool, true) || !readString(row, "decision", decision, true)) {
    return rowError("it lacks one of the \"ability\", \"tool\" and \"decision\" strings");
  }
  auto parsed = parseAuditDecision(decision);
  if (!parsed) return rowError("its \"decision\" is none of allowed, refused, declined, failed");
  record.decision = *parsed;
  if (!readString(row, "persona", record.persona, false) ||
      !readString(row, "rule", record.rule, false)) {
    return rowError("its \"persona\" or \"rule\" is no string");
  }
  if (auto it = row.find("durationMs"); it != row.end()) {
    if (!it->is_number_integer()) return rowError("its \"durationMs\" is no whole number");
    record.duration = std::chrono::milliseconds(it->get<int64_t>());
  }
  if (auto it = row.find("resultBytes"); it != row.end()) {
    if (!it->is_number_unsigned()) return rowError("its \"resultBytes\" is no count");
    record.resultBytes = it->get<uint64_t>();
  }
  if (auto it = row.find("isError"); it != row.end()) {
    if (!it->is_boolean()) return rowError("its \"isError\" is no boolean");
    record.isError = it->get<bool>();
  }
  if (auto it = row.find("arguments"); it != row.end()) {
    if (!it->is_array()) return rowError("its \"arguments\" is no list");
    for (const auto& name : *it) {
      if (!name.is_string()) return rowError("its \"arguments\" holds something not a name");
      record.argumentNames.push_back(name.get<std::string>());
    }
  }
  return record;
}

Result<AuditReadReport> readAuditLog(const std::string& path, const AuditQuery& query,
                                     const std::function<void(const AuditRecord&)>& row) {
  AuditReadReport report;
  UniqueFd fd(
      retryOnEintr([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK); }));
  if (!fd.valid()) {
    if (errno != ENOENT) return fail(ErrorCode::kIo, syscallMessage("open", path, errno));
    report.missing = true;
    return report;
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0)
    return fail(ErrorCode::kIo, syscallMessage("fstat", path, errno));
  if (!S_ISREG(info.st_mode)) return fail(ErrorCode::kIo, path + " is not a regular file.");
  const auto size = static_cast<uint64_t>(info.st_size);
  auto selected = [&](const AuditRecord& record) {
    return (query.ability.empty() || record.ability == query.ability) &&
           (!query.since || record.time >= *query.since);
  };
  uint64_t start = 0;
  if (query.limit > 0 || query.since) {
    size_t found = 0;
    auto walked = walkBackward(fd.get(), path, size, [&](Line line, uint64_t at) {
      if (!line || line->empty()) return true;
      // Finding where --since starts needs only the times, and those are cheap to read.
      if (query.limit == 0) {
        auto time = quickTime(*line);
        if (time && *time < *query.since - kOrderSlack) start = at;
        return !(time && *time < *query.since - kOrderSlack);
      }
      auto record = parseAuditLine(*line);
      if (!record) return true;
      bool older = query.since && record->time < *query.since - kOrderSlack;
      bool full = !older && selected(*record) && ++found == query.limit;
      if (older || full) {
        start = at;
        report.earlier = full && at > 0;
        return false;
      }
      return true;
    });
    if (!walked) return std::unexpected(walked.error());
  }
  auto read = walkForward(fd.get(), path, start, size, [&](Line line) {
    if (line && line->empty()) return;
    auto record = line ? parseAuditLine(*line) : rowError("");
    if (!record) {
      ++report.damaged;
      return;
    }
    if (!selected(*record) || (query.limit > 0 && report.rows >= query.limit)) return;
    ++report.rows;
    row(*record);
  });
  if (!read) return std::unexpected(read.error());
  return report;
}

}  // namespace kaja::core::policy
