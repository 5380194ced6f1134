#include "core/server/http_checks.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "core/server/session.h"

namespace kaja::core::server::http_checks {

namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

/// Returns the q value of one media range's parameters ("; q=0.5"), 1 when absent.
double qualityOf(std::string_view parameters) {
  while (!parameters.empty()) {
    const auto semicolon = parameters.find(';');
    const std::string_view parameter = trim(parameters.substr(0, semicolon));
    if (parameter.size() > 2 && (parameter[0] == 'q' || parameter[0] == 'Q') &&
        parameter[1] == '=') {
      return std::atof(std::string(parameter.substr(2)).c_str());
    }
    if (semicolon == std::string_view::npos) break;
    parameters.remove_prefix(semicolon + 1);
  }
  return 1;
}

bool rangeMatches(std::string_view range, std::string_view mediaType) {
  const std::string wanted = lower(mediaType);
  const std::string given = lower(range);
  if (given == "*/*" || given == wanted) return true;
  const auto slash = wanted.find('/');
  return given.size() == slash + 2 && given.ends_with("/*") &&
         given.compare(0, slash, wanted, 0, slash) == 0;
}

bool isBase64Letter(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '/';
}

/// Returns the 6-bit value of a base64 letter.
unsigned base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return static_cast<unsigned>(c - 'A');
  if (c >= 'a' && c <= 'z') return static_cast<unsigned>(c - 'a' + 26);
  if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0' + 52);
  return c == '+' ? 62 : 63;
}

/// Returns whether `encoded` is canonical padded base64: whole quanta of the alphabet, with
/// at most two '=' and only at the end, and the bits the padding leaves over all zero (else
/// "SGVsbG9=" and "SGVsbG8=" would both spell "Hello").
bool canonicalBase64(std::string_view encoded) {
  if (encoded.size() % 4 != 0) return false;
  std::size_t padding = 0;
  while (padding < 2 && padding < encoded.size() && encoded[encoded.size() - 1 - padding] == '=')
    ++padding;
  const std::string_view letters = encoded.substr(0, encoded.size() - padding);
  if (!std::all_of(letters.begin(), letters.end(), isBase64Letter)) return false;
  if (padding == 0 || letters.empty()) return true;
  const unsigned unused = padding == 1 ? 0x3 : 0xF;
  return (base64Value(letters.back()) & unused) == 0;
}

/// Returns whether `text` is a whole JSON-style number equal to `number`.
bool sameNumber(const std::string& text, double number) {
  // Decimal only: strtod would also take hex, "inf" and leading blanks.
  if (text.empty() || text.find_first_not_of("0123456789+-.eE") != std::string::npos) return false;
  char* end = nullptr;
  errno = 0;
  const double parsed = std::strtod(text.c_str(), &end);
  return errno == 0 && end == text.c_str() + text.size() && std::isfinite(parsed) &&
         parsed == number;
}

/// Returns whether `header` (decoded) carries `argument` (a string, boolean or number).
bool carries(const std::string& header, const mcp::Json& argument) {
  if (argument.is_string()) return header == argument.get<std::string>();
  if (argument.is_boolean()) return header == (argument.get<bool>() ? "true" : "false");
  if (argument.is_number()) return sameNumber(header, argument.get<double>());
  return true;  // x-mcp-header only marks primitives; a schema marking more is not enforced
}

/// Returns whether `host` is a dotted IPv4 address in 127.0.0.0/8.
bool isLoopbackIpv4(const std::string& host) {
  int parts = 0;
  std::size_t at = 0;
  while (at <= host.size()) {
    const auto dot = std::min(host.find('.', at), host.size());
    const std::string part = host.substr(at, dot - at);
    if (part.empty() || part.size() > 3 ||
        part.find_first_not_of("0123456789") != std::string::npos || std::stoi(part) > 255)
      return false;
    if (parts == 0 && part != "127") return false;
    ++parts;
    at = dot + 1;
  }
  return parts == 4;
}

// Returns the host of `authority` ("host", "host:port", "[::1]:port"), lower-case.
std::string hostOf(std::string_view authority) {
  std::string host = lower(trim(authority));
  std::size_t end = host.size();
  if (host.starts_with("[")) {
    const auto close = host.find(']');
    if (close == std::string::npos) return "";
    end = close + 1;
  } else if (const auto colon = host.find(':'); colon != std::string::npos) {
    end = colon;
  }
  // What follows the host is a port or nothing: "127.0.0.1:80@evil" names no host kaja knows.
  const std::string_view rest = std::string_view(host).substr(end);
  if (!rest.empty() &&
      (rest.size() < 2 || rest.front() != ':' ||
       !std::all_of(rest.begin() + 1, rest.end(), [](char c) { return c >= '0' && c <= '9'; }))) {
    return "";
  }
  host.resize(end);
  return host;
}

