#include "core/util/lazy_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>

namespace kaja::core::util {

Result<void> LazyLibrary::open() {
  std::call_once(once_, [this] {
    // RTLD_LOCAL: the library's names stay its own, so they never take the place of the stubs.
    handle_ = dlopen(soname_, RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* why = dlerror();
      error_ = std::string("kaja could not load ") + soname_ + " (" +
               (why != nullptr ? why : "no reason given") + "); install the Debian package " +
               package_ + " (apt-get install " + package_ + ").";
    }
  });
  if (handle_ == nullptr) return fail(ErrorCode::kInternal, error_);
  return {};
}

void* LazyLibrary::function(const char* name) {
  std::string problem;
  if (auto opened = open(); !opened) {
    problem = opened.error().message;
  } else if (void* address = dlsym(handle_, name); address != nullptr) {
    return address;
  } else {
    problem = std::string("kaja could not find ") + name + " in " + soname_ +
              ", which is older than kaja needs; upgrade the Debian package " + package_ + ".";
  }
  // The stub cannot return an error of its own: say what is wrong in one line and stop.
  problem = "kaja: " + problem + "\n";
  [[maybe_unused]] auto written = ::write(STDERR_FILENO, problem.data(), problem.size());
  std::_Exit(70);
}

bool LazyLibrary::isOpen() const { return handle_ != nullptr; }

LazyLibrary& curlLibrary() {
  static LazyLibrary library("libcurl.so.4", "libcurl4");
  return library;
}

LazyLibrary& cryptoLibrary() {
  static LazyLibrary library("libcrypto.so.3", "libssl3");
  return library;
}

LazyLibrary& archiveLibrary() {
  static LazyLibrary library("libarchive.so.13", "libarchive13");
  return library;
}

}  // namespace kaja::core::util
