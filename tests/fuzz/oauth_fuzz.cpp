// What a hostile server sends a sign-in: WWW-Authenticate challenges, protected resource and
// authorization server metadata, and the query of a redirect. The first byte picks the
// parser. Invariants: challenges have lower-case token schemes and parameter names; scopes
// split to distinct single words and split the same again once joined; metadata that parses
// has its required fields; a resource that covers the server is on the server's origin; an
// endpoint the check lets through is https or loopback; a form encodes and reads back to the
// same fields.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/auth/metadata.h"
#include "core/auth/url_form.h"
#include "core/net/url.h"
#include "core/net/www_authenticate.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace auth = kaja::core::auth;
namespace net = kaja::core::net;

bool isLowerToken(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text) {
    if (c >= 'A' && c <= 'Z') return false;
    if (static_cast<unsigned char>(c) <= 0x20 || c == '"' || c == ',' || c == '=') return false;
  }
  return true;
}

void checkChallenges(std::string_view text) {
  const auto challenges = net::parseChallenges(text);
  const auto bearer = net::bearerChallenge(text);
  bool sawBearer = false;
  for (const auto& challenge : challenges) {
    KAJA_FUZZ_CHECK(isLowerToken(challenge.scheme), "a challenge's scheme is a lower-case token");
    for (const auto& [name, value] : challenge.params) {
      KAJA_FUZZ_CHECK(isLowerToken(name), "a parameter's name is a lower-case token");
    }
    if (challenge.scheme == "bearer" && !sawBearer) {
      sawBearer = true;
      KAJA_FUZZ_CHECK(bearer && bearer->scope == challenge.param("scope") &&
                          bearer->resourceMetadata == challenge.param("resource_metadata"),
                      "bearerChallenge() is the first Bearer challenge");
    }
  }
  KAJA_FUZZ_CHECK(sawBearer == bearer.has_value(), "a Bearer challenge exactly when one parsed");
  const auto scopes = net::splitScopes(text);
  for (std::size_t i = 0; i < scopes.size(); ++i) {
    KAJA_FUZZ_CHECK(!scopes[i].empty() && scopes[i].find(' ') == std::string::npos,
                    "a scope is one non-empty word");
    for (std::size_t j = 0; j < i; ++j)
      KAJA_FUZZ_CHECK(scopes[i] != scopes[j], "scopes are distinct");
  }
  KAJA_FUZZ_CHECK(net::splitScopes(net::joinScopes(scopes)) == scopes,
                  "joined scopes split back to themselves");
}

void checkMetadata(std::string_view text, const net::Url& server) {
  if (auto resource = auth::parseResourceMetadata(text, "fuzz")) {
    KAJA_FUZZ_CHECK(!resource->resource.empty(), "resource metadata names its resource");
    if (auth::resourceCovers(resource->resource, server)) {
      const auto parsed = net::parseUrl(resource->resource);
      KAJA_FUZZ_CHECK(parsed && net::sameOrigin(*parsed, server),
                      "a resource that covers the server is on its origin");
    }
  }
  if (auto metadata = auth::parseServerMetadata(text, "fuzz")) {
    KAJA_FUZZ_CHECK(!metadata->issuer.empty() && !metadata->authorizationEndpoint.empty() &&
                        !metadata->tokenEndpoint.empty(),
                    "server metadata has its required endpoints");
    for (const std::string* endpoint :
         {&metadata->authorizationEndpoint, &metadata->tokenEndpoint}) {
      if (auto url = auth::checkEndpoint(*endpoint, "endpoint", metadata->issuer)) {
        KAJA_FUZZ_CHECK(url->scheme == "https" || auth::isLoopbackUrl(*url),
                        "an endpoint let through is https or loopback");
      }
    }
  }
}

void checkForm(std::string_view text) {
  // NUL-separated name, value, name, value, …
  auth::FormFields fields;
  std::map<std::string, std::string> expected;
  std::size_t pos = 0;
  while (pos <= text.size() && fields.size() < 64) {
    const std::size_t nameEnd = text.find('\0', pos);
    if (nameEnd == std::string_view::npos) break;
    const std::size_t valueEnd = text.find('\0', nameEnd + 1);
    const std::string name(text.substr(pos, nameEnd - pos));
    const std::string value(text.substr(nameEnd + 1, valueEnd == std::string_view::npos
                                                         ? std::string_view::npos
                                                         : valueEnd - nameEnd - 1));
    fields.emplace_back(name, value);
    if (!name.empty()) expected.emplace(name, value);
    if (valueEnd == std::string_view::npos) break;
    pos = valueEnd + 1;
  }
  auto parsed = auth::parseQuery(auth::encodeForm(fields));
  parsed.erase("");
  KAJA_FUZZ_CHECK(parsed == expected, "a form reads back to its fields");
  (void)auth::parseQuery(text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  static const net::Url server = *net::parseUrl("https://mcp.example.com/tenant/mcp");
  switch (data[0] % 3) {
    case 0:
      checkChallenges(text);
      break;
    case 1:
      checkMetadata(text, server);
      break;
    default:
      checkForm(text);
      break;
  }
  return 0;
}
