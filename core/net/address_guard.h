#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace kaja::core::net {

/// Which remote addresses a connection may reach (T6, U7). Link-local, cloud metadata,
/// unspecified, multicast and reserved addresses are always refused. Loopback and private
/// ranges depend on `allowPrivate`: true for abilities the user wrote, false for ones found
/// in a registry (unless the user opts in).
struct AddressPolicy {
  bool allowPrivate = false;
};

/// What kind of address an IP is, as far as the guard cares. The ranges follow IANA's IPv4
/// and IPv6 special-purpose registries; an IPv6 address that embeds an IPv4 one is also
/// judged by that (see classify()).
enum class AddressClass {
  kPublic,       ///< anything not listed below; for IPv6 only inside 2000::/3
  kLoopback,     ///< 127/8, ::1
  kPrivate,      ///< 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, fec0::/10,
                 ///< 64:ff9b:1::/48 (local-use NAT64)
  kLinkLocal,    ///< 169.254/16, fe80::/10
  kMetadata,     ///< cloud metadata: 100.100.100.200, fd00:ec2::/32
  kUnspecified,  ///< 0.0.0.0, ::
  kMulticast,    ///< 224/4, ff00::/8
  kReserved,     ///< 0/8, 240/4 (incl. broadcast), 192.0.0/24, 6to4 relay, test and
                 ///< benchmark nets; IPv6 outside 2000::/3 (incl. ::/8, 100::/64, 5f00::/16),
                 ///< 2001::/23 (incl. Teredo, ORCHID), 2001:db8::/32, 3fff::/20
};

/// Returns a short phrase for `kind`: "a loopback address", "a link-local address", ….
const char* describe(AddressClass kind);

/// An IPv4 or IPv6 address in network byte order.
struct IpAddress {
  bool v6 = false;
  std::array<std::uint8_t, 16> bytes{};  ///< IPv4 uses the first four

  /// Returns the address as text ("10.0.0.1", "::ffff:10.0.0.1").
  [[nodiscard]] std::string text() const;
  /// Returns the embedded IPv4 address of an IPv4-mapped (::ffff:a.b.c.d), SIIT
  /// (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96, and the last 32
  /// bits of local-use 64:ff9b:1::/48) or 6to4 (2002::/16) IPv6 address; nullopt for any
  /// other (Teredo, 2001::/32, is refused outright instead of decoded).
  [[nodiscard]] std::optional<IpAddress> embeddedV4() const;
};

/// Parses a literal IPv4 or IPv6 address (IPv6 may be in brackets); nullopt otherwise.
std::optional<IpAddress> parseIpAddress(std::string_view text);

/// Returns the class of `address`; an IPv6 address that embeds an IPv4 one is classified
/// by the IPv4 address when that is at least as strict as the IPv6 address's own class.
AddressClass classify(const IpAddress& address);

/// Returns true when `policy` lets a connection reach an address of class `kind`.
bool isAllowed(AddressClass kind, const AddressPolicy& policy);

/// Checks a host name before it is resolved: metadata.google.internal is always refused,
/// and under a policy without `allowPrivate` so are localhost and names ending in
/// .localhost, .local or .internal. Returns kRefused with one sentence naming the host.
Result<void> checkHostName(std::string_view host, const AddressPolicy& policy);

/// Checks one address of `host`; kRefused naming the host and address when refused.
Result<void> checkAddress(std::string_view host, const IpAddress& address,
                          const AddressPolicy& policy);

/// A host resolved and checked, with the one address connections must use.
struct PinnedAddress {
  std::string host;  ///< as in the URL, without brackets
  int port = 0;
  IpAddress address;

  /// Returns the CURLOPT_RESOLVE entry "host:port:address" (IPv6 in brackets) that makes
  /// curl connect to exactly this address, so a second DNS answer cannot switch it.
  [[nodiscard]] std::string curlResolveEntry() const;
};

/// Resolves `host` (a name or a literal address) with getaddrinfo, checks the name and
/// every address it returns against `policy`, and returns the first address. Fails with
/// kRefused when any address is refused, kConnect when the name does not resolve. Blocks
/// while resolving: call it off the io_context thread.
Result<PinnedAddress> resolveAndCheck(std::string_view host, int port, const AddressPolicy& policy);

}  // namespace kaja::core::net
