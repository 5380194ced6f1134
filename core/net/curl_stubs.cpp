// libcurl's functions as kaja calls them: each opens libcurl.so.4 on its first call
// (core/util/lazy_library.h), so a gateway of local servers never maps libcurl and the thirty
// libraries it needs.
#include <curl/curl.h>

#include <cstdarg>
#include <type_traits>

#include "core/util/lazy_library.h"

namespace {
kaja::core::util::LazyLibrary& curl() { return kaja::core::util::curlLibrary(); }
}  // namespace

KAJA_LAZY_FUNCTION(curl(), CURLcode, curl_global_init, (long flags), (flags))
KAJA_LAZY_FUNCTION(curl(), CURL*, curl_easy_init, (void), ())
KAJA_LAZY_FUNCTION(curl(), void, curl_easy_cleanup, (CURL * handle), (handle))
KAJA_LAZY_FUNCTION(curl(), CURLcode, curl_easy_pause, (CURL * handle, int bitmask),
                   (handle, bitmask))
KAJA_LAZY_FUNCTION(curl(), const char*, curl_easy_strerror, (CURLcode code), (code))
KAJA_LAZY_FUNCTION(curl(), void, curl_free, (void* pointer), (pointer))
KAJA_LAZY_FUNCTION(curl(), CURLM*, curl_multi_init, (void), ())
KAJA_LAZY_FUNCTION(curl(), CURLMcode, curl_multi_cleanup, (CURLM * multi), (multi))
KAJA_LAZY_FUNCTION(curl(), CURLMcode, curl_multi_add_handle, (CURLM * multi, CURL* handle),
                   (multi, handle))
KAJA_LAZY_FUNCTION(curl(), CURLMcode, curl_multi_remove_handle, (CURLM * multi, CURL* handle),
                   (multi, handle))
KAJA_LAZY_FUNCTION(curl(), CURLMsg*, curl_multi_info_read, (CURLM * multi, int* queued),
                   (multi, queued))
KAJA_LAZY_FUNCTION(curl(), CURLMcode, curl_multi_perform, (CURLM * multi, int* running),
                   (multi, running))
KAJA_LAZY_FUNCTION(curl(), CURLMcode, curl_multi_poll,
                   (CURLM * multi, struct curl_waitfd extra[], unsigned int count, int timeoutMs,
                    int* ready),
                   (multi, extra, count, timeoutMs, ready))
KAJA_LAZY_FUNCTION(curl(), CURLMcode, curl_multi_wakeup, (CURLM * multi), (multi))
KAJA_LAZY_FUNCTION(curl(), struct curl_slist*, curl_slist_append,
                   (struct curl_slist * list, const char* text), (list, text))
KAJA_LAZY_FUNCTION(curl(), void, curl_slist_free_all, (struct curl_slist * list), (list))
KAJA_LAZY_FUNCTION(curl(), CURLU*, curl_url, (void), ())
KAJA_LAZY_FUNCTION(curl(), void, curl_url_cleanup, (CURLU * url), (url))
KAJA_LAZY_FUNCTION(curl(), CURLUcode, curl_url_get,
                   (CURLU * url, CURLUPart what, char** part, unsigned int flags),
                   (url, what, part, flags))
KAJA_LAZY_FUNCTION(curl(), CURLUcode, curl_url_set,
                   (CURLU * url, CURLUPart what, const char* part, unsigned int flags),
                   (url, what, part, flags))

// The two variadic functions take exactly one more argument, whose type the option's number
// says (curl reads it the same way): a long or a curl_off_t, which are one type here, or a
// pointer to data or code. The enum before `...` is curl's own signature.
static_assert(std::is_same_v<curl_off_t, long>, "curl_off_t is read as a long");

extern "C" CURLcode curl_easy_setopt(CURL* handle, CURLoption option, ...) {
  using Real = CURLcode (*)(CURL*, CURLoption, ...);
  static const Real real = reinterpret_cast<Real>(curl().function("curl_easy_setopt"));
  va_list rest;
  va_start(rest, option);  // NOLINT(clang-diagnostic-varargs)
  CURLcode code = CURLE_OK;
  const int kind = static_cast<int>(option);
  // The branches read different types, though the check sees them as one.
  // NOLINTNEXTLINE(bugprone-branch-clone)
  if (kind < CURLOPTTYPE_OBJECTPOINT || (kind >= CURLOPTTYPE_OFF_T && kind < CURLOPTTYPE_BLOB)) {
    code = real(handle, option, va_arg(rest, long));
  } else {
    code = real(handle, option, va_arg(rest, void*));
  }
  va_end(rest);
  return code;
}

extern "C" CURLcode curl_easy_getinfo(CURL* handle, CURLINFO info, ...) {
  using Real = CURLcode (*)(CURL*, CURLINFO, ...);
  static const Real real = reinterpret_cast<Real>(curl().function("curl_easy_getinfo"));
  va_list rest;
  va_start(rest, info);  // NOLINT(clang-diagnostic-varargs)
  const CURLcode code = real(handle, info, va_arg(rest, void*));
  va_end(rest);
  return code;
}
