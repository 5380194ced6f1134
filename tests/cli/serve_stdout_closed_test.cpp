// kaja serve over stdio when its client closes the end it reads from.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/cli/serve_test_support.h"

extern char** environ;

namespace kaja::cli {
namespace {

// Found by an outside review: with no server running yet, kaja serve died of SIGPIPE when its
// client stopped reading, since only starting a server made kaja ignore the signal.
TEST(ServeStdoutClosedTest, AClientThatStopsReadingEndsTheSessionWithoutKillingKaja) {
  testing::ServeFixture env;
  // No ability at all, so no server starts and nothing else makes kaja ignore the signal.
  env.root.write("market/personas/empty.toml", "abilities = []\n");
  int in[2];
  int out[2];
  ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  const std::vector<std::string> args = {testing::ServeFixture::kajaBin(), "serve", "--persona",
                                         "empty"};
  std::vector<char*> argv;
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> variables = env.env();
  std::vector<char*> envp;
  for (auto& variable : variables) envp.push_back(variable.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  ::close(out[0]);  // the client stops reading before kaja answers anything
  const std::string initialize =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
      R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
      "\n";
  ASSERT_EQ(::write(in[1], initialize.data(), initialize.size()),
            static_cast<ssize_t>(initialize.size()));
  int status = 0;
  for (int i = 0; i < 60 && ::waitpid(pid, &status, WNOHANG) == 0; ++i) ::usleep(50 * 1000);
  ::close(in[1]);
  if (::waitpid(pid, &status, WNOHANG) == 0) {
    ::waitpid(pid, &status, 0);  // ended by closing its input
  }
  EXPECT_FALSE(WIFSIGNALED(status)) << "killed by signal " << WTERMSIG(status);
}

}  // namespace
}  // namespace kaja::cli
