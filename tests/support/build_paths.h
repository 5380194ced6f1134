// Where this tree's sources and built programs are, for the tests and benchmarks. The paths
// are compiled into one generated file of the build folder (kaja_build_paths.cpp) instead of
// every compile command, so that a clone in another folder compiles its tests to the same
// objects and ccache reuses what an earlier clone built.
#pragma once

namespace kaja::test {

// The checkout, e.g. "/home/me/kaja".
const char* sourceDir();
// The build folder's bin/, where kaja and the test programs are.
const char* binDir();

}  // namespace kaja::test
