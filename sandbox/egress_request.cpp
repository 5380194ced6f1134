// The egress proxy's request parser: CONNECT and absolute-form HTTP/1.x heads, strictly.
#include "sandbox/egress_request.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <vector>

#include "core/net/address_guard.h"

namespace kaja::sandbox {
namespace {

constexpr std::size_t kMaxHostLength = 253;

std::unexpected<core::Error> bad(const std::string& why) {
  return core::fail(core::ErrorCode::kProtocol,
                    "kaja's sandbox proxy could not read the request: " + why + ".");
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool isTokenChar(unsigned char c) {
  return std::isalnum(c) != 0 ||
         std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool isToken(std::string_view text) {
  return !text.empty() && std::ranges::all_of(text, [](char c) { return isTokenChar(c); });
}

// A host name: letters, digits, '-', '_' and '.', in labels of at most 63 bytes.
bool isHostName(std::string_view host) {
  if (host.empty() || host.size() > kMaxHostLength || host.front() == '.') return false;
  std::size_t label = 0;
  for (const unsigned char c : host) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    if (std::isalnum(c) == 0 && c != '-' && c != '_') return false;
    if (++label > 63) return false;
  }
  return true;
}

// Splits "host:port" (host may be "[v6]") into `request`; `defaultPort` 0 means required.
core::Result<void> parseAuthority(std::string_view authority, int defaultPort,
                                  ProxyRequest& request) {
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with('[')) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return bad("an IPv6 host lacks its ']'");
    host = authority.substr(0, close + 1);
    const std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) return bad("text follows an IPv6 host");
    if (!rest.empty()) port = rest.substr(1);
    const auto literal = core::net::parseIpAddress(host);
    if (!literal || !literal->v6) return bad("the bracketed host is no IPv6 address");
    request.host = literal->text();
  } else {
    const auto colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
    }
    // "example.com." and "example.com" are one name; /etc/hosts knows only the second.
    if (host.size() > 1 && host.ends_with('.')) host.remove_suffix(1);
    if (!isHostName(host)) return bad("the host name is malformed");
    request.host = lower(host);
  }
  int number = defaultPort;
  if (!port.empty() || (authority.back() == ':') || defaultPort == 0) {
    number = -1;
    const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), number);
    if (port.empty() || port.size() > 5 || error != std::errc() ||
        end != port.data() + port.size()) {
      number = -1;
    }
  }
  if (number < 1 || number > 65535) return bad("the port is missing or out of range");
  request.port = static_cast<std::uint16_t>(number);
  return {};
}

struct Header {
  std::string name;  // lower case
  std::string_view line;
  std::string_view value;
};

// Splits the header lines after the request line; false when one is malformed.
bool parseHeaders(std::string_view lines, std::vector<Header>& headers) {
  while (!lines.empty()) {
    const auto end = lines.find("\r\n");
    const std::string_view line = lines.substr(0, end);
    lines = end == std::string_view::npos ? std::string_view() : lines.substr(end + 2);
    if (line.empty()) continue;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || !isToken(line.substr(0, colon))) return false;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    headers.push_back({lower(line.substr(0, colon)), line, value});
  }
  return true;
}

// True for the headers a proxy must not pass on: hop-by-hop ones, and its own.
bool isHopByHop(const std::string& name, const std::vector<std::string>& named) {
  static constexpr std::array<std::string_view, 9> kHop = {"connection",
                                                           "proxy-connection",
                                                           "keep-alive",
                                                           "proxy-authorization",
                                                           "proxy-authenticate",
                                                           "te",
                                                           "trailer",
                                                           "upgrade",
                                                           "host"};
  if (std::ranges::find(kHop, name) != kHop.end()) return true;
  // A client may name more hop-by-hop headers, but never the ones that frame its body.
  if (name == "content-length" || name == "transfer-encoding") return false;
  return std::ranges::find(named, name) != named.end();
}

