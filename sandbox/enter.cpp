// `kaja sandbox enter`: join a cgroup, then exec the confined server's command line.
#include "sandbox/enter.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/util/sys.h"
#include "core/util/unique_fd.h"

namespace kaja::sandbox {
namespace {

constexpr int kUsage = 2;
constexpr int kFailed = 126;

int usage(const char* what) {
  std::fprintf(stderr, "kaja: %s: kaja sandbox enter [--cgroup DIR]... -- /PROGRAM ARGS...\n",
               what);
  return kUsage;
}

/// Moves this process into the cgroup folder `dir`; returns errno, or 0.
int joinCgroup(const std::string& dir) {
  const std::string procs = dir + "/cgroup.procs";
  core::UniqueFd fd(
      core::retryOnEintr([&] { return ::open(procs.c_str(), O_WRONLY | O_CLOEXEC); }));
  if (!fd.valid()) return errno;
  const std::string pid = std::to_string(::getpid());
  if (core::retryOnEintr([&] { return ::write(fd.get(), pid.data(), pid.size()); }) < 0) {
    return errno;
  }
  return 0;
}

}  // namespace

int runEnter(std::span<const std::string> args) {
  std::vector<std::string> cgroups;
  std::size_t i = 0;
  for (; i < args.size() && args[i] != "--"; ++i) {
    if (args[i] != "--cgroup" || i + 1 >= args.size()) return usage("unexpected argument");
    cgroups.push_back(args[++i]);
  }
  if (i >= args.size()) return usage("missing \"--\" before the program");
  const auto program = args.subspan(i + 1);
  if (program.empty() || !program.front().starts_with('/')) {
    return usage("give the program by its absolute path");
  }
  for (const auto& dir : cgroups) {
    if (const int err = joinCgroup(dir); err != 0) {
      std::fprintf(stderr,
                   "kaja: could not join the cgroup %s (%s); is the worker still running?\n",
                   dir.c_str(), std::strerror(err));
      return kFailed;
    }
  }
  // kaja's main made itself a subreaper, which execv would keep: bwrap must not inherit it.
  ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
  std::vector<char*> argv;
  argv.reserve(program.size() + 1);
  for (const auto& arg : program) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  ::execv(argv.front(), argv.data());
  std::fprintf(stderr, "kaja: %s\n", core::syscallMessage("execv", program.front(), errno).c_str());
  return kFailed;
}

}  // namespace kaja::sandbox
