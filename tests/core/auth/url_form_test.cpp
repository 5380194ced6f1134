#include "core/auth/url_form.h"

#include <gtest/gtest.h>

#include <string>

namespace kaja::core::auth {
namespace {

TEST(UrlFormTest, PercentEncodeKeepsOnlyUnreserved) {
  for (int byte = 0; byte < 256; ++byte) {
    const std::string one(1, static_cast<char>(byte));
    const std::string encoded = percentEncode(one);
    const bool unreserved = (byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') ||
                            (byte >= '0' && byte <= '9') || byte == '-' || byte == '.' ||
                            byte == '_' || byte == '~';
    if (unreserved) {
      EXPECT_EQ(encoded, one) << byte;
    } else {
      static constexpr char kHex[] = "0123456789ABCDEF";
      const std::string expected = {'%', kHex[byte >> 4], kHex[byte & 15]};
      EXPECT_EQ(encoded, expected) << byte;
    }
  }
}

TEST(UrlFormTest, EveryByteRoundTripsThroughParseQuery) {
  std::string all;
  for (int byte = 0; byte < 256; ++byte) all += static_cast<char>(byte);
  // As a name and as a value, each byte on its own and all of them at once.
  for (int byte = 0; byte < 256; ++byte) {
    const std::string one(1, static_cast<char>(byte));
    auto parsed = parseQuery(encodeForm({{one, one + "v" + one}}));
    ASSERT_EQ(parsed.size(), 1u) << byte;
    EXPECT_EQ(parsed.begin()->first, one) << byte;
    EXPECT_EQ(parsed.begin()->second, one + "v" + one) << byte;
  }
  auto parsed = parseQuery(encodeForm({{"all", all}, {all, "x"}}));
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed["all"], all);
  EXPECT_EQ(parsed[all], "x");
}

TEST(UrlFormTest, EncodedFormHasNoSeparatorsInsideFields) {
  const std::string form = encodeForm({{"a&b=c", "d&e=f+g h"}, {"x", ""}});
  EXPECT_EQ(form, "a%26b%3Dc=d%26e%3Df%2Bg%20h&x=");
  auto parsed = parseQuery(form);
  EXPECT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed["a&b=c"], "d&e=f+g h");
  EXPECT_EQ(parsed["x"], "");
  EXPECT_EQ(encodeForm({}), "");
}

TEST(UrlFormTest, PlusIsASpaceAndEncodedPlusIsAPlus) {
  auto parsed = parseQuery("a=1+2&b=1%2B2&c=++&d+e=f");
  EXPECT_EQ(parsed["a"], "1 2");
  EXPECT_EQ(parsed["b"], "1+2");
  EXPECT_EQ(parsed["c"], "  ");
  EXPECT_EQ(parsed["d e"], "f");
}

TEST(UrlFormTest, MalformedEscapesAreKeptAsWritten) {
  auto parsed = parseQuery("a=%&b=%4&c=%zz&d=%4g&e=%%41&f=100%&g=%g4&h=%41");
  EXPECT_EQ(parsed["a"], "%");
  EXPECT_EQ(parsed["b"], "%4");
  EXPECT_EQ(parsed["c"], "%zz");
  EXPECT_EQ(parsed["d"], "%4g");
  EXPECT_EQ(parsed["e"], "%A");
  EXPECT_EQ(parsed["f"], "100%");
  EXPECT_EQ(parsed["g"], "%g4");
  EXPECT_EQ(parsed["h"], "A");
  // An escape at the very end of the query, and one cut short by it.
  EXPECT_EQ(parseQuery("k=%41")["k"], "A");
  EXPECT_EQ(parseQuery("k=%4")["k"], "%4");
  EXPECT_EQ(parseQuery("k=%")["k"], "%");
  // Lower-case hex is read too.
  EXPECT_EQ(parseQuery("k=%2f%2F")["k"], "//");
}

TEST(UrlFormTest, ParseQueryEdgeCases) {
  EXPECT_TRUE(parseQuery("").empty());
  EXPECT_TRUE(parseQuery("&&&").empty());
  auto parsed = parseQuery("state=first&state=second&code&=v&x==y");
  EXPECT_EQ(parsed["state"], "first") << "a name given twice keeps its first value";
  EXPECT_EQ(parsed.at("code"), "");
  EXPECT_EQ(parsed.at(""), "v");
  EXPECT_EQ(parsed.at("x"), "=y");
  // A decoded '&' or '=' does not split a field.
  auto escaped = parseQuery("state=a%26code%3Devil");
  EXPECT_EQ(escaped.size(), 1u);
  EXPECT_EQ(escaped["state"], "a&code=evil");
  // A NUL stays inside the value.
  EXPECT_EQ(parseQuery("k=a%00b")["k"], std::string("a\0b", 3));
}

}  // namespace
}  // namespace kaja::core::auth
