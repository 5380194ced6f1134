// What a worker keeps of an earlier run's state folder: users' homes, but no turn's.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>

#include "sandbox/worker.h"
#include "tests/support/build_paths.h"
#include "tests/support/temp_dir.h"

namespace kaja::sandbox {
namespace {

namespace fs = std::filesystem;

TEST(SandboxWorkerStateTest, TurnHomesAnEarlierRunLeftAreRemovedUsersHomesKept) {
  kaja::testing::TempDir dir;
  const std::string state = dir.path() + "/state";
  dir.write("state/turns/alice/t1/files/home/login", "SESSION-COOKIE");
  dir.write("state/users/alice/files/home/notes", "kept");
  // A link a server planted in its turn home is removed, not followed.
  dir.write("outside/precious", "do not touch");
  fs::create_symlink(dir.path() + "/outside", state + "/turns/alice/t1/files/home/link");
  boost::asio::io_context io;
  WorkerOptions options;
  options.isolate = false;
  options.stateDir = state;
  options.kaja = std::string(kaja::test::binDir()) + "/kaja";
  options.key.bytes = std::string(32, 'k');
  auto worker = Worker::create(io, std::move(options));
  ASSERT_TRUE(worker) << worker.error().message;
  EXPECT_FALSE(fs::exists(state + "/turns"));
  EXPECT_TRUE(fs::exists(state + "/users/alice/files/home/notes"));
  EXPECT_EQ(kaja::testing::readFile(dir.path() + "/outside/precious"), "do not touch");
}

}  // namespace
}  // namespace kaja::sandbox
