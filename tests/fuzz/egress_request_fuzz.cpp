// The sandbox egress proxy's request parser (CONNECT and absolute-form HTTP heads): whatever a
// confined server sends, nothing throws, and a head it accepts is passed on in a form that an
// origin cannot read differently from kaja: one request line of METHOD, a path of printable
// ASCII without space, and HTTP/1.1; CR LF line ends only; one Host, naming the host and port
// kaja checked; no hop-by-hop or proxy header; at most one of Content-Length and Transfer-Encoding;
// and Connection: close last.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sandbox/egress_request.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string_view> linesOf(std::string_view head) {
  std::vector<std::string_view> lines;
  while (!head.empty()) {
    const auto end = head.find("\r\n");
    if (end == std::string_view::npos) {
      lines.push_back(head);
      break;
    }
    lines.push_back(head.substr(0, end));
    head.remove_prefix(end + 2);
  }
  return lines;
}

void checkHost(const kaja::sandbox::ProxyRequest& request) {
  KAJA_FUZZ_CHECK(!request.host.empty(), "an accepted request names a host");
  KAJA_FUZZ_CHECK(request.port != 0, "an accepted request has a port");
  for (const unsigned char c : request.host) {
    KAJA_FUZZ_CHECK(c > 0x20 && c < 0x7f && std::isupper(c) == 0 && c != '/' && c != '@' &&
                        c != '[' && c != ']',
                    "the host is one lower-case token without brackets, '/' or '@'");
  }
}

void checkOriginHead(const kaja::sandbox::ProxyRequest& request) {
  const std::string& head = request.originHead;
  KAJA_FUZZ_CHECK(head.ends_with("\r\nConnection: close\r\n\r\n"),
                  "the origin's head ends with Connection: close and a blank line");
  for (std::size_t i = 0; i < head.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(head[i]);
    KAJA_FUZZ_CHECK(c != '\n' || (i > 0 && head[i - 1] == '\r'), "no bare LF reaches the origin");
    KAJA_FUZZ_CHECK(c != '\r' || (i + 1 < head.size() && head[i + 1] == '\n'),
                    "no bare CR reaches the origin");
    KAJA_FUZZ_CHECK(c >= 0x20 || c == '\r' || c == '\n' || c == '\t',
                    "no control byte reaches the origin");
  }
  const auto lines = linesOf(std::string_view(head).substr(0, head.size() - 4));
  KAJA_FUZZ_CHECK(!lines.empty(), "the origin's head has a request line");
  const std::string_view line = lines.front();
  const auto space1 = line.find(' ');
  const auto space2 = line.rfind(' ');
  KAJA_FUZZ_CHECK(space1 != std::string_view::npos && space2 > space1,
                  "the request line has a method, a path and a version");
  const std::string_view path = line.substr(space1 + 1, space2 - space1 - 1);
  KAJA_FUZZ_CHECK(line.substr(space2 + 1) == "HTTP/1.1", "the origin is spoken to in HTTP/1.1");
  KAJA_FUZZ_CHECK(path.starts_with('/'), "the path is in origin form");
  KAJA_FUZZ_CHECK(std::ranges::none_of(path,
                                       [](char c) {
                                         const auto b = static_cast<unsigned char>(c);
                                         return b <= 0x20 || b >= 0x7f;
                                       }),
                  "the path is printable ASCII without space, so the origin reads the same line");
  int hosts = 0;
  int framing = 0;
  std::string hostValue;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view header = lines[i];
    const auto colon = header.find(':');
    KAJA_FUZZ_CHECK(colon != std::string_view::npos && colon > 0, "each header has a name");
    const std::string name = lower(header.substr(0, colon));
    KAJA_FUZZ_CHECK(header.front() != ' ' && header.front() != '\t', "no header is folded");
    if (name == "host") {
      ++hosts;
      hostValue = std::string(header.substr(colon + 1));
    }
    if (name == "content-length" || name == "transfer-encoding") ++framing;
    if (i + 1 < lines.size()) {
      for (const char* hop : {"connection", "proxy-connection", "keep-alive", "proxy-authorization",
                              "proxy-authenticate", "te", "trailer", "upgrade"}) {
        KAJA_FUZZ_CHECK(name != hop, "no hop-by-hop or proxy header reaches the origin");
      }
    }
  }
  KAJA_FUZZ_CHECK(hosts == 1, "the origin gets exactly one Host");
  KAJA_FUZZ_CHECK(framing <= 1, "at most one of Content-Length and Transfer-Encoding");
  const bool v6 = request.host.find(':') != std::string::npos;
  std::string expected = " " + (v6 ? "[" + request.host + "]" : request.host);
  if (request.port != 80) expected += ":" + std::to_string(request.port);
  KAJA_FUZZ_CHECK(hostValue == expected, "the Host names the host and port kaja checked");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view head(reinterpret_cast<const char*>(bytes), size);
  const auto request = kaja::sandbox::parseProxyRequest(head);
  if (!request) {
    const std::string& message = request.error().message;
    KAJA_FUZZ_CHECK(!message.empty() && message.find('\n') == std::string::npos,
                    "a refusal is one line");
    return 0;
  }
  KAJA_FUZZ_CHECK(head.size() <= kaja::sandbox::kMaxRequestHead, "an accepted head is bounded");
  checkHost(*request);
  if (request->tunnel) {
    KAJA_FUZZ_CHECK(request->originHead.empty(), "a tunnel sends no head of kaja's");
    KAJA_FUZZ_CHECK(head.starts_with("CONNECT "), "only CONNECT opens a tunnel");
  } else {
    checkOriginHead(*request);
  }
  KAJA_FUZZ_CHECK(request->summary.find('\n') == std::string::npos &&
                      request->summary.find('\r') == std::string::npos,
                  "the summary logged is one line");
  return 0;
}
