#include "core/net/sse_parser.h"

#include <gtest/gtest.h>

#include "core/net/url.h"

namespace kaja::core::net {
namespace {

std::vector<SseEvent> feedAll(SseParser& parser, const std::vector<std::string>& chunks) {
  std::vector<SseEvent> events;
  for (const auto& chunk : chunks) {
    auto out = parser.feed(chunk);
    EXPECT_TRUE(out);
    if (out) events.insert(events.end(), out->begin(), out->end());
  }
  return events;
}

TEST(SseParserTest, JoinsDataLinesAndTracksIdAndRetry) {
  SseParser parser;
  auto events = feedAll(parser, {": keep-alive\n\nid: 7\nretry: 250\nevent: message\n",
                                 "data: {\"a\":\ndata:1}\n\n"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, "message");
  EXPECT_EQ(events[0].data, "{\"a\":\n1}");
  EXPECT_EQ(events[0].id, "7");
  EXPECT_EQ(parser.lastEventId(), "7");
  ASSERT_TRUE(parser.retry());
  EXPECT_EQ(parser.retry()->count(), 250);
}

TEST(SseParserTest, AnySplitAndAnyLineEnding) {
  const std::string stream = "event: endpoint\r\ndata: /messages?s=1\r\n\r\ndata: x\rdata: y\r\r";
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    SseParser parser;
    auto events = feedAll(parser, {stream.substr(0, cut), stream.substr(cut)});
    ASSERT_EQ(events.size(), 2u) << cut;
    EXPECT_EQ(events[0].type, "endpoint");
    EXPECT_EQ(events[0].data, "/messages?s=1");
    EXPECT_EQ(events[1].type, "message");
    EXPECT_EQ(events[1].data, "x\ny");
  }
}

TEST(SseParserTest, IdWithoutDataIsKeptForResumption) {
  SseParser parser;
  auto events = feedAll(parser, {"id: prime-1\n\n"});
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(parser.lastEventId(), "prime-1");
  auto more = feedAll(parser, {"retry: soon\n\n"});
  EXPECT_FALSE(parser.retry());
}

TEST(SseParserTest, OversizedEventIsAnError) {
  SseParser parser(16);
  EXPECT_FALSE(parser.feed("data: 0123456789abcdefghij\n"));
}

TEST(SseParserTest, EventIdsThatCannotBeSentBackAreAnError) {
  for (const std::string& id :
       std::vector<std::string>{"e\x01", "a b", "caf\xc3\xa9", std::string(257, 'e'), "x\x7f"}) {
    SseParser parser;
    auto out = parser.feed("id: " + id + "\ndata: {}\n\n");
    ASSERT_FALSE(out) << id;
    EXPECT_NE(out.error().message.find("event id that kaja cannot send back"), std::string::npos);
  }
  SseParser parser;
  EXPECT_TRUE(parser.feed("id: " + std::string(256, 'e') + "\n\n"));
  EXPECT_EQ(parser.lastEventId().size(), 256u);
  EXPECT_TRUE(parser.feed("id\n\n"));  // an empty id forgets the last one
  EXPECT_EQ(parser.lastEventId(), "");
  EXPECT_TRUE(parser.feed(std::string("id: a\0b\n\n", 10)));  // ignored, as the spec says
  EXPECT_EQ(parser.lastEventId(), "");
}

TEST(SseParserTest, EndlessLineOrEventStopsAtTheLimit) {
  SseParser line(1024);
  Result<std::vector<SseEvent>> out;
  for (int i = 0; i < 100 && (out = line.feed(std::string(100, 'x'))); ++i) {
  }
  EXPECT_FALSE(out);
  SseParser event(1024);
  for (int i = 0; i < 1000 && (out = event.feed("data: x\n")); ++i) {
  }
  EXPECT_FALSE(out);
}

TEST(UrlTest, ServerReferencesToOtherSchemesAreRefused) {
  auto base = parseUrl("http://127.0.0.1:8080/sse");
  ASSERT_TRUE(base);
  for (const std::string other :
       {"file:///etc/passwd", "ftp://127.0.0.1/x", "dict://127.0.0.1:11211/"}) {
    auto url = resolveUrl(*base, other);
    ASSERT_FALSE(url) << other;
    EXPECT_EQ(url.error().code, ErrorCode::kRefused) << other;
  }
  auto config = parseUrl("file:///etc/passwd");
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().code, ErrorCode::kInvalidConfig);
  for (const std::string& broken :
       std::vector<std::string>{"/a\rb", "/a\nX-Injected: 1", "/a b", std::string("/a\0b", 4)}) {
    auto url = resolveUrl(*base, broken);
    EXPECT_TRUE(!url || url->text.find_first_of(std::string("\r\n \0", 4)) == std::string::npos)
        << broken;
  }
}

// Found by tests/fuzz/url_fuzz: curl decoded "%7f" into the host and then could not parse
// the URL it wrote back.
TEST(UrlTest, HostsWithControlCharactersAreRefused) {
  auto base = parseUrl("http://127.0.0.1:8080/sse");
  ASSERT_TRUE(base);
  for (const std::string bad :
       {"http:/0-%7f.", "http://a%7fb.example/", "http://a%01b/", "http://a%20b.example/"}) {
    EXPECT_FALSE(parseUrl(bad)) << bad;
    auto resolved = resolveUrl(*base, bad);
    EXPECT_TRUE(!resolved ||
                resolved->host.find_first_of(std::string("\x7f \x01", 3)) == std::string::npos)
        << bad;
  }
  EXPECT_TRUE(parseUrl("http://a-b.example/"));
}

TEST(UrlTest, ParsesResolvesAndComparesOrigins) {
  auto base = parseUrl("HTTP://Example.COM/mcp?key=1");
  ASSERT_TRUE(base) << base.error().describe();
  EXPECT_EQ(base->host, "example.com");
  EXPECT_EQ(base->port, 80);
  EXPECT_EQ(base->path, "/mcp");
  auto relative = resolveUrl(*base, "/messages?sessionId=3");
  ASSERT_TRUE(relative);
  EXPECT_EQ(relative->path, "/messages");
  EXPECT_EQ(relative->host, "example.com");
  EXPECT_TRUE(sameOrigin(*base, *relative));
  auto other = resolveUrl(*base, "http://example.com:8080/x");
  ASSERT_TRUE(other);
  EXPECT_FALSE(sameOrigin(*base, *other));
  EXPECT_FALSE(sameOrigin(*base, *parseUrl("https://example.com/mcp")));
  EXPECT_EQ(withTrailingSlash(*base), "http://Example.COM/mcp/?key=1");
  EXPECT_EQ(withTrailingSlash(*parseUrl("http://a/b/")), "");
  auto v6 = parseUrl("http://[::1]:9000/mcp");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->hostPort(), "[::1]:9000");
  EXPECT_FALSE(parseUrl("ftp://example.com/"));
  EXPECT_FALSE(parseUrl("/relative"));
  EXPECT_FALSE(parseUrl("http://user:secret@example.com/"));
}

}  // namespace
}  // namespace kaja::core::net
