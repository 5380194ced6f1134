#pragma once

#include <cstdio>
#include <cstdlib>

/// Stops the fuzz target with a message when an invariant of the step under test does not
/// hold, so libFuzzer reports a crash and keeps the input.
#define KAJA_FUZZ_CHECK(condition, what)                                                   \
  do {                                                                                     \
    if (!(condition)) {                                                                    \
      std::fprintf(stderr, "%s:%d: invariant broken: %s (%s)\n", __FILE__, __LINE__, what, \
                   #condition);                                                            \
      std::abort();                                                                        \
    }                                                                                      \
  } while (false)
