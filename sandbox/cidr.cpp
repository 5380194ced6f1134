// CIDR networks for the operator's `--allow-private` ranges.
#include "sandbox/cidr.h"

#include <charconv>

namespace kaja::sandbox {
namespace {

using core::net::IpAddress;

// True when the first `bits` bits of `a` and `b` are equal.
bool samePrefix(const std::uint8_t* a, const std::uint8_t* b, int bits) {
  for (int i = 0; bits > 0; ++i, bits -= 8) {
    const int mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((a[i] & mask) != (b[i] & mask)) return false;
  }
  return true;
}

core::Result<Cidr> badCidr(std::string_view text, const std::string& why) {
  return core::fail(core::ErrorCode::kUsage, "\"" + std::string(text) + "\" is not a network " +
                                                 why + "; write it as 10.0.0.0/8 or fd00::/8.");
}

}  // namespace

bool Cidr::contains(const IpAddress& address) const {
  if (address.v6 == network.v6) {
    return samePrefix(address.bytes.data(), network.bytes.data(), prefix);
  }
  if (network.v6) return false;
  const auto inner = address.embeddedV4();
  return inner && samePrefix(inner->bytes.data(), network.bytes.data(), prefix);
}

std::string Cidr::text() const { return network.text() + "/" + std::to_string(prefix); }

core::Result<Cidr> parseCidr(std::string_view text) {
  const auto slash = text.find('/');
  const auto address = core::net::parseIpAddress(text.substr(0, slash));
  if (!address || text.front() == '[') return badCidr(text, "(its address does not parse)");
  Cidr cidr{*address, address->v6 ? 128 : 32};
  if (slash != std::string_view::npos) {
    const std::string_view digits = text.substr(slash + 1);
    int prefix = -1;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
        prefix < 0 || prefix > cidr.prefix) {
      return badCidr(text, "(its prefix length is out of range)");
    }
    cidr.prefix = prefix;
  }
  const int bytes = cidr.network.v6 ? 16 : 4;
  for (int bit = cidr.prefix; bit < bytes * 8; ++bit) {
    if (cidr.network.bytes[bit / 8] & (0x80 >> (bit % 8))) {
      return badCidr(text, "(it has address bits set after the prefix)");
    }
  }
  return cidr;
}

}  // namespace kaja::sandbox
