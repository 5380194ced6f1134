#include "core/net/address_guard.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace kaja::core::net {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// True when the first `bits` bits of `bytes` equal those of `prefix`.
bool inPrefix(const std::uint8_t* bytes, std::initializer_list<std::uint8_t> prefix, int bits) {
  const std::uint8_t* p = prefix.begin();
  for (int i = 0; bits > 0; ++i, bits -= 8) {
    const std::uint8_t mask = bits >= 8 ? 0xff : static_cast<std::uint8_t>(0xff << (8 - bits));
    if ((bytes[i] & mask) != (p[i] & mask)) return false;
  }
  return true;
}

// IPv4 follows IANA's special-purpose registry; every block it marks not globally reachable
// is refused. 192.0.0.0/24 (IETF protocol assignments) is refused whole: its two global
// anycast services (PCP, TURN) are nothing a tool reaches over HTTP.
AddressClass classifyV4(const std::uint8_t* b) {
  if (b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 0) return AddressClass::kUnspecified;
  if (b[0] == 100 && b[1] == 100 && b[2] == 100 && b[3] == 200) return AddressClass::kMetadata;
  if (b[0] == 0) return AddressClass::kReserved;
  if (b[0] == 127) return AddressClass::kLoopback;
  if (b[0] == 169 && b[1] == 254) return AddressClass::kLinkLocal;
  if (b[0] == 10 || inPrefix(b, {172, 16}, 12) || inPrefix(b, {192, 168}, 16) ||
      inPrefix(b, {100, 64}, 10)) {
    return AddressClass::kPrivate;
  }
  if (inPrefix(b, {224}, 4)) return AddressClass::kMulticast;
  if (inPrefix(b, {240}, 4) || inPrefix(b, {192, 0, 0}, 24) || inPrefix(b, {192, 0, 2}, 24) ||
      inPrefix(b, {192, 88, 99}, 24) || inPrefix(b, {198, 18}, 15) ||
      inPrefix(b, {198, 51, 100}, 24) || inPrefix(b, {203, 0, 113}, 24)) {
    return AddressClass::kReserved;
  }
  return AddressClass::kPublic;
}

// The IPv6 address's own class, before classify() reads an embedded IPv4 address. Only
// 2000::/3 is global unicast (IANA has allocated nothing public outside it), so anything
// else not named here is reserved: ::/8 (IPv4-compatible ::a.b.c.d, SIIT ::ffff:0:a.b.c.d),
// 100::/64 (discard), 5f00::/16 (SRv6 SIDs), and all that is still unallocated.
AddressClass classifyV6(const std::uint8_t* b) {
  static constexpr std::uint8_t kZero[16] = {};
  if (std::memcmp(b, kZero, 16) == 0) return AddressClass::kUnspecified;
  if (std::memcmp(b, kZero, 15) == 0 && b[15] == 1) return AddressClass::kLoopback;
  if (inPrefix(b, {0xfe, 0x80}, 10)) return AddressClass::kLinkLocal;
  if (inPrefix(b, {0xfd, 0x00, 0x0e, 0xc2}, 32)) return AddressClass::kMetadata;
  if (inPrefix(b, {0xfc}, 7) || inPrefix(b, {0xfe, 0xc0}, 10)) return AddressClass::kPrivate;
  if (b[0] == 0xff) return AddressClass::kMulticast;
  // IPv4-mapped (::ffff:0:0/96) and well-known NAT64 (64:ff9b::/96) addresses are what
  // their IPv4 address is; classify() judges that.
  if (inPrefix(b, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96) ||
      inPrefix(b, {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0}, 96)) {
    return AddressClass::kPublic;
  }
  // Local-use NAT64 (RFC 8215) translates inside the operator's own network.
  if (inPrefix(b, {0, 0x64, 0xff, 0x9b, 0, 1}, 48)) return AddressClass::kPrivate;
  if (!inPrefix(b, {0x20}, 3)) return AddressClass::kReserved;
  // 2001::/23, IETF protocol assignments, is refused whole: Teredo (2001::/32, whose
  // tunnel reaches an IPv4 address kaja would have to decode), benchmarking (2001:2::/48),
  // ORCHID and ORCHIDv2 (2001:10::/28, 2001:20::/28: identifiers, never routed) and DRIP
  // (2001:30::/28); its anycast services (PCP, TURN, AMT, AS112) are nothing a tool reaches
  // over HTTP. Then documentation: 2001:db8::/32 and 3fff::/20 (RFC 9637).
  if (inPrefix(b, {0x20, 0x01, 0x00}, 23) || inPrefix(b, {0x20, 0x01, 0x0d, 0xb8}, 32) ||
      inPrefix(b, {0x3f, 0xff, 0x00}, 20)) {
    return AddressClass::kReserved;
  }
  return AddressClass::kPublic;
}

