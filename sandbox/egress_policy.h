#pragma once

#include <span>
#include <string_view>

#include "core/error.h"
#include "core/net/address_guard.h"
#include "sandbox/cidr.h"

namespace kaja::sandbox {

/// Checks a host name before the egress proxy resolves it: cloud metadata names are always
/// refused; localhost and names ending in .localhost, .local or .internal are refused
/// unless the operator allowed some private range (their addresses are checked anyway).
/// Returns kRefused with one sentence naming the host.
core::Result<void> checkEgressName(std::string_view host, std::span<const Cidr> allowPrivate);

/// Checks one address `host` resolved to: public addresses pass, and so do addresses in an
/// `allowPrivate` range, except the unspecified and multicast addresses, which never do.
/// Returns kRefused with one sentence naming the host, the address and its kind.
core::Result<void> checkEgressAddress(std::string_view host, const core::net::IpAddress& address,
                                      std::span<const Cidr> allowPrivate);

/// Returns the address a checked `address` is dialled at: an IPv4-mapped IPv6 address
/// becomes its IPv4 address, anything else stays as it is.
core::net::IpAddress dialAddress(const core::net::IpAddress& address);

}  // namespace kaja::sandbox
