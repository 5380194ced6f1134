#include "core/policy/terminal_approver.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <streambuf>
#include <string>

#include "core/policy/output_guard.h"
#include "core/policy/text_normalizer.h"
#include "core/util/sys.h"
#include "core/util/unique_fd.h"

namespace kaja::core::policy {
namespace {

constexpr int kMaxAttempts = 3;

// A small unbuffered-write, buffered-read streambuf over a descriptor it does not own.
class FdStreamBuf final : public std::streambuf {
 public:
  explicit FdStreamBuf(int fd) : fd_(fd) { setg(buffer_, buffer_, buffer_); }

 protected:
  int_type underflow() override {
    ssize_t n = retryOnEintr([&] { return ::read(fd_, buffer_, sizeof buffer_); });
    if (n <= 0) return traits_type::eof();
    setg(buffer_, buffer_, buffer_ + n);
    return traits_type::to_int_type(*gptr());
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    char ch = traits_type::to_char_type(c);
    return writeAll(&ch, 1) ? c : traits_type::eof();
  }
  std::streamsize xsputn(const char* data, std::streamsize size) override {
    return writeAll(data, static_cast<size_t>(size)) ? size : 0;
  }

 private:
  bool writeAll(const char* data, size_t size) {
    while (size > 0) {
      ssize_t n = retryOnEintr([&] { return ::write(fd_, data, size); });
      if (n <= 0) return false;
      data += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  int fd_;
  char buffer_[256];
};

// Names come from a server; anything that is not plainly visible is shown as '?'.
std::string printableName(std::string_view name) {
  std::string out;
  for (char32_t c : decodeUtf8(name)) {
    if (c < 0x20 || c == 0x7F || isInvisible(c)) {
      out += '?';
    } else {
      appendUtf8(out, c);
    }
  }
  return out;
}

void appendEscape(std::string& out, unsigned unit) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "\\u%04X", unit);
  out += buffer;
}

std::string trimLower(std::string text) {
  auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return {};
  auto end = text.find_last_not_of(" \t\r\n");
  text = text.substr(begin, end - begin + 1);
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

// Returns `value` cut for a person to read: strings past 300 bytes, arrays past 20 items and
// objects past 30 members are cut with a note, and nesting past 8 levels is shown as a note,
// so a call's arguments cannot bury what matters under bulk.
mcp::Json summarizeForPrompt(const mcp::Json& value, int depth) {
  constexpr size_t kStringBytes = 300;
  constexpr size_t kItems = 20;
  constexpr size_t kMembers = 30;
  constexpr int kDepth = 8;
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text.size() <= kStringBytes) return value;
    return text.substr(0, utf8CutPoint(text, kStringBytes)) + "…[" + std::to_string(text.size()) +
           " bytes in all]";
  }
  if (!value.is_structured()) return value;
  if (depth >= kDepth) return "[nested deeper than " + std::to_string(kDepth) + " levels]";
  if (value.is_array()) {
    mcp::Json out = mcp::Json::array();
    for (size_t i = 0; i < value.size() && i < kItems; ++i) {
      out.push_back(summarizeForPrompt(value[i], depth + 1));
    }
    if (value.size() > kItems) {
      out.push_back("[and " + std::to_string(value.size() - kItems) + " more items]");
    }
    return out;
  }
  mcp::Json out = mcp::Json::object();
  size_t shown = 0;
  for (const auto& [key, member] : value.items()) {
    if (shown++ == kMembers) break;
    out[key] = summarizeForPrompt(member, depth + 1);
  }
  if (value.size() > kMembers) {
    out["…"] = "and " + std::to_string(value.size() - kMembers) + " more arguments";
  }
  return out;
}

}  // namespace

struct TerminalApprover::Tty {
  explicit Tty(UniqueFd owned)
      : fd(std::move(owned)), buffer(fd.get()), in(&buffer), out(&buffer) {}
  UniqueFd fd;
  FdStreamBuf buffer;
  std::istream in;
  std::ostream out;
};

std::string escapeInvisibles(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : decodeUtf8(text)) {
    if (!isInvisible(c)) {
      appendUtf8(out, c);
    } else if (c < 0x10000) {
      appendEscape(out, static_cast<unsigned>(c));
    } else {
      char32_t v = c - 0x10000;
      appendEscape(out, 0xD800 + static_cast<unsigned>(v >> 10));
      appendEscape(out, 0xDC00 + static_cast<unsigned>(v & 0x3FF));
    }
  }
  return out;
}

TerminalApprover::TerminalApprover(std::istream& in, std::ostream& out) : in_(in), out_(out) {}

TerminalApprover::TerminalApprover(std::unique_ptr<Tty> tty)
    : tty_(std::move(tty)), in_(tty_->in), out_(tty_->out) {}

TerminalApprover::~TerminalApprover() = default;

Result<std::unique_ptr<TerminalApprover>> TerminalApprover::openTty() {
  int fd = retryOnEintr([] { return ::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY); });
  if (fd < 0) return fail(ErrorCode::kIo, syscallMessage("open", "/dev/tty", errno));
  auto tty = std::make_unique<Tty>(UniqueFd(fd));
  return std::unique_ptr<TerminalApprover>(new TerminalApprover(std::move(tty)));
}

ApprovalReply TerminalApprover::ask(const ApprovalRequest& request) {
  std::string tool = printableName(request.tool);
  std::string arguments =
      escapeInvisibles(summarizeForPrompt(request.arguments, 0)
                           .dump(2, ' ', false, mcp::Json::error_handler_t::replace));
  size_t count = request.arguments.is_object() ? request.arguments.size() : 1;
  out_ << "\n"
       << printableName(request.server) << " wants to run " << tool
       << (request.write ? " (it may change things)" : " (a read)") << " with " << count
       << (count == 1 ? " argument:\n" : " arguments:\n") << arguments << "\n";
  // Last, next to the question, so no number of arguments can push it out of sight.
  if (!request.writesTo.empty()) {
    out_ << "It would write to:\n";
    for (const auto& path : request.writesTo) out_ << "  " << escapeInvisibles(path) << "\n";
  }
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    if (request.confirmListed) {
      out_ << tool << " is on the confirm list. Allow this call? [y]es / [N]o: ";
    } else {
      out_ << "Allow? [y]es / [N]o / [a]lways " << tool << " this session: ";
    }
    out_.flush();
    std::string line;
    if (!std::getline(in_, line)) {
      out_ << "\n";
      return {ApprovalAnswer::kNo, "was not answered (end of input), so it did not run"};
    }
    std::string answer = trimLower(line);
    if (answer == "y" || answer == "yes") return {ApprovalAnswer::kYes, {}};
    if (answer.empty() || answer == "n" || answer == "no") {
      return {ApprovalAnswer::kNo, "was declined by the user"};
    }
    if (!request.confirmListed && (answer == "a" || answer == "always")) {
      return {ApprovalAnswer::kYesForSession, {}};
    }
    out_ << "Please answer y or n" << (request.confirmListed ? "" : " or a") << ".\n";
  }
  return {ApprovalAnswer::kNo, "was not approved (no valid answer after three tries)"};
}

}  // namespace kaja::core::policy
