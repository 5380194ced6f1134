// What a confined server may reach through the egress proxy (K22): public addresses, and
// the private ranges the operator allowed.
#include "sandbox/egress_policy.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace kaja::sandbox {

using core::net::AddressClass;
using core::net::IpAddress;

core::Result<void> checkEgressName(std::string_view host, std::span<const Cidr> allowPrivate) {
  auto checked = core::net::checkHostName(host, {.allowPrivate = !allowPrivate.empty()});
  if (checked) return {};
  return core::fail(core::ErrorCode::kRefused,
                    "kaja's sandbox refused \"" + std::string(host) +
                        "\": it names a local, internal or metadata host, and servers in the "
                        "sandbox reach only public addresses.",
                    std::string(host));
}

core::Result<void> checkEgressAddress(std::string_view host, const IpAddress& address,
                                      std::span<const Cidr> allowPrivate) {
  const AddressClass kind = core::net::classify(address);
  if (kind == AddressClass::kPublic) return {};
  const bool never = kind == AddressClass::kUnspecified || kind == AddressClass::kMulticast;
  if (!never &&
      std::ranges::any_of(allowPrivate, [&](const Cidr& cidr) { return cidr.contains(address); })) {
    return {};
  }
  const std::string text = address.text();
  const std::string what = host == text ? text : "\"" + std::string(host) + "\" (" + text + ")";
  return core::fail(core::ErrorCode::kRefused,
                    "kaja's sandbox refused " + what + ": it is " + core::net::describe(kind) +
                        ", and servers in the sandbox reach only public addresses.",
                    std::string(host));
}

IpAddress dialAddress(const IpAddress& address) {
  static constexpr std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (!address.v6 || std::memcmp(address.bytes.data(), kMapped, 12) != 0) return address;
  IpAddress v4;
  std::copy(address.bytes.begin() + 12, address.bytes.end(), v4.bytes.begin());
  return v4;
}

}  // namespace kaja::sandbox
