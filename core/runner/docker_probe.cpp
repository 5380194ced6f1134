#include "core/runner/docker_probe.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <thread>

#include "core/util/sys.h"

namespace kaja::core {
namespace {

// Runs argv with stdio on /dev/null in its own process group; true when it exits 0 in time.
bool runsCleanly(const std::vector<std::string>& argv, const std::vector<EnvVar>& env,
                 std::chrono::milliseconds timeout) {
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> envStrings;
  for (const auto& var : env) envStrings.push_back(var.name + "=" + var.value);
  std::vector<char*> envp;
  for (auto& entry : envStrings) envp.push_back(entry.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd = 0; fd <= 2; ++fd) {
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return false;

  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (true) {
    pid_t done = retryOnEintr([&] { return ::waitpid(pid, &status, WNOHANG); });
    if (done == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (done < 0 || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(-pid, SIGKILL);
  retryOnEintr([&] { return ::waitpid(pid, &status, 0); });
  return false;
}

}  // namespace

bool dockerEngineAnswers(const std::string& dockerPath, const std::vector<EnvVar>& env,
                         std::chrono::milliseconds timeout) {
  static std::mutex mutex;
  static std::map<std::string, bool> cache;
  std::lock_guard lock(mutex);
  if (auto it = cache.find(dockerPath); it != cache.end()) return it->second;
  bool answers =
      runsCleanly({dockerPath, "version", "--format", "{{.Server.Version}}"}, env, timeout);
  cache[dockerPath] = answers;
  return answers;
}

}  // namespace kaja::core
