// The address guard's classification, without network: only literal addresses and
// "localhost" are resolved.
#include "core/net/address_guard.h"

#include <gtest/gtest.h>

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
