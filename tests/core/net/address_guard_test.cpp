// The address guard's classification, without network: only literal addresses and
// "localhost" are resolved.
#include "core/net/address_guard.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace kaja::core::net {
namespace {

AddressClass classOf(const std::string& text) {
  auto address = parseIpAddress(text);
  EXPECT_TRUE(address) << text;
  return address ? classify(*address) : AddressClass::kPublic;
}

struct Case {
  const char* address;
  AddressClass expected;
};

TEST(AddressGuardTest, ClassifiesIpv4) {
  const Case cases[] = {
      {"8.8.8.8", AddressClass::kPublic},
      {"1.1.1.1", AddressClass::kPublic},
      {"172.32.0.1", AddressClass::kPublic},
      {"100.128.0.1", AddressClass::kPublic},
      {"169.253.255.255", AddressClass::kPublic},
      {"0.0.0.0", AddressClass::kUnspecified},
      {"0.1.2.3", AddressClass::kReserved},
      {"127.0.0.1", AddressClass::kLoopback},
      {"127.255.255.254", AddressClass::kLoopback},
      {"10.0.0.1", AddressClass::kPrivate},
      {"172.16.0.1", AddressClass::kPrivate},
      {"172.31.255.255", AddressClass::kPrivate},
      {"192.168.1.1", AddressClass::kPrivate},
      {"100.64.0.1", AddressClass::kPrivate},
      {"100.127.255.255", AddressClass::kPrivate},
      {"100.100.100.200", AddressClass::kMetadata},
      {"169.254.169.254", AddressClass::kLinkLocal},
      {"169.254.0.1", AddressClass::kLinkLocal},
      {"224.0.0.1", AddressClass::kMulticast},
      {"239.255.255.250", AddressClass::kMulticast},
      {"240.0.0.1", AddressClass::kReserved},
      {"255.255.255.255", AddressClass::kReserved},
      {"192.0.2.1", AddressClass::kReserved},
      {"198.18.0.1", AddressClass::kReserved},
      {"203.0.113.9", AddressClass::kReserved},
  };
  for (const auto& c : cases) EXPECT_EQ(classOf(c.address), c.expected) << c.address;
}

TEST(AddressGuardTest, ClassifiesIpv6) {
  const Case cases[] = {
      {"2606:4700:4700::1111", AddressClass::kPublic},
      {"::", AddressClass::kUnspecified},
      {"::1", AddressClass::kLoopback},
      {"[::1]", AddressClass::kLoopback},
      {"fe80::1", AddressClass::kLinkLocal},
      {"febf:ffff::1", AddressClass::kLinkLocal},
      {"fc00::1", AddressClass::kPrivate},
      {"fdff:1234::1", AddressClass::kPrivate},
      {"fd00:ec2::254", AddressClass::kMetadata},
      {"fd00:ec3::254", AddressClass::kPrivate},
      {"ff02::1", AddressClass::kMulticast},
      {"2001:db8::1", AddressClass::kReserved},
  };
  for (const auto& c : cases) EXPECT_EQ(classOf(c.address), c.expected) << c.address;
}

TEST(AddressGuardTest, ClassifiesEmbeddedIpv4ByTheInnerAddress) {
  const Case cases[] = {
      {"::ffff:169.254.169.254", AddressClass::kLinkLocal},
      {"::ffff:a9fe:a9fe", AddressClass::kLinkLocal},
      {"::ffff:100.100.100.200", AddressClass::kMetadata},
      {"::ffff:127.0.0.1", AddressClass::kLoopback},
      {"::ffff:10.1.2.3", AddressClass::kPrivate},
      {"::ffff:0.0.0.0", AddressClass::kUnspecified},
      {"::ffff:224.0.0.1", AddressClass::kMulticast},
      {"::ffff:8.8.8.8", AddressClass::kPublic},
      {"64:ff9b::169.254.169.254", AddressClass::kLinkLocal},
      {"64:ff9b::8.8.8.8", AddressClass::kPublic},
      {"2002:a9fe:a9fe::1", AddressClass::kLinkLocal},
      {"::169.254.169.254", AddressClass::kLinkLocal},
      {"::8.8.8.8", AddressClass::kReserved},
  };
  for (const auto& c : cases) EXPECT_EQ(classOf(c.address), c.expected) << c.address;
}

// Each range of IANA's IPv4 special-purpose registry (and multicast): its first and last
// address, and the addresses just outside it.
TEST(AddressGuardTest, Ipv4RangesEndWhereTheRegistrySays) {
  using enum AddressClass;
  const Case cases[] = {
      {"0.0.0.1", kReserved},  // 0.0.0.0/8, "this network"
      {"0.255.255.255", kReserved},
      {"1.0.0.0", kPublic},
      {"9.255.255.255", kPublic},  // 10.0.0.0/8
      {"10.0.0.0", kPrivate},
      {"10.255.255.255", kPrivate},
      {"11.0.0.0", kPublic},
      {"100.63.255.255", kPublic},  // 100.64.0.0/10, shared address space
      {"100.64.0.0", kPrivate},
      {"100.127.255.255", kPrivate},
      {"100.128.0.0", kPublic},
      {"100.100.100.199", kPrivate},  // 100.100.100.200, metadata
      {"100.100.100.200", kMetadata},
      {"100.100.100.201", kPrivate},
      {"126.255.255.255", kPublic},  // 127.0.0.0/8
      {"127.0.0.0", kLoopback},
      {"127.255.255.255", kLoopback},
      {"128.0.0.0", kPublic},
      {"169.253.255.255", kPublic},  // 169.254.0.0/16
      {"169.254.0.0", kLinkLocal},
      {"169.254.255.255", kLinkLocal},
      {"169.255.0.0", kPublic},
      {"172.15.255.255", kPublic},  // 172.16.0.0/12
      {"172.16.0.0", kPrivate},
      {"172.31.255.255", kPrivate},
      {"172.32.0.0", kPublic},
      {"191.255.255.255", kPublic},  // 192.0.0.0/24, IETF protocol assignments
      {"192.0.0.0", kReserved},
      {"192.0.0.9", kReserved},
      {"192.0.0.170", kReserved},
      {"192.0.0.255", kReserved},
      {"192.0.1.0", kPublic},
      {"192.0.1.255", kPublic},  // 192.0.2.0/24, TEST-NET-1
      {"192.0.2.0", kReserved},
      {"192.0.2.255", kReserved},
      {"192.0.3.0", kPublic},
      {"192.31.196.1", kPublic},   // AS112, globally reachable
      {"192.52.193.1", kPublic},   // AMT, globally reachable
      {"192.88.98.255", kPublic},  // 192.88.99.0/24, the 6to4 relay anycast
      {"192.88.99.0", kReserved},
      {"192.88.99.255", kReserved},
      {"192.88.100.0", kPublic},
      {"192.167.255.255", kPublic},  // 192.168.0.0/16
      {"192.168.0.0", kPrivate},
      {"192.168.255.255", kPrivate},
      {"192.169.0.0", kPublic},
      {"192.175.48.1", kPublic},    // AS112 direct delegation, globally reachable
      {"198.17.255.255", kPublic},  // 198.18.0.0/15, benchmarking
      {"198.18.0.0", kReserved},
      {"198.19.255.255", kReserved},
      {"198.20.0.0", kPublic},
      {"198.51.99.255", kPublic},  // 198.51.100.0/24, TEST-NET-2
      {"198.51.100.0", kReserved},
      {"198.51.100.255", kReserved},
      {"198.51.101.0", kPublic},
      {"203.0.112.255", kPublic},  // 203.0.113.0/24, TEST-NET-3
      {"203.0.113.0", kReserved},
      {"203.0.113.255", kReserved},
      {"203.0.114.0", kPublic},
      {"223.255.255.255", kPublic},  // 224.0.0.0/4, multicast
      {"224.0.0.0", kMulticast},
      {"239.255.255.255", kMulticast},
      {"240.0.0.0", kReserved},  // 240.0.0.0/4, and the broadcast address at its end
      {"255.255.255.254", kReserved},
      {"255.255.255.255", kReserved},
  };
  for (const auto& c : cases) EXPECT_EQ(classOf(c.address), c.expected) << c.address;
}

// Each range of IANA's IPv6 special-purpose registry and address space that is not public,
// with its first and last address and the addresses just outside it. Outside 2000::/3 the
// neighbours are reserved too: only 2000::/3 is global unicast.
TEST(AddressGuardTest, Ipv6RangesEndWhereTheRegistrySays) {
  using enum AddressClass;
  const Case cases[] = {
      {"::2", kReserved},                                      // ::/8 beyond :: and ::1
      {"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kReserved},  // 2000::/3, global unicast
      {"2000::", kPublic},
      {"3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kPublic},
      {"4000::", kReserved},
      {"ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kReserved},  // 100::/64, discard-only
      {"100::", kReserved},
      {"100::ffff:ffff:ffff:ffff", kReserved},
      {"100:0:0:1::", kReserved},
      {"2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kPublic},  // 2001::/23, IETF protocol
      {"2001::", kReserved},                                 // assignments; Teredo is
      {"2001:0:4136:e378:8000:63bf:3fff:fdd2", kReserved},   // 2001::/32
      {"2001:0:ffff:ffff:ffff:ffff:ffff:ffff", kReserved},
      {"2001:1::1", kReserved},
      {"2001:1:ffff:ffff:ffff:ffff:ffff:ffff", kReserved},  // 2001:2::/48, benchmarking
      {"2001:2::", kReserved},
      {"2001:2:0:ffff:ffff:ffff:ffff:ffff", kReserved},
      {"2001:2:1::", kReserved},
      {"2001:f:ffff:ffff:ffff:ffff:ffff:ffff", kReserved},  // 2001:10::/28, ORCHID
      {"2001:10::", kReserved},
      {"2001:1f:ffff:ffff:ffff:ffff:ffff:ffff", kReserved},  // and 2001:20::/28, ORCHIDv2
      {"2001:20::", kReserved},
      {"2001:2f:ffff:ffff:ffff:ffff:ffff:ffff", kReserved},
      {"2001:30::", kReserved},
      {"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", kReserved},
      {"2001:200::", kPublic},
      {"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", kPublic},  // 2001:db8::/32, documentation
      {"2001:db8::", kReserved},
      {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", kReserved},
      {"2001:db9::", kPublic},
      {"2620:4f:8000::1", kPublic},                          // AS112, globally reachable
      {"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kPublic},  // 3fff::/20, documentation
      {"3fff::", kReserved},
      {"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", kReserved},
      {"3fff:1000::", kPublic},
      {"5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kReserved},  // 5f00::/16, SRv6 SIDs
      {"5f00::", kReserved},
      {"5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kReserved},
      {"5f01::", kReserved},
      {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kReserved},  // fc00::/7, unique local
      {"fc00::", kPrivate},
      {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kPrivate},
      {"fe00::", kReserved},
      {"fd00:ec1:ffff:ffff:ffff:ffff:ffff:ffff", kPrivate},  // fd00:ec2::/32, metadata
      {"fd00:ec2::", kMetadata},
      {"fd00:ec2:ffff:ffff:ffff:ffff:ffff:ffff", kMetadata},
      {"fd00:ec3::", kPrivate},
      {"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kReserved},  // fe80::/10, link-local
      {"fe80::", kLinkLocal},
      {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kLinkLocal},
      {"fec0::", kPrivate},  // fec0::/10, site-local (deprecated)
      {"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kPrivate},
      {"ff00::", kMulticast},  // ff00::/8
      {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kMulticast},
  };
  for (const auto& c : cases) EXPECT_EQ(classOf(c.address), c.expected) << c.address;
}

// The IPv6 forms that carry an IPv4 address: each range's first and last address, the
// addresses just outside it (which carry none), and what the embedded address makes them.
TEST(AddressGuardTest, TranslationRangesAreJudgedByTheirIpv4Address) {
  using enum AddressClass;
  const Case cases[] = {
      // ::ffff:0:0/96, IPv4-mapped: exactly what the IPv4 address is.
      {"::fffe:ffff:ffff", kReserved},
      {"::ffff:0.0.0.0", kUnspecified},
      {"::ffff:8.8.8.8", kPublic},
      {"::ffff:255.255.255.255", kReserved},
      {"::1:0:0:0", kReserved},
      // ::ffff:0:0:0/96, SIIT (RFC 2765): never public, and as strict as its IPv4 address.
      {"::fffe:ffff:ffff:ffff", kReserved},
      {"::ffff:0:0.0.0.0", kUnspecified},
      {"::ffff:0:8.8.8.8", kReserved},
      {"::ffff:0:10.0.0.5", kReserved},
      {"::ffff:0:169.254.169.254", kLinkLocal},
      {"::ffff:0:100.100.100.200", kMetadata},
      {"::ffff:0:255.255.255.255", kReserved},
      {"::ffff:1:0:0", kReserved},
      // 64:ff9b::/96, well-known NAT64: what the IPv4 address is.
      {"64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", kReserved},
      {"64:ff9b::", kUnspecified},
      {"64:ff9b::8.8.8.8", kPublic},
      {"64:ff9b::10.0.0.5", kPrivate},
      {"64:ff9b::255.255.255.255", kReserved},
      {"64:ff9b::1:0:0", kReserved},
      {"64:ff9b::1:808:808", kReserved},
      // 64:ff9b:1::/48, local-use NAT64 (RFC 8215): private, or stricter by its last 32 bits.
      {"64:ff9b:0:ffff:ffff:ffff:ffff:ffff", kReserved},
      {"64:ff9b:1::", kUnspecified},
      {"64:ff9b:1::8.8.8.8", kPrivate},
      {"64:ff9b:1::5db8:d822", kPrivate},
      {"64:ff9b:1::10.0.0.5", kPrivate},
      {"64:ff9b:1::127.0.0.1", kLoopback},
      {"64:ff9b:1::169.254.169.254", kLinkLocal},
      {"64:ff9b:1:ffff:ffff:ffff:808:808", kPrivate},
      {"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", kReserved},
      {"64:ff9b:2::", kReserved},
      {"64:ff9b:2::808:808", kReserved},
      // 2002::/16, 6to4: what the IPv4 address in bits 16..47 is.
      {"2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kPublic},
      {"2002::", kUnspecified},
      {"2002:808:808::1", kPublic},
      {"2002:a00:5::1", kPrivate},
      {"2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kReserved},
      {"2003::", kPublic},
      // ::/96, IPv4-compatible (deprecated): never public.
      {"::8.8.8.8", kReserved},
      {"::10.0.0.5", kReserved},
      {"::169.254.169.254", kLinkLocal},
      {"::255.255.255.255", kReserved},
      // Teredo hides its client's IPv4 address inverted (10.0.0.5 here); refused outright.
      {"2001:0:5db8:d822::f5ff:fffa", kReserved},
  };
  for (const auto& c : cases) EXPECT_EQ(classOf(c.address), c.expected) << c.address;
}

TEST(AddressGuardTest, EmbeddedIpv4IsReadOnlyFromTheTranslationRanges) {
  for (const char* text : {"::ffff:8.8.8.8", "::ffff:0:8.8.8.8", "::8.8.8.8", "64:ff9b::8.8.8.8",
                           "64:ff9b:1::8.8.8.8", "64:ff9b:1:ffff:ffff:ffff:808:808",
                           "2002:808:808::1", "2002:808:808:ffff:ffff:ffff:ffff:ffff"}) {
    const auto inner = parseIpAddress(text)->embeddedV4();
    ASSERT_TRUE(inner) << text;
    EXPECT_FALSE(inner->v6) << text;
    EXPECT_EQ(inner->text(), "8.8.8.8") << text;
  }
  for (const char* text :
       {"8.8.8.8", "::fffe:808:808", "::1:ffff:808:808", "0:0:0:1:ffff:0:808:808",
        "::ffff:1:808:808", "64:ff9a:ffff:ffff:ffff:ffff:808:808", "64:ff9b::1:808:808",
        "64:ff9b:0:ffff:ffff:ffff:808:808", "64:ff9b:2::808:808", "2001:0:5db8:d822::f5ff:fffa",
        "2001:ffff:808:808::", "2003:808:808::", "2606:4700::808:808"}) {
    EXPECT_FALSE(parseIpAddress(text)->embeddedV4()) << text;
  }
}

TEST(AddressGuardTest, EachClassHasItsOwnPhrase) {
  std::set<std::string> phrases;
  for (const auto kind :
       {AddressClass::kPublic, AddressClass::kLoopback, AddressClass::kPrivate,
        AddressClass::kLinkLocal, AddressClass::kMetadata, AddressClass::kUnspecified,
        AddressClass::kMulticast, AddressClass::kReserved}) {
    const std::string phrase = describe(kind);
    EXPECT_TRUE(phrase.starts_with("a ") || phrase.starts_with("the ")) << phrase;
    EXPECT_EQ(phrase.find("unknown"), std::string::npos) << phrase;
    phrases.insert(phrase);
  }
  EXPECT_EQ(phrases.size(), 8U);
  // The sentence a refusal shows, for a form the guard used to let through.
  auto teredo = resolveAndCheck("2001:0:5db8:d822::f5ff:fffa", 80, AddressPolicy{true});
  ASSERT_FALSE(teredo);
  EXPECT_EQ(teredo.error().code, ErrorCode::kRefused);
  EXPECT_EQ(teredo.error().message,
            "kaja refused to connect to the address 2001:0:5db8:d822::f5ff:fffa because it is a "
            "reserved or special-purpose address.");
  auto local64 = resolveAndCheck("64:ff9b:1::5db8:d822", 80, AddressPolicy{false});
  ASSERT_FALSE(local64);
  EXPECT_NE(local64.error().message.find("a private network address"), std::string::npos)
      << local64.error().message;
  EXPECT_TRUE(resolveAndCheck("64:ff9b:1::5db8:d822", 80, AddressPolicy{true}));
  EXPECT_FALSE(resolveAndCheck("64:ff9b:1::a9fe:a9fe", 80, AddressPolicy{true}));
}

TEST(AddressGuardTest, PolicyAllowsPrivateOnlyWhenAsked) {
  const AddressPolicy strict{false};
  const AddressPolicy local{true};
  EXPECT_TRUE(isAllowed(AddressClass::kPublic, strict));
  EXPECT_FALSE(isAllowed(AddressClass::kLoopback, strict));
  EXPECT_FALSE(isAllowed(AddressClass::kPrivate, strict));
  EXPECT_TRUE(isAllowed(AddressClass::kLoopback, local));
  EXPECT_TRUE(isAllowed(AddressClass::kPrivate, local));
  for (const auto kind :
       {AddressClass::kLinkLocal, AddressClass::kMetadata, AddressClass::kUnspecified,
        AddressClass::kMulticast, AddressClass::kReserved}) {
    EXPECT_FALSE(isAllowed(kind, strict)) << describe(kind);
    EXPECT_FALSE(isAllowed(kind, local)) << describe(kind);
  }
}

TEST(AddressGuardTest, RejectsNonAddresses) {
  for (const char* text : {"", "localhost", "1.2.3", "1.2.3.4.5", "::g", "[::1", "256.1.1.1"}) {
    EXPECT_FALSE(parseIpAddress(text)) << text;
  }
}

TEST(AddressGuardTest, HostNames) {
  const AddressPolicy strict{false};
  const AddressPolicy local{true};
  for (const char* name :
       {"metadata.google.internal", "METADATA.google.internal.", "Metadata.Google.Internal"}) {
    auto strictResult = checkHostName(name, strict);
    ASSERT_FALSE(strictResult) << name;
    EXPECT_EQ(strictResult.error().code, ErrorCode::kRefused);
    EXPECT_NE(strictResult.error().message.find("metadata"), std::string::npos);
    EXPECT_FALSE(checkHostName(name, local)) << name;
  }
  for (const char* name : {"localhost", "app.localhost", "printer.local", "db.corp.internal"}) {
    EXPECT_FALSE(checkHostName(name, strict)) << name;
    EXPECT_TRUE(checkHostName(name, local)) << name;
  }
  EXPECT_TRUE(checkHostName("mcp.context7.com", strict));
  EXPECT_TRUE(checkHostName("internal.example.com", strict));
}

TEST(AddressGuardTest, ResolvesAndPinsLiterals) {
  auto pinned = resolveAndCheck("127.0.0.1", 8080, AddressPolicy{true});
  ASSERT_TRUE(pinned) << pinned.error().describe();
  EXPECT_EQ(pinned->curlResolveEntry(), "127.0.0.1:8080:127.0.0.1");
  auto v6 = resolveAndCheck("[::1]", 443, AddressPolicy{true});
  ASSERT_TRUE(v6) << v6.error().describe();
  EXPECT_EQ(v6->curlResolveEntry(), "::1:443:[::1]");
}

TEST(AddressGuardTest, RefusalsNameHostAndAddress) {
  auto loopback = resolveAndCheck("127.0.0.1", 80, AddressPolicy{false});
  ASSERT_FALSE(loopback);
  EXPECT_EQ(loopback.error().code, ErrorCode::kRefused);
  EXPECT_EQ(loopback.error().message,
            "kaja refused to connect to the address 127.0.0.1 because it is a loopback address, "
            "which servers found in a registry may not reach unless you allow it.");
  auto metadata = resolveAndCheck("::ffff:169.254.169.254", 80, AddressPolicy{true});
  ASSERT_FALSE(metadata);
  EXPECT_NE(metadata.error().message.find("::ffff:169.254.169.254"), std::string::npos);
  EXPECT_NE(metadata.error().message.find("link-local"), std::string::npos);
  EXPECT_FALSE(resolveAndCheck("0.0.0.0", 80, AddressPolicy{true}));
  EXPECT_FALSE(resolveAndCheck("metadata.google.internal", 80, AddressPolicy{true}));
}

TEST(AddressGuardTest, LocalhostResolvesToLoopbackAndObeysThePolicy) {
  auto allowed = resolveAndCheck("localhost", 80, AddressPolicy{true});
  ASSERT_TRUE(allowed) << allowed.error().describe();
  EXPECT_EQ(classify(allowed->address), AddressClass::kLoopback);
  EXPECT_EQ(allowed->host, "localhost");
  auto refused = resolveAndCheck("localhost", 80, AddressPolicy{false});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kRefused);
  EXPECT_NE(refused.error().message.find("localhost"), std::string::npos);
}

}  // namespace
}  // namespace kaja::core::net
