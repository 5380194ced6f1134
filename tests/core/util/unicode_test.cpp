#include "core/util/unicode.h"

#include <gtest/gtest.h>

namespace kaja::core::unicode {
namespace {

TEST(Unicode, NfcComposesACombiningAccent) {
  EXPECT_EQ(toNfc("Cafe\xcc\x81"), "Caf\xc3\xa9");
  EXPECT_EQ(toNfc("Caf\xc3\xa9"), "Caf\xc3\xa9");
}

TEST(Unicode, NfkcCasefoldFoldsCompatibilityAndSingletonCharacters) {
  EXPECT_EQ(nfkcCasefold("\xe2\x84\xaaids"), "kids");         // U+212A KELVIN SIGN
  EXPECT_EQ(nfkcCasefold("\xef\xbc\xab\xef\xbd\x89"), "ki");  // fullwidth K, i
  EXPECT_EQ(nfkcCasefold("Ca\xef\xac\x81"), "cafi");          // U+FB01 ligature fi
  EXPECT_EQ(nfkcCasefold("a\xe2\x80\x8b"
                         "b"),
            "ab");  // zero-width space is ignorable
}

TEST(Unicode, SkeletonMatchesLookAlikes) {
  // Cyrillic а (U+0430) and Latin a share a skeleton; so do Armenian օ (U+0585) and o.
  EXPECT_EQ(confusableSkeleton("p\xd0\xb0th"), confusableSkeleton("path"));
  EXPECT_EQ(confusableSkeleton("g\xd6\x85"
                               "od"),
            confusableSkeleton("good"));
  EXPECT_NE(confusableSkeleton("path"), confusableSkeleton("bath"));
}

TEST(Unicode, IllFormedBytesBecomeReplacementCharacters) {
  EXPECT_TRUE(isValidUtf8("plain \xc3\xa9"));
  EXPECT_FALSE(isValidUtf8("\xff"));
  EXPECT_FALSE(isValidUtf8("\xed\xa0\xbd"));  // an encoded surrogate
  EXPECT_FALSE(isValidUtf8("\xc0\xaf"));      // an overlong '/'
  EXPECT_EQ(sanitizeUtf8("a\xff"
                         "b"),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_TRUE(isValidUtf8(sanitizeUtf8("\xed\xa0\xbd\xc0\xaf\xfe")));
  EXPECT_EQ(toNfc("x\xff"), "x\xef\xbf\xbd");
}

}  // namespace
}  // namespace kaja::core::unicode
