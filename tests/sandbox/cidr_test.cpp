// The operator's --allow-private networks, and the egress policy that uses them.
#include "sandbox/cidr.h"

#include <gtest/gtest.h>

#include "sandbox/egress_policy.h"

namespace kaja::sandbox {
namespace {

core::net::IpAddress ip(const char* text) { return *core::net::parseIpAddress(text); }

TEST(CidrTest, ParsesNetworksAndSingleAddresses) {
  EXPECT_EQ(parseCidr("10.0.0.0/8")->text(), "10.0.0.0/8");
  EXPECT_EQ(parseCidr("10.0.0.5")->text(), "10.0.0.5/32");
  EXPECT_EQ(parseCidr("fd00::/8")->text(), "fd00::/8");
  EXPECT_EQ(parseCidr("::1")->prefix, 128);
  EXPECT_EQ(parseCidr("0.0.0.0/0")->prefix, 0);
  for (const char* bad :
       {"", "/8", "10.0.0.0/", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/8x", "10.0.0.5/8",
        "fd00::1/8", "::/129", "[::1]/128", "example.com/8", "10.0.0.0/08x", "10.0.0.0/ 8"}) {
    const auto parsed = parseCidr(bad);
    EXPECT_FALSE(parsed) << bad;
    if (!parsed) {
      EXPECT_NE(parsed.error().message.find("10.0.0.0/8"), std::string::npos);
    }
  }
}

TEST(CidrTest, ContainsItsAddressesAndTheirIpv6Forms) {
  const auto ten = *parseCidr("10.0.0.0/8");
  EXPECT_TRUE(ten.contains(ip("10.255.1.2")));
  EXPECT_FALSE(ten.contains(ip("11.0.0.1")));
  EXPECT_TRUE(ten.contains(ip("::ffff:10.0.0.5")));
  EXPECT_TRUE(ten.contains(ip("64:ff9b::a00:5")));
  EXPECT_TRUE(ten.contains(ip("64:ff9b:1::a00:5")));
  EXPECT_TRUE(ten.contains(ip("::ffff:0:a00:5")));
  EXPECT_FALSE(ten.contains(ip("64:ff9b:2::a00:5")));
  // Teredo is refused outright, never read as the IPv4 address it hides (10.0.0.5 here).
  EXPECT_FALSE(ten.contains(ip("2001:0:5db8:d822::f5ff:fffa")));
  EXPECT_FALSE(ten.contains(ip("fd00::1")));
  const auto odd = *parseCidr("172.16.0.0/12");
  EXPECT_TRUE(odd.contains(ip("172.31.255.255")));
  EXPECT_FALSE(odd.contains(ip("172.32.0.0")));
  const auto ula = *parseCidr("fd00::/8");
  EXPECT_TRUE(ula.contains(ip("fd12::1")));
  EXPECT_FALSE(ula.contains(ip("fc00::1")));
  EXPECT_FALSE(ula.contains(ip("10.0.0.1")));
}

TEST(EgressPolicyTest, OnlyPublicAddressesPassByDefault) {
  EXPECT_TRUE(checkEgressAddress("h", ip("93.184.216.34"), {}));
  EXPECT_TRUE(checkEgressAddress("h", ip("2606:4700::1111"), {}));
  for (const char* text : {"10.0.0.5", "127.0.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
                           "::ffff:10.0.0.5", "64:ff9b::a00:5", "2002:a9fe:a9fe::1", "::1",
                           "fd00::1", "fe80::1", "ff02::1", "224.0.0.1", "198.51.100.1"}) {
    const auto checked = checkEgressAddress("h", ip(text), {});
    ASSERT_FALSE(checked) << text;
    EXPECT_EQ(checked.error().code, core::ErrorCode::kRefused);
    EXPECT_NE(checked.error().message.find(text), std::string::npos) << checked.error().message;
  }
}

TEST(EgressPolicyTest, TranslatedTunnelledAndSpecialIpv6FormsAreRefused) {
  // Each carries (or, for Teredo, hides) the public 93.184.216.34 or is special-purpose;
  // none is a public address a server may reach.
  for (const char* text :
       {"64:ff9b:1::5db8:d822", "::ffff:0:5db8:d822", "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        "2001:0:5db8:d822::f5ff:fffa", "2001:2::1", "3fff::1", "5f00::1", "100::1", "2001:10::1",
        "2001:20::1", "2001:db8::1", "fec0::1", "::93.184.216.34"}) {
    const auto checked = checkEgressAddress("h", ip(text), {});
    ASSERT_FALSE(checked) << text;
    EXPECT_EQ(checked.error().code, core::ErrorCode::kRefused);
    EXPECT_NE(checked.error().message.find(text), std::string::npos) << checked.error().message;
    EXPECT_NE(checked.error().message.find("reach only public addresses"), std::string::npos);
  }
  // The well-known NAT64 and 6to4 forms of a public address stay public.
  EXPECT_TRUE(checkEgressAddress("h", ip("64:ff9b::5db8:d822"), {}));
  EXPECT_TRUE(checkEgressAddress("h", ip("2002:5db8:d822::1"), {}));
}

TEST(EgressPolicyTest, AllowPrivateOpensOnlyItsRangeAndNeverTheUnspecified) {
  const std::vector<Cidr> allow = {*parseCidr("10.0.0.0/8"), *parseCidr("0.0.0.0/8")};
  EXPECT_TRUE(checkEgressAddress("h", ip("10.0.0.5"), allow));
  EXPECT_TRUE(checkEgressAddress("h", ip("::ffff:10.0.0.5"), allow));
  EXPECT_FALSE(checkEgressAddress("h", ip("192.168.0.1"), allow));
  EXPECT_FALSE(checkEgressAddress("h", ip("169.254.169.254"), allow));
  EXPECT_FALSE(checkEgressAddress("h", ip("0.0.0.0"), allow));
  EXPECT_FALSE(checkEgressAddress("h", ip("224.0.0.1"), {{*parseCidr("224.0.0.0/4")}}));
}

TEST(EgressPolicyTest, LocalNamesAreRefusedUnlessAPrivateRangeIsAllowed) {
  for (const char* name : {"localhost", "a.localhost", "printer.local", "db.internal"}) {
    EXPECT_FALSE(checkEgressName(name, {})) << name;
    EXPECT_TRUE(checkEgressName(name, {{*parseCidr("10.0.0.0/8")}})) << name;
  }
  EXPECT_FALSE(checkEgressName("metadata.google.internal", {{*parseCidr("0.0.0.0/0")}}));
  EXPECT_TRUE(checkEgressName("example.com", {}));
}

TEST(EgressPolicyTest, DialsMappedAddressesAsIpv4) {
  EXPECT_EQ(dialAddress(ip("::ffff:93.184.216.34")).text(), "93.184.216.34");
  EXPECT_FALSE(dialAddress(ip("::ffff:93.184.216.34")).v6);
  EXPECT_EQ(dialAddress(ip("2606:4700::1111")).text(), "2606:4700::1111");
}

}  // namespace
}  // namespace kaja::sandbox
