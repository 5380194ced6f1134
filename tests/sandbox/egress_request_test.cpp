// The egress proxy's request parser, without a network.
#include "sandbox/egress_request.h"

#include <gtest/gtest.h>

#include <string>

namespace kaja::sandbox {
namespace {

TEST(EgressRequestTest, ReadsConnect) {
  auto request = parseProxyRequest("CONNECT Example.COM:443 HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(request) << request.error().message;
  EXPECT_TRUE(request->tunnel);
  EXPECT_EQ(request->host, "example.com");
  EXPECT_EQ(request->port, 443);
  EXPECT_EQ(request->originHead, "");
  request = parseProxyRequest("CONNECT [2606:4700:0::1111]:8443 HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(request);
  EXPECT_EQ(request->host, "2606:4700::1111");
  EXPECT_EQ(request->port, 8443);
}

TEST(EgressRequestTest, RewritesAbsoluteFormToOriginForm) {
  auto request = parseProxyRequest(
      "POST http://[2606:4700::1]:8080?x=1 HTTP/1.0\r\nHost: other\r\nContent-Length: 3\r\n"
      "Proxy-Connection: keep-alive\r\nTE: trailers\r\nUpgrade: h2c\r\n"
      "Connection: Upgrade, content-length, X-Secret\r\nX-Secret: s\r\n\r\n");
  ASSERT_TRUE(request) << request.error().message;
  EXPECT_FALSE(request->tunnel);
  EXPECT_EQ(request->host, "2606:4700::1");
  EXPECT_EQ(request->port, 8080);
  EXPECT_EQ(request->originHead,
            "POST /?x=1 HTTP/1.1\r\nHost: [2606:4700::1]:8080\r\nContent-Length: 3\r\n"
            "Connection: close\r\n\r\n");
  request = parseProxyRequest("GET HTTP://Example.com HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(request);
  EXPECT_EQ(request->port, 80);
  EXPECT_EQ(request->originHead,
            "GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n");
}

// Found by the egress_request fuzz target in its first minute: a tab in the target was passed
// on, and an origin that splits the request line on any whitespace (RFC 9112 allows it) would
// read another path and version than the ones kaja checked.
TEST(EgressRequestTest, RefusesTargetsThatAnOriginCouldSplitOrMisread) {
  for (const std::string head : {
           "GET http://example.com/a\tHTTP/1.1 HTTP/1.1\r\n\r\n",
           "GET http://example.com/\t/b HTTP/1.1\r\n\r\n",
           "GET http://example.com/caf\xc3\xa9 HTTP/1.1\r\n\r\n",
           "GET http://example.com/\xff HTTP/1.1\r\n\r\n",
           "CONNECT example.com:443\t HTTP/1.1\r\n\r\n",
       }) {
    const auto request = parseProxyRequest(head);
    ASSERT_FALSE(request) << head << " was passed on as " << request->originHead;
    EXPECT_NE(request.error().message.find("target"), std::string::npos) << request.error().message;
  }
  EXPECT_FALSE(parseProxyRequest("GET http://example.com/\x7f HTTP/1.1\r\n\r\n"));  // DEL
  // Percent-encoding is how such bytes travel, and it is passed on as written.
  const auto encoded = parseProxyRequest("GET http://example.com/caf%C3%A9%09 HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(encoded) << encoded.error().message;
  EXPECT_TRUE(encoded->originHead.starts_with("GET /caf%C3%A9%09 HTTP/1.1\r\n"));
}

TEST(EgressRequestTest, RefusesMalformedHeads) {
  const std::string cases[] = {
      "",
      "\r\n\r\n",
      "GET http://a/ HTTP/1.1\r\n",
      "GET http://a/ HTTP/1.1\r\nX: 1\r\n\r\nGET",
      "CONNECT a:1 HTTP/1.1 extra\r\n\r\n",
      "CONNECT a:65536 HTTP/1.1\r\n\r\n",
      "CONNECT a:+1 HTTP/1.1\r\n\r\n",
      "CONNECT a:1a HTTP/1.1\r\n\r\n",
      "CONNECT :443 HTTP/1.1\r\n\r\n",
      "CONNECT a..b:443 HTTP/1.1\r\n\r\n",
      "CONNECT [10.0.0.1]:443 HTTP/1.1\r\n\r\n",
      "CONNECT [::1]x:443 HTTP/1.1\r\n\r\n",
      "CONNECT " + std::string(64, 'a') + ".com:443 HTTP/1.1\r\n\r\n",
      "GET http://a/#frag HTTP/1.1\r\n\r\n",
      "POST http://a/ HTTP/1.1\r\nContent-Length: 1x\r\n\r\n",
      "POST http://a/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
      "POST http://a/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
      "POST http://a/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
      "POST http://a/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
      "GET http:///path HTTP/1.1\r\n\r\n",
      "GET http://a%2f/ HTTP/1.1\r\n\r\n",
      "G(T http://a/ HTTP/1.1\r\n\r\n",
      "GET http://a/ HTTP/1.1\r\n: empty-name\r\n\r\n",
      "GET http://a/ HTTP/1.1\r\nX : space-before-colon\r\n\r\n",
      "GET http://a/ HTTP/1.1\r\nX: a\rb\r\n\r\n",
      std::string("GET http://a/ HTTP/1.1\r\nX: a\0b\r\n\r\n", 34),
      "GET http://a/ HTTP/1.1\r\nX: " + std::string(kMaxRequestHead, 'a') + "\r\n\r\n",
  };
  for (const auto& head : cases) {
    const auto request = parseProxyRequest(head);
    EXPECT_FALSE(request) << head.substr(0, 80);
    if (!request) {
      EXPECT_EQ(request.error().code, core::ErrorCode::kProtocol);
    }
  }
}

}  // namespace
}  // namespace kaja::sandbox