// Larger is stricter: the guard keeps the stricter of an IPv6 address's two readings.
int strictness(AddressClass kind) {
  switch (kind) {
    case AddressClass::kPublic:
      return 0;
    case AddressClass::kPrivate:
      return 1;
    case AddressClass::kLoopback:
      return 2;
    default:
      return 3;
  }
}

Result<void> refuse(std::string_view host, const std::string& address, AddressClass kind) {
  const std::string what = std::string(host) == address
                               ? "the address " + address
                               : "\"" + std::string(host) + "\" (" + address + ")";
  std::string sentence = "kaja refused to connect to " + what + " because it is " + describe(kind);
  if (kind == AddressClass::kLoopback || kind == AddressClass::kPrivate) {
    sentence += ", which servers found in a registry may not reach unless you allow it";
  }
  return fail(ErrorCode::kRefused, sentence + ".", std::string(host));
}

}  // namespace

const char* describe(AddressClass kind) {
  switch (kind) {
    case AddressClass::kPublic:
      return "a public address";
    case AddressClass::kLoopback:
      return "a loopback address";
    case AddressClass::kPrivate:
      return "a private network address";
    case AddressClass::kLinkLocal:
      return "a link-local address";
    case AddressClass::kMetadata:
      return "a cloud metadata address";
    case AddressClass::kUnspecified:
      return "the unspecified address";
    case AddressClass::kMulticast:
      return "a multicast address";
    case AddressClass::kReserved:
      return "a reserved or special-purpose address";
  }
  return "an unknown kind of address";
}

std::string IpAddress::text() const {
  char buffer[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), buffer, sizeof buffer);
  return buffer;
}

std::optional<IpAddress> IpAddress::embeddedV4() const {
  if (!v6) return std::nullopt;
  const std::uint8_t* b = bytes.data();
  IpAddress v4;
  // IPv4-mapped, SIIT, IPv4-compatible, well-known NAT64 and local-use NAT64: the IPv4
  // address is the last 32 bits.
  if (inPrefix(b, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96) ||
      inPrefix(b, {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0}, 96) ||
      inPrefix(b, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 96) ||
      inPrefix(b, {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0}, 96) ||
      inPrefix(b, {0, 0x64, 0xff, 0x9b, 0, 1}, 48)) {
    std::copy(b + 12, b + 16, v4.bytes.begin());
    return v4;
  }
  if (b[0] == 0x20 && b[1] == 0x02) {
    std::copy(b + 2, b + 6, v4.bytes.begin());
    return v4;
  }
  return std::nullopt;
}

std::optional<IpAddress> parseIpAddress(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  const std::string copy(text);
  IpAddress address;
  if (::inet_pton(AF_INET, copy.c_str(), address.bytes.data()) == 1) return address;
  address.v6 = true;
  if (::inet_pton(AF_INET6, copy.c_str(), address.bytes.data()) == 1) return address;
  return std::nullopt;
}

