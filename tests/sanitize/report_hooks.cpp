// Linked into every program of a sanitizer tree (tests/sanitize/sanitize.cmake). kaja hands its
// servers a scrubbed environment (no ASAN_OPTIONS), and a test may pass over a child that died
// once its exit code or output looks as expected, so the options are compiled in and every
// report is also written to a file in KAJA_SANITIZE_REPORT_DIR, which tests/sanitize/run
// checks after the suite: a report fails the run whichever process made it.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

// halt_on_error and abort_on_error: the first report ends the process with SIGABRT.
// log_path (with log_exe_name, the runtime appends .<program>.<pid>): the whole report goes to
// a file of its own instead of a stderr a parent may swallow.
#define KAJA_REPORT_PATH "log_path=" KAJA_SANITIZE_REPORT_DIR "/report:log_exe_name=1"

#if defined(__SANITIZE_ADDRESS__)
extern "C" __attribute__((used, visibility("default"))) const char* __asan_default_options() {
  return "halt_on_error=1:abort_on_error=1:detect_leaks=1:" KAJA_REPORT_PATH;
}
#endif

#if defined(__SANITIZE_THREAD__)
extern "C" __attribute__((used, visibility("default"))) const char* __tsan_default_options() {
  return "halt_on_error=1:abort_on_error=1:second_deadlock_stack=1:" KAJA_REPORT_PATH;
}
#endif

#if defined(KAJA_SANITIZE_UNDEFINED)
extern "C" __attribute__((used, visibility("default"))) const char* __ubsan_default_options() {
  return "halt_on_error=1:abort_on_error=1:print_stacktrace=1";
}

extern "C" void __ubsan_get_current_report_data(const char** kind, const char** message,
                                                const char** file, unsigned* line, unsigned* column,
                                                char** address);

// g++ 12's UBSan, next to ASan, writes its reports to stderr whatever log_path says, so each
// one is also noted here, one line per report, with the place of the undefined behaviour.
// Plain system calls: the process is about to abort.
extern "C" __attribute__((used, visibility("default"))) void __ubsan_on_report() {
  const char* kind = "";
  const char* message = "";
  const char* file = "";
  unsigned line = 0;
  unsigned column = 0;
  char* address = nullptr;
  __ubsan_get_current_report_data(&kind, &message, &file, &line, &column, &address);
  char path[4096];
  std::snprintf(path, sizeof path, "%s/ubsan.%s.%d", KAJA_SANITIZE_REPORT_DIR,
                program_invocation_short_name, static_cast<int>(::getpid()));
  char text[4096];
  const int size =
      std::snprintf(text, sizeof text, "UndefinedBehaviorSanitizer %s: %s at %s:%u:%u\n", kind,
                    message, file, line, column);
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (size > 0) {
    [[maybe_unused]] const ssize_t written = ::write(fd, text, static_cast<std::size_t>(size));
  }
  ::close(fd);
}
#endif