std::vector<std::string> connectionTokens(const std::vector<Header>& headers) {
  std::vector<std::string> tokens;
  for (const auto& header : headers) {
    if (header.name != "connection") continue;
    std::string_view rest = header.value;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      std::string_view token = rest.substr(0, comma);
      while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
      while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
      if (!token.empty()) tokens.push_back(lower(token));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return tokens;
}

std::string hostHeader(const ProxyRequest& request) {
  const bool v6 = request.host.find(':') != std::string::npos;
  std::string host = v6 ? "[" + request.host + "]" : request.host;
  if (request.port != 80) host += ":" + std::to_string(request.port);
  return host;
}

// The origin must read the body's end where the client put it: one Content-Length of
// digits, or Transfer-Encoding: chunked, never both.
core::Result<void> checkBodyFraming(const std::vector<Header>& headers) {
  int lengths = 0;
  int encodings = 0;
  for (const auto& header : headers) {
    if (header.name == "content-length") {
      ++lengths;
      if (header.value.empty() || header.value.size() > 18 ||
          !std::ranges::all_of(header.value, [](char c) { return c >= '0' && c <= '9'; })) {
        return bad("its Content-Length is not a number");
      }
    } else if (header.name == "transfer-encoding") {
      ++encodings;
      if (lower(header.value) != "chunked") return bad("its Transfer-Encoding is not chunked");
    }
  }
  if (lengths > 1 || encodings > 1) return bad("it repeats Content-Length or Transfer-Encoding");
  if (lengths + encodings > 1) return bad("it has both Content-Length and Transfer-Encoding");
  return {};
}

core::Result<void> parseHttpTarget(std::string_view method, std::string_view target,
                                   const std::vector<Header>& headers, ProxyRequest& request) {
  const std::string scheme = lower(target.substr(0, std::min<std::size_t>(target.size(), 8)));
  if (scheme.starts_with("https://")) {
    return bad("an https:// URL must go through CONNECT");
  }
  if (!scheme.starts_with("http://")) {
    return bad("a plain HTTP request needs an absolute http:// URL");
  }
  const std::string_view rest = target.substr(7);
  const auto pathStart = rest.find_first_of("/?");
  const std::string_view authority = rest.substr(0, pathStart);
  if (authority.empty() || authority.find('@') != std::string_view::npos) {
    return bad("the URL's host is missing or carries user info");
  }
  if (rest.find('#') != std::string_view::npos) return bad("the URL has a fragment");
  if (auto ok = parseAuthority(authority, 80, request); !ok) return ok;
  std::string path(pathStart == std::string_view::npos ? "/" : rest.substr(pathStart));
  if (path.front() == '?') path.insert(0, "/");
  if (auto ok = checkBodyFraming(headers); !ok) return ok;
  const auto named = connectionTokens(headers);
  std::string head =
      std::string(method) + " " + path + " HTTP/1.1\r\nHost: " + hostHeader(request) + "\r\n";
  for (const auto& header : headers) {
    if (!isHopByHop(header.name, named)) head.append(header.line).append("\r\n");
  }
  head += "Connection: close\r\n\r\n";
  request.originHead = std::move(head);
  request.summary = std::string(method) + " http://" + hostHeader(request) + path.substr(0, 200);
  return {};
}

}  // namespace

core::Result<ProxyRequest> parseProxyRequest(std::string_view head) {
  if (head.size() > kMaxRequestHead) return bad("its head is larger than 16 KiB");
  if (!head.ends_with("\r\n\r\n")) return bad("its head does not end with a blank line");
  for (const unsigned char c : head) {
    if ((c < 0x20 && c != '\r' && c != '\n' && c != '\t') || c == 0x7f) {
      return bad("it contains a control byte");
    }
  }
  // A bare LF or CR, or a folded line, could be read differently by the origin.
  for (std::size_t i = 0; i < head.size(); ++i) {
    if (head[i] == '\n' && (i == 0 || head[i - 1] != '\r')) return bad("a line ends without CR LF");
    if (head[i] == '\r' && (i + 1 == head.size() || head[i + 1] != '\n'))
      return bad("a line has a bare CR");
    if (head[i] == '\n' && i + 1 < head.size() && (head[i + 1] == ' ' || head[i + 1] == '\t')) {
      return bad("a header line is folded");
    }
  }
  const auto lineEnd = head.find("\r\n");
  const std::string_view line = head.substr(0, lineEnd);
  const auto space1 = line.find(' ');
  const auto space2 = line.find(' ', space1 == std::string_view::npos ? 0 : space1 + 1);
  if (space1 == std::string_view::npos || space2 == std::string_view::npos ||
      line.find(' ', space2 + 1) != std::string_view::npos) {
    return bad("the request line is not METHOD TARGET VERSION");
  }
  const std::string_view method = line.substr(0, space1);
  const std::string_view target = line.substr(space1 + 1, space2 - space1 - 1);
  const std::string_view version = line.substr(space2 + 1);
  if (!isToken(method) || target.empty()) return bad("the request line is malformed");
  // An origin may split a request line on any whitespace (RFC 9112, section 3), so a tab in
  // the target would let it read another path and version than the ones kaja checked.
  if (!std::ranges::all_of(target, [](unsigned char c) { return c > 0x20 && c < 0x7f; })) {
    return bad("its target has a tab, a control byte or a byte outside printable ASCII");
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0")
    return bad("only HTTP/1.0 and 1.1 are spoken");
  std::vector<Header> headers;
  if (!parseHeaders(head.substr(lineEnd + 2), headers)) return bad("a header line is malformed");
  ProxyRequest request;
  if (method == "CONNECT") {
    request.tunnel = true;
    if (auto ok = parseAuthority(target, 0, request); !ok) return std::unexpected(ok.error());
    request.summary = "CONNECT " + std::string(target);
    return request;
  }
  if (auto ok = parseHttpTarget(method, target, headers, request); !ok) {
    return std::unexpected(ok.error());
  }
  return request;
}

}  // namespace kaja::sandbox