AddressClass classify(const IpAddress& address) {
  if (!address.v6) return classifyV4(address.bytes.data());
  const AddressClass own = classifyV6(address.bytes.data());
  if (own == AddressClass::kUnspecified || own == AddressClass::kLoopback) return own;
  const auto v4 = address.embeddedV4();
  if (!v4) return own;
  // An equally strict inner class wins, so that ::169.254.169.254 reads as link-local.
  const AddressClass inner = classifyV4(v4->bytes.data());
  return strictness(inner) >= strictness(own) ? inner : own;
}

bool isAllowed(AddressClass kind, const AddressPolicy& policy) {
  switch (kind) {
    case AddressClass::kPublic:
      return true;
    case AddressClass::kLoopback:
    case AddressClass::kPrivate:
      return policy.allowPrivate;
    default:
      return false;
  }
}

Result<void> checkHostName(std::string_view host, const AddressPolicy& policy) {
  std::string name = lower(host);
  while (!name.empty() && name.back() == '.') name.pop_back();
  if (name == "metadata.google.internal") {
    return fail(ErrorCode::kRefused,
                "kaja refused to connect to \"" + std::string(host) +
                    "\" because it is a cloud metadata service.",
                std::string(host));
  }
  if (!policy.allowPrivate && (name == "localhost" || endsWith(name, ".localhost") ||
                               endsWith(name, ".local") || endsWith(name, ".internal"))) {
    return fail(ErrorCode::kRefused,
                "kaja refused to connect to \"" + std::string(host) +
                    "\" because it names a local or internal host, which servers found in a "
                    "registry may not reach unless you allow it.",
                std::string(host));
  }
  return {};
}

Result<void> checkAddress(std::string_view host, const IpAddress& address,
                          const AddressPolicy& policy) {
  const AddressClass kind = classify(address);
  if (isAllowed(kind, policy)) return {};
  return refuse(host, address.text(), kind);
}

std::string PinnedAddress::curlResolveEntry() const {
  const std::string text = address.text();
  return host + ":" + std::to_string(port) + ":" + (address.v6 ? "[" + text + "]" : text);
}

Result<PinnedAddress> resolveAndCheck(std::string_view host, int port,
                                      const AddressPolicy& policy) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  PinnedAddress pinned{std::string(host), port, {}};
  if (auto literal = parseIpAddress(host)) {
    if (auto ok = checkAddress(host, *literal, policy); !ok) return std::unexpected(ok.error());
    pinned.address = *literal;
    return pinned;
  }
  if (auto ok = checkHostName(host, policy); !ok) return std::unexpected(ok.error());

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* raw = nullptr;
  const std::string name(host);
  const int rc = ::getaddrinfo(name.c_str(), nullptr, &hints, &raw);
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> list(raw, &::freeaddrinfo);
  if (rc != 0) {
    return fail(ErrorCode::kConnect,
                "kaja could not resolve \"" + name + "\" (" + ::gai_strerror(rc) + ").", name);
  }
  std::vector<IpAddress> addresses;
  for (const addrinfo* entry = list.get(); entry != nullptr; entry = entry->ai_next) {
    IpAddress address;
    if (entry->ai_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(entry->ai_addr);
      std::memcpy(address.bytes.data(), &in->sin_addr, 4);
    } else if (entry->ai_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(entry->ai_addr);
      address.v6 = true;
      std::memcpy(address.bytes.data(), &in6->sin6_addr, 16);
    } else {
      continue;
    }
    // Every answer is checked, not just the one used: a name that mixes a public and a
    // metadata address is hostile.
    if (auto ok = checkAddress(name, address, policy); !ok) return std::unexpected(ok.error());
    addresses.push_back(address);
  }
  if (addresses.empty()) {
    return fail(ErrorCode::kConnect, "kaja could not resolve \"" + name + "\" to an address.",
                name);
  }
  pinned.address = addresses.front();
  return pinned;
}

}  // namespace kaja::core::net