// Returns the authority of `origin` ("scheme://authority/…"), or nullopt without a scheme.
std::optional<std::string_view> authorityOf(std::string_view origin) {
  const auto scheme = origin.find("://");
  if (scheme == std::string_view::npos) return std::nullopt;
  const std::string_view rest = origin.substr(scheme + 3);
  return rest.substr(0, rest.find('/'));
}

bool isLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "[::1]" || isLoopbackIpv4(host);
}

}  // namespace

bool accepts(std::string_view accept, std::string_view mediaType) {
  if (trim(accept).empty()) return true;
  while (!accept.empty()) {
    const auto comma = accept.find(',');
    const std::string_view item = accept.substr(0, comma);
    const auto semicolon = item.find(';');
    const std::string_view range = trim(item.substr(0, semicolon));
    const double q =
        semicolon == std::string_view::npos ? 1 : qualityOf(item.substr(semicolon + 1));
    if (q > 0 && rangeMatches(range, mediaType)) return true;
    if (comma == std::string_view::npos) break;
    accept.remove_prefix(comma + 1);
  }
  return false;
}

bool originAllowed(std::string_view origin, const std::vector<std::string>& allowed) {
  const std::string whole = lower(trim(origin));
  const auto authority = authorityOf(whole);
  if (!authority) return false;  // "null" and other opaque origins
  const std::string host = hostOf(*authority);
  if (isLoopbackHost(host)) return true;
  return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& entry) {
    const std::string wanted = lower(entry);
    return wanted == whole || wanted == host;
  });
}

bool hostAllowed(std::string_view host, const std::vector<std::string>& allowed) {
  const std::string name = hostOf(host);
  if (isLoopbackHost(name)) return true;
  return !name.empty() &&
         std::any_of(allowed.begin(), allowed.end(), [&](const std::string& entry) {
           return hostOf(authorityOf(entry).value_or(entry)) == name;
         });
}

bool isLoopbackAddress(const std::string& address) {
  return address == "::1" || isLoopbackIpv4(address);
}

bool bearerMatches(std::string_view authorization, const std::string& token) {
  authorization = trim(authorization);
  if (authorization.size() < 7 || lower(authorization.substr(0, 7)) != "bearer ") return false;
  const std::string_view given = trim(authorization.substr(7));
  if (given.size() != token.size() || token.empty()) return false;
  return CRYPTO_memcmp(given.data(), token.data(), token.size()) == 0;
}

Result<std::string> newSessionId() {
  std::array<unsigned char, 32> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    return fail(ErrorCode::kInternal,
                "OpenSSL could not make random bytes for a session id (RAND_bytes failed).");
  }
  std::string id;
  id.reserve(bytes.size() * 2);
  for (const unsigned char byte : bytes) {
    std::array<char, 3> hex{};
    std::snprintf(hex.data(), hex.size(), "%02x", byte);
    id += hex.data();
  }
  return id;
}

std::string metaProtocolVersion(const mcp::Json& message) {
  const auto params = message.find("params");
  if (params == message.end() || !params->is_object()) return {};
  const auto meta = params->find("_meta");
  if (meta == params->end() || !meta->is_object()) return {};
  const auto version = meta->find("io.modelcontextprotocol/protocolVersion");
  if (version == meta->end() || !version->is_string()) return {};
  return version->get<std::string>();
}

std::optional<std::string> standardHeaderMismatch(const mcp::Json& message,
                                                  const StandardHeaders& headers) {
  const std::string method = message.value("method", "");
  const std::string meta = metaProtocolVersion(message);
  if (headers.protocolVersion.empty()) {
    return "The MCP-Protocol-Version header is missing; a 2026-07-28 request must carry it.";
  }
  if (!meta.empty() && meta != headers.protocolVersion) {
    return "The MCP-Protocol-Version header (" + mcp::clip(headers.protocolVersion, 40) +
           ") does not match the request's _meta protocolVersion (" + mcp::clip(meta, 40) + ").";
  }
  if (!message.contains("id")) return std::nullopt;  // notifications need no more headers
  if (!headers.method) return "The Mcp-Method header is missing.";
  if (*headers.method != method) {
    return "The Mcp-Method header (" + mcp::clip(*headers.method, 60) +
           ") does not match the request's method (" + mcp::clip(method, 60) + ").";
  }
  const char* field = method == "resources/read"                          ? "uri"
                      : method == "tools/call" || method == "prompts/get" ? "name"
                                                                          : nullptr;
  if (field == nullptr) return std::nullopt;
  const auto params = message.find("params");
  if (params == message.end() || !params->is_object() || !params->contains(field) ||
      !(*params)[field].is_string())
    return std::nullopt;  // the session answers a request without its name
  if (!headers.name) return "The Mcp-Name header is missing.";
  const auto decoded = decodeHeaderValue(trim(*headers.name));
  if (!decoded) return "The Mcp-Name header is not valid base64 between =?base64? and ?=.";
  if (*decoded != (*params)[field].get<std::string>()) {
    return "The Mcp-Name header (" + mcp::clip(*decoded, 60) + ") does not match the request's " +
           field + " (" + mcp::clip((*params)[field].get<std::string>(), 60) + ").";
  }
  return std::nullopt;
}

