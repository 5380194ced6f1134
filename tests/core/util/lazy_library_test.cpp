// Libraries kaja opens on first use: a missing one is named with the package to install, a
// missing function ends kaja with one line, and the real ones open and answer.
#include "core/util/lazy_library.h"

#include <curl/curl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kaja::core::util {
namespace {

using ::testing::HasSubstr;

TEST(LazyLibraryTest, AMissingLibraryIsNamedWithThePackageToInstall) {
  LazyLibrary missing("libkaja-no-such-library.so.9", "kaja-no-such-package");
  auto opened = missing.open();
  ASSERT_FALSE(opened);
  EXPECT_THAT(opened.error().message, HasSubstr("libkaja-no-such-library.so.9"));
  EXPECT_THAT(opened.error().message, HasSubstr("apt-get install kaja-no-such-package"));
  EXPECT_FALSE(missing.isOpen());
  // Asked again, it gives the same answer rather than trying forever.
  EXPECT_EQ(missing.open().error().message, opened.error().message);
}

TEST(LazyLibraryDeathTest, AStubWhoseLibraryOrFunctionIsMissingEndsKajaWithOneLine) {
  EXPECT_EXIT(
      {
        LazyLibrary missing("libkaja-no-such-library.so.9", "kaja-no-such-package");
        missing.function("anything");
      },
      ::testing::ExitedWithCode(70), "kaja: kaja could not load libkaja-no-such-library.so.9");
  EXPECT_EXIT(curlLibrary().function("curl_kaja_no_such_function"), ::testing::ExitedWithCode(70),
              "kaja could not find curl_kaja_no_such_function in libcurl.so.4, which is older "
              "than kaja needs; upgrade the Debian package libcurl4");
}

TEST(LazyLibraryTest, TheThreeLibrariesOpenAndTheirStubsReachThem) {
  for (LazyLibrary* library : {&curlLibrary(), &cryptoLibrary(), &archiveLibrary()}) {
    EXPECT_TRUE(library->open()) << library->open().error().message;
    EXPECT_TRUE(library->isOpen());
  }
  using Version = const char* (*)();
  auto version = reinterpret_cast<Version>(curlLibrary().function("curl_version"));
  EXPECT_THAT(std::string(version()), HasSubstr("libcurl/"));
  // A stub answers as the library does.
  EXPECT_STREQ(curl_easy_strerror(CURLE_OK), "No error");
  CURLU* url = curl_url();
  ASSERT_NE(url, nullptr);
  EXPECT_EQ(curl_url_set(url, CURLUPART_URL, "https://example.test:8443/a?b", 0), CURLUE_OK);
  char* port = nullptr;
  EXPECT_EQ(curl_url_get(url, CURLUPART_PORT, &port, 0), CURLUE_OK);
  EXPECT_STREQ(port, "8443");
  curl_free(port);
  curl_url_cleanup(url);
  // The variadic setter passes each kind of value: a long, a pointer, and an off_t.
  CURL* easy = curl_easy_init();
  ASSERT_NE(easy, nullptr);
  EXPECT_EQ(curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 1500L), CURLE_OK);
  EXPECT_EQ(curl_easy_setopt(easy, CURLOPT_URL, "http://127.0.0.1:9/x"), CURLE_OK);
  EXPECT_EQ(curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t{1} << 40), CURLE_OK);
  // A long reaches curl as a long: a redirect limit below -1 is refused by curl itself.
  EXPECT_EQ(curl_easy_setopt(easy, CURLOPT_MAXREDIRS, -2L), CURLE_BAD_FUNCTION_ARGUMENT);
  char* effective = nullptr;
  EXPECT_EQ(curl_easy_getinfo(easy, CURLINFO_EFFECTIVE_URL, &effective), CURLE_OK);
  EXPECT_STREQ(effective, "http://127.0.0.1:9/x");
  curl_easy_cleanup(easy);
}

}  // namespace
}  // namespace kaja::core::util
