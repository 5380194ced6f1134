// The header checks of kaja serve: no header value or request body throws; a bearer token
// matches only itself; a base64 header value decodes only from its one canonical spelling; and
// without an allow-list only a loopback Origin passes.
#include <arpa/inet.h>
#include <fuzzer/FuzzedDataProvider.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/server/http_checks.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace checks = kaja::core::server::http_checks;
using kaja::core::mcp::Json;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool loopbackHost(const std::string& origin) {
  const auto scheme = origin.find("://");
  if (scheme == std::string::npos) return false;
  std::string host = origin.substr(scheme + 3);
  host.resize(std::min(host.size(), host.find_first_of("/?#")));
  if (host.starts_with("[")) return host.starts_with("[::1]");
  host.resize(std::min(host.size(), host.find(':')));
  in_addr address{};
  return host == "localhost" ||
         (host.starts_with("127.") && ::inet_pton(AF_INET, host.c_str(), &address) == 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  FuzzedDataProvider input(bytes, size);
  const std::string header = input.ConsumeRandomLengthString(256);
  const std::string token = input.ConsumeRandomLengthString(64);
  const std::string body = input.ConsumeRemainingBytesAsString();

  (void)checks::accepts(header, "text/event-stream");
  KAJA_FUZZ_CHECK(checks::accepts("", "application/json"), "no Accept admits anything");

  if (checks::bearerMatches(header, token)) {
    const std::string_view given = trim(header);
    KAJA_FUZZ_CHECK(lower(given.substr(0, 7)) == "bearer ", "a match is a Bearer header");
    KAJA_FUZZ_CHECK(!token.empty() && trim(given.substr(7)) == token, "of exactly the token");
  }
  KAJA_FUZZ_CHECK(
      token.empty() || trim(token) != token || checks::bearerMatches("Bearer " + token, token),
      "a token matches itself");

  if (checks::originAllowed(header, {})) {
    KAJA_FUZZ_CHECK(loopbackHost(lower(trim(header))), "without a list only loopback passes");
  }

  if (checks::hostAllowed(header, {})) {
    KAJA_FUZZ_CHECK(checks::originAllowed("http://" + std::string(header), {}),
                    "a host that passes without a list is a loopback one");
  }

  if (const auto decoded = checks::decodeHeaderValue(header)) {
    if (header.starts_with("=?base64?") && header.ends_with("?=") && header.size() >= 11) {
      std::string encoded(4 * ((decoded->size() + 2) / 3) + 1, '\0');
      const int length = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(encoded.data()),
                                         reinterpret_cast<const unsigned char*>(decoded->data()),
                                         static_cast<int>(decoded->size()));
      encoded.resize(static_cast<std::size_t>(length));
      KAJA_FUZZ_CHECK("=?base64?" + encoded + "?=" == header,
                      "a base64 value decodes only from its canonical spelling");
    } else {
      KAJA_FUZZ_CHECK(*decoded == header, "any other value is kept as it is");
    }
  }

  // As kaja serve does: the body parsed into messages, each checked as toJson() writes it.
  auto messages = kaja::core::mcp::parseMessages(body);
  if (!messages) return 0;
  for (const auto& message : *messages) {
    const Json json = kaja::core::mcp::toJson(message);
    (void)checks::metaProtocolVersion(json);
    (void)checks::requestMetaProblem(json);
    const checks::StandardHeaders headers{header, token, header};
    (void)checks::standardHeaderMismatch(json, headers);
    // A tool's schema and a call's arguments are anything a server and a client send.
    const Json params = json.contains("params") ? json["params"] : Json();
    const Json arguments =
        params.is_object() && params.contains("arguments") ? params["arguments"] : Json();
    (void)checks::paramHeaderMismatch(params, arguments, {{"x", {header}}, {"name", {token}}});
  }
  return 0;
}