std::optional<std::string> requestMetaProblem(const mcp::Json& message) {
  const auto params = message.find("params");
  if (params == message.end() || !params->is_object()) {
    return "The request has no params._meta; a 2026-07-28 request must say its protocol "
           "version and client capabilities there.";
  }
  const auto meta = params->find("_meta");
  if (meta == params->end() || !meta->is_object()) {
    return "The request has no params._meta object; a 2026-07-28 request must say its protocol "
           "version and client capabilities there.";
  }
  const auto version = meta->find("io.modelcontextprotocol/protocolVersion");
  if (version == meta->end() || !version->is_string()) {
    return "The request's _meta has no io.modelcontextprotocol/protocolVersion string; add it.";
  }
  const auto capabilities = meta->find("io.modelcontextprotocol/clientCapabilities");
  if (capabilities == meta->end() || !capabilities->is_object()) {
    return "The request's _meta has no io.modelcontextprotocol/clientCapabilities object; add "
           "it (an empty object when the client offers nothing).";
  }
  return std::nullopt;
}

std::optional<std::string> decodeHeaderValue(std::string_view value) {
  constexpr std::string_view kPrefix = "=?base64?";
  constexpr std::string_view kSuffix = "?=";
  if (value.size() < kPrefix.size() + kSuffix.size() || !value.starts_with(kPrefix) ||
      !value.ends_with(kSuffix))
    return std::string(value);
  const std::string_view encoded =
      value.substr(kPrefix.size(), value.size() - kPrefix.size() - kSuffix.size());
  if (!canonicalBase64(encoded)) return std::nullopt;
  std::string decoded(encoded.size() / 4 * 3, '\0');
  const int length = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(decoded.data()),
                                     reinterpret_cast<const unsigned char*>(encoded.data()),
                                     static_cast<int>(encoded.size()));
  if (length < 0) return std::nullopt;
  std::size_t size = static_cast<std::size_t>(length);
  // EVP_DecodeBlock counts the padding as zero bytes.
  for (auto it = encoded.rbegin(); it != encoded.rend() && *it == '=' && size > 0; ++it) --size;
  decoded.resize(size);
  return decoded;
}

std::optional<std::string> paramHeaderMismatch(const mcp::Json& inputSchema,
                                               const mcp::Json& arguments,
                                               const ParamHeaders& headers) {
  if (!inputSchema.is_object()) return std::nullopt;
  const auto properties = inputSchema.find("properties");
  if (properties == inputSchema.end() || !properties->is_object()) return std::nullopt;
  for (const auto& [parameter, schema] : properties->items()) {
    if (!schema.is_object()) continue;
    const auto marked = schema.find("x-mcp-header");
    if (marked == schema.end() || !marked->is_string() || marked->get<std::string>().empty())
      continue;
    const std::string shown = "Mcp-Param-" + mcp::clip(marked->get<std::string>(), 60);
    const auto sent = headers.find(lower(marked->get<std::string>()));
    const mcp::Json* argument = nullptr;
    if (arguments.is_object()) {
      if (const auto found = arguments.find(parameter);
          found != arguments.end() && !found->is_null())
        argument = &*found;
    }
    if (sent == headers.end() || sent->second.empty()) {
      if (argument == nullptr) continue;
      return "The " + shown + " header is missing; the argument " + mcp::clip(parameter, 60) +
             " must travel in it too.";
    }
    if (sent->second.size() > 1) return "The " + shown + " header is sent more than once.";
    if (argument == nullptr) {
      return "The " + shown + " header is sent, but the request has no argument " +
             mcp::clip(parameter, 60) + ".";
    }
    const auto decoded = decodeHeaderValue(trim(sent->second.front()));
    if (!decoded) return "The " + shown + " header is not valid base64 between =?base64? and ?=.";
    if (!carries(*decoded, *argument)) {
      return "The " + shown + " header (" + mcp::clip(*decoded, 60) +
             ") does not match the argument " + mcp::clip(parameter, 60) + ".";
    }
  }
  return std::nullopt;
}

unsigned statelessStatus(const mcp::Json& message) {
  if (!message.is_object()) return 200;
  const auto error = message.find("error");
  if (error == message.end() || !error->is_object()) return 200;
  const auto code = error->find("code");
  if (code == error->end() || !code->is_number_integer()) return 200;
  switch (code->get<std::int64_t>()) {
    case mcp::rpc_error::kMethodNotFound:
      return 404;
    case -32020:  // HeaderMismatch
    case -32021:  // MissingRequiredClientCapability
    case -32022:  // UnsupportedProtocolVersion
      return 400;
    default:
      return 200;
  }
}

}  // namespace kaja::core::server::http_checks
