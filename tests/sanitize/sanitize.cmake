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
