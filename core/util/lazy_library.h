#pragma once

// Shared libraries kaja opens the first time it needs them, not when it starts.
//
// libcurl, libarchive and OpenSSL's libcrypto, with the thirty-odd libraries they pull in, cost
// `kaja serve` about 6 MB of memory when the loader maps and relocates them at start, yet a
// gateway of local servers never calls them. kaja is therefore not linked against them. Each
// function kaja calls has a stub of the same name (core/net/curl_stubs.cpp,
// core/util/crypto_stubs.cpp, marketplace/sync/archive_stubs.cpp) that opens the library on
// its first call and jumps to the real function from then on. A function with no stub fails
// the link, so a new call cannot slip past this.
//
// The Debian package depends on the libraries by name (packaging/install.cmake), since
// dpkg-shlibdeps cannot see a library that is opened at run time.

#include <atomic>
#include <mutex>
#include <string>

#include "core/error.h"

namespace kaja::core::util {

class LazyLibrary {
 public:
  /// `soname` is the file the loader looks for (libcurl.so.4); `package` the Debian package
  /// that ships it, named when it is missing.
  constexpr LazyLibrary(const char* soname, const char* package) noexcept
      : soname_(soname), package_(package) {}
  LazyLibrary(const LazyLibrary&) = delete;
  LazyLibrary& operator=(const LazyLibrary&) = delete;

  /// Opens the library unless it is open already. The error says which package to install.
  Result<void> open();

  /// The address of the function `name`. A library or function that cannot be found ends kaja
  /// with one line naming the package: the stubs have no other way to fail, and the package
  /// declares the library, so only a broken installation gets here.
  void* function(const char* name);

  /// Whether open() has succeeded (for tests and benchmarks).
  [[nodiscard]] bool isOpen() const;

 private:
  const char* soname_;
  const char* package_;
  std::once_flag once_;
  std::atomic<void*> handle_{nullptr};
  std::string error_;
};

/// The three libraries kaja opens lazily.
LazyLibrary& curlLibrary();
LazyLibrary& cryptoLibrary();
LazyLibrary& archiveLibrary();

}  // namespace kaja::core::util

/// Defines `name`, a C function of `library` with the parameters `params` (with names) called
/// with `args`, as a stub that opens the library on its first call. The declaration in the
/// library's own header must agree, or the stub does not compile. (`result` and `params` are a
/// type and a parameter list, which cannot be put in parentheses.)
// NOLINTBEGIN(bugprone-macro-parentheses)
#define KAJA_LAZY_FUNCTION(library, result, name, params, args)                 \
  extern "C" result name params {                                               \
    using Real = result(*) params;                                              \
    static const Real real = reinterpret_cast<Real>((library).function(#name)); \
    return real args;                                                           \
  }
// NOLINTEND(bugprone-macro-parentheses)
