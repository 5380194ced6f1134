#pragma once

#include <string>
#include <string_view>

#include "core/error.h"
#include "core/net/address_guard.h"

namespace kaja::sandbox {

/// An IPv4 or IPv6 network, as an operator writes it for `--allow-private`
/// ("10.0.0.0/8", "fd00::/8", or a single address).
struct Cidr {
  core::net::IpAddress network;  ///< the bits after `prefix` are zero
  int prefix = 0;                ///< 0–32 for IPv4, 0–128 for IPv6

  /// Returns true when `address` lies in this network. An IPv4 network also holds the
  /// IPv6 forms that embed one of its addresses (IPv4-mapped, NAT64, 6to4), since a
  /// connection to those ends at the IPv4 address.
  [[nodiscard]] bool contains(const core::net::IpAddress& address) const;
  /// Returns the network as text: "10.0.0.0/8".
  [[nodiscard]] std::string text() const;
};

/// Parses "ADDRESS/PREFIX" or a bare address (a /32 or /128). Fails with kUsage and one
/// sentence when the text is no network, or has bits set after the prefix.
core::Result<Cidr> parseCidr(std::string_view text);

}  // namespace kaja::sandbox
