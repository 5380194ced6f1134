#include "core/runner/docker_probe.h"

#include <signal.h>

#include <map>
#include <mutex>

#include "core/process/child_process.h"

namespace kaja::core {
namespace {

// Runs argv in its own process group; true when it exits 0 within `timeout`. Its output
// (one short line) stays in the pipe until the child is gone.
bool runsCleanly(const std::vector<std::string>& argv, const std::vector<EnvVar>& env,
                 std::chrono::milliseconds timeout) {
  LaunchPlan plan;
  plan.argv = argv;
  plan.env = env;
  auto child = ChildProcess::start(plan);
  if (!child) return false;
  (*child)->setGracePeriod(std::chrono::milliseconds(0));
  auto status = (*child)->waitFor(timeout);
  if (!status) {
    (*child)->killGroup(SIGKILL);
    return false;
  }
  return !status->signaled && status->code == 0;
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
