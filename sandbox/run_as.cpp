// Whom a confined server runs as, and the switch to that user.
#include "sandbox/run_as.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "core/util/sys.h"
#include "core/util/unique_fd.h"

namespace kaja::sandbox {
namespace {

using core::ErrorCode;

constexpr int kCouldNotDrop = 120;  // the child's exit code when it could not become `who`

std::optional<std::uint32_t> number(std::string_view text) {
  std::uint32_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

/// Looks up the user `given` names (name, "UID" or "UID:GID"), without judging it.
core::Result<RunAs> lookUp(const std::string& given) {
  const auto colon = given.find(':');
  const auto uid = number(std::string_view(given).substr(0, colon));
  if (uid) {
    RunAs who{*uid, *uid, given};
    if (colon != std::string::npos) {
      const auto gid = number(std::string_view(given).substr(colon + 1));
      if (!gid) {
        return core::fail(ErrorCode::kUsage,
                          "--run-as takes a user name, UID or UID:GID, not \"" + given + "\"");
      }
      who.gid = *gid;
    } else if (const passwd* entry = ::getpwuid(*uid)) {
      who.gid = entry->pw_gid;
    }
    return who;
  }
  if (colon != std::string::npos || given.empty()) {
    return core::fail(ErrorCode::kUsage,
                      "--run-as takes a user name, UID or UID:GID, not \"" + given + "\"");
  }
  const passwd* entry = ::getpwnam(given.c_str());
  if (entry == nullptr) {
    return core::fail(ErrorCode::kUsage, "there is no user \"" + given +
                                             "\" on this host; give --run-as an existing "
                                             "unprivileged user, or UID:GID");
  }
  return RunAs{entry->pw_uid, entry->pw_gid, given};
}

}  // namespace

core::Result<std::optional<RunAs>> resolveRunAs(const std::string& given, uid_t euid) {
  if (given.empty() && euid != 0) return std::nullopt;
  auto who = lookUp(given.empty() ? kDefaultRunAs : given);
  if (!who) return std::unexpected(who.error());
  if (who->uid == 0 || who->gid == 0) {
    return core::fail(ErrorCode::kUsage,
                      "kaja will not run sandboxed servers as root (\"" + who->name +
                          "\"): a server's root is the host's root; give --run-as an "
                          "unprivileged user (the default for a root worker is nobody)");
  }
  if (euid == 0) return who;
  if (who->uid == euid && who->gid == ::getegid()) return std::nullopt;
  return core::fail(ErrorCode::kUsage,
                    "only a worker started as root can run its servers as another user (\"" +
                        who->name + "\"); drop --run-as, or start the worker as that user");
}

std::optional<RunAs> parseUidGid(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  const auto uid = number(std::string_view(text).substr(0, colon));
  const auto gid = number(std::string_view(text).substr(colon + 1));
  if (!uid || !gid || *uid == 0 || *gid == 0) return std::nullopt;
  return RunAs{*uid, *gid, text};
}

const char* dropPrivileges(const RunAs& who) {
  if (who.uid == 0 || who.gid == 0) {
    errno = EINVAL;
    return "run as root";
  }
  if (::setgroups(0, nullptr) != 0) return "setgroups";
  if (::setgid(who.gid) != 0) return "setgid";
  if (::setuid(who.uid) != 0) return "setuid";
  if (::getuid() != who.uid || ::geteuid() != who.uid || ::getgid() != who.gid ||
      ::getegid() != who.gid) {
    errno = EPERM;
    return "getuid";
  }
  // The switch must be for good: no saved uid or capability may lead back to root.
  if (::setuid(0) == 0 || ::setgid(0) == 0) {
    errno = EPERM;
    return "setuid(0) after the switch";
  }
  return "";
}

core::Result<std::vector<bool>> accessibleTo(const RunAs& who,
                                             const std::vector<std::string>& paths, int mode) {
  int pipe[2];
  if (::pipe2(pipe, O_CLOEXEC) != 0) {
    return core::fail(ErrorCode::kIo, core::syscallMessage("pipe2", "run-as", errno));
  }
  core::UniqueFd reader(pipe[0]);
  core::UniqueFd writer(pipe[1]);
  const pid_t pid = ::fork();
  if (pid < 0) return core::fail(ErrorCode::kIo, core::syscallMessage("fork", "run-as", errno));
  if (pid == 0) {
    if (*dropPrivileges(who) != '\0') ::_exit(kCouldNotDrop);
    for (const auto& path : paths) {
      const char answer = ::access(path.c_str(), mode) == 0 ? 'y' : 'n';
      if (core::retryOnEintr([&] { return ::write(writer.get(), &answer, 1); }) != 1) {
        ::_exit(kCouldNotDrop);
      }
    }
    ::_exit(0);
  }
  writer.reset();
  std::string answers;
  char buffer[256];
  for (;;) {
    const auto got =
        core::retryOnEintr([&] { return ::read(reader.get(), buffer, sizeof buffer); });
    if (got <= 0) break;
    answers.append(buffer, static_cast<std::size_t>(got));
  }
  int status = 0;
  if (core::retryOnEintr([&] { return ::waitpid(pid, &status, 0); }) < 0) {
    return core::fail(ErrorCode::kIo, core::syscallMessage("waitpid", "run-as", errno));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || answers.size() != paths.size()) {
    return core::fail(ErrorCode::kIo, "the worker could not become the user \"" + who.name +
                                          "\" that its servers run as; check --run-as");
  }
  std::vector<bool> out;
  for (const char answer : answers) out.push_back(answer == 'y');
  return out;
}

}  // namespace kaja::sandbox
