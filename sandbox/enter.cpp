// `kaja sandbox enter`: join a cgroup, then exec the confined server's command line.
#include "sandbox/enter.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "core/util/sys.h"
#include "core/util/unique_fd.h"
#include "sandbox/run_as.h"

namespace kaja::sandbox {
namespace {

constexpr int kUsage = 2;
constexpr int kFailed = 126;

int usage(const char* what) {
  std::fprintf(stderr,
               "kaja: %s: kaja sandbox enter [--cgroup DIR]... [--user UID:GID] -- /PROGRAM "
               "ARGS...\n",
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

/// Becomes `who` for good and keeps dying with the parent, which the switch forgot.
/// Returns 0, or kFailed after one sentence on stderr.
int becomeUser(const RunAs& who) {
  const pid_t parent = ::getppid();
  if (const char* failed = dropPrivileges(who); *failed != '\0') {
    std::fprintf(stderr, "kaja: could not run the server as %s: %s\n", who.name.c_str(),
                 core::syscallMessage(failed, who.name, errno).c_str());
    return kFailed;
  }
  // Changing credentials clears the parent-death signal the launcher set.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || ::getppid() != parent) {
    std::fprintf(stderr, "kaja: the worker went away before the server started\n");
    return kFailed;
  }
  return 0;
}

}  // namespace

int runEnter(std::span<const std::string> args) {
  std::vector<std::string> cgroups;
  std::optional<RunAs> user;
  std::size_t i = 0;
  for (; i < args.size() && args[i] != "--"; ++i) {
    if (i + 1 >= args.size()) return usage("unexpected argument");
    if (args[i] == "--cgroup") {
      cgroups.push_back(args[++i]);
    } else if (args[i] == "--user" && !user) {
      user = parseUidGid(args[++i]);
      if (!user) return usage("--user takes UID:GID, neither of them 0");
    } else {
      return usage("unexpected argument");
    }
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
  // Joined as the worker's user (the group is its), then the switch, before bwrap runs.
  if (user) {
    if (const int failed = becomeUser(*user); failed != 0) return failed;
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
