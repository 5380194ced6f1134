# Compile and link options of a sanitizer tree (KAJA_SANITIZE=address,undefined or thread),
# set before kaja's libraries are defined so that every program of the tree is built with
# them: kaja, kaja_tests and the helper programs in bin/. The CLI tests that start bin/kaja
# therefore check kaja's own process too. See tests/sanitize/run.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  message(FATAL_ERROR "KAJA_SANITIZE is set up for g++, the compiler kaja is built with")
endif()
if(NOT KAJA_SANITIZE MATCHES "^(address,undefined|address|undefined|thread)$")
  message(FATAL_ERROR "KAJA_SANITIZE must be address,undefined or thread, not "
                      "'${KAJA_SANITIZE}'")
endif()
if(KAJA_FUZZ)
  message(FATAL_ERROR "KAJA_SANITIZE and KAJA_FUZZ each pick the sanitizers: use one")
endif()
# -fno-sanitize-recover: a UBSan finding ends the process like an ASan one, instead of
# printing and carrying on, so that a test cannot pass over it. The frame pointers give
# whole stacks at -O2 without the slow unwinder.
add_compile_options(-fsanitize=${KAJA_SANITIZE} -fno-sanitize-recover=all
                    -fno-omit-frame-pointer)
add_link_options(-fsanitize=${KAJA_SANITIZE} -fno-sanitize-recover=all)
string(REPLACE "," ";" KAJA_SANITIZE_LIST "${KAJA_SANITIZE}")

# The options compiled into every program, and the folder each report is written to (see
# report_hooks.cpp). The link_libraries call comes after the hooks' own library, which must
# not link itself, and before everything else.
set(KAJA_SANITIZE_REPORT_DIR ${CMAKE_BINARY_DIR}/sanitizer-reports)
file(MAKE_DIRECTORY ${KAJA_SANITIZE_REPORT_DIR})
add_library(kaja_sanitize_hooks OBJECT ${CMAKE_SOURCE_DIR}/tests/sanitize/report_hooks.cpp)
target_compile_definitions(kaja_sanitize_hooks PRIVATE
  KAJA_SANITIZE_REPORT_DIR="${KAJA_SANITIZE_REPORT_DIR}")
if("undefined" IN_LIST KAJA_SANITIZE_LIST)
  target_compile_definitions(kaja_sanitize_hooks PRIVATE KAJA_SANITIZE_UNDEFINED)
endif()
link_libraries(kaja_sanitize_hooks)
