# Compile options of the fuzz tree (KAJA_FUZZ=ON), set before kaja's libraries are defined so
# that every one of them is built with ASan, UBSan and libFuzzer's coverage hooks.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "KAJA_FUZZ needs clang (libFuzzer): configure a separate tree with "
                      "CC=clang-16 CXX=clang++-16 cmake -S . -B build-fuzz -DKAJA_FUZZ=ON")
endif()
# libstdc++ 12 offers <expected> only when __cpp_concepts >= 202002, and clang 16 reports
# 201907 although it handles what <expected> needs (the same as .ci/tidy).
add_compile_options(-Wno-builtin-macro-redefined -U__cpp_concepts -D__cpp_concepts=202002L)
# Any sanitizer report is a crash, so libFuzzer stops and keeps the input.
add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                    -fsanitize=fuzzer-no-link -fno-omit-frame-pointer)
add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
