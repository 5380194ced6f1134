// URL parsing with the address classification: a parsed URL is http(s) with a lower-case
// host and a real port, and reads back to itself; an address literal reads back from its text
// to the same class; an address the guard calls public embeds no address it would refuse, and
// a URL to it names the same host when written again; a server's reference never leaves
// http(s).
#include <arpa/inet.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "core/net/address_guard.h"
#include "core/net/url.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace net = kaja::core::net;

bool hasUpperAscii(std::string_view text) {
  for (const char c : text) {
    if (c >= 'A' && c <= 'Z') return true;
  }
  return false;
}

void checkAddress(const net::IpAddress& address) {
  const auto again = net::parseIpAddress(address.text());
  KAJA_FUZZ_CHECK(again && again->v6 == address.v6 && again->bytes == address.bytes,
                  "an address reads back from its text");
  const net::AddressClass kind = net::classify(address);
  KAJA_FUZZ_CHECK(net::classify(*again) == kind, "to the same class");
  const net::AddressPolicy strict;
  KAJA_FUZZ_CHECK(
      net::checkAddress("fuzzed", address, strict).has_value() == net::isAllowed(kind, strict),
      "checkAddress() follows the class");
  if (kind != net::AddressClass::kPublic) return;
  if (const auto inner = address.embeddedV4()) {
    KAJA_FUZZ_CHECK(net::classify(*inner) == net::AddressClass::kPublic,
                    "a public address embeds no refused one");
  }
  const std::string host = address.v6 ? "[" + address.text() + "]" : address.text();
  const auto url = net::parseUrl("http://" + host + ":8080/");
  KAJA_FUZZ_CHECK(url.has_value(), "a URL to a public address parses");
  const auto parsed = net::parseIpAddress(url->host);
  KAJA_FUZZ_CHECK(parsed && parsed->bytes == address.bytes, "to the same host");
}

void checkUrl(const net::Url& url) {
  KAJA_FUZZ_CHECK(url.scheme == "http" || url.scheme == "https", "an http(s) URL");
  KAJA_FUZZ_CHECK(!url.host.empty() && !hasUpperAscii(url.host), "a lower-case host");
  // curl keeps an explicit port 0, which then fails to connect.
  KAJA_FUZZ_CHECK(url.port >= 0 && url.port <= 65535, "a port number");
  KAJA_FUZZ_CHECK(url.path.starts_with('/'), "a path from the root");
  const auto again = net::parseUrl(url.text);
  KAJA_FUZZ_CHECK(again.has_value(), "a normalised URL parses again");
  KAJA_FUZZ_CHECK(again->port == url.port && again->scheme == url.scheme && again->path == url.path,
                  "to the same scheme, port and path");
  if (again->host != url.host) {
    // curl writes an IPv4 shorthand that a relative reference decoded ("//2%31.0" is
    // "21.0") in full only when it parses the URL again; both name one address, which the
    // guard checks after resolving.
    in_addr first{};
    in_addr second{};
    KAJA_FUZZ_CHECK(::inet_aton(url.host.c_str(), &first) == 1 &&
                        ::inet_aton(again->host.c_str(), &second) == 1 &&
                        first.s_addr == second.s_addr,
                    "to the same host");
  }
  const auto third = net::parseUrl(again->text);
  KAJA_FUZZ_CHECK(third && third->text == again->text && third->host == again->host,
                  "normalising a second time changes nothing");
  if (const auto address = net::parseIpAddress(url.host)) checkAddress(*address);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(bytes), size);
  if (const auto url = net::parseUrl(text)) checkUrl(*url);
  if (const auto address = net::parseIpAddress(text)) checkAddress(*address);
  static const net::Url base = net::parseUrl("http://127.0.0.1:8080/mcp/").value();
  if (const auto resolved = net::resolveUrl(base, text)) checkUrl(*resolved);
  const net::AddressPolicy strict;
  if (net::checkHostName(text, strict)) {
    KAJA_FUZZ_CHECK(text != "localhost" && !text.ends_with(".localhost") &&
                        !text.ends_with(".internal") && !text.ends_with(".local"),
                    "no local name passes a strict policy");
  }
  return 0;
}
