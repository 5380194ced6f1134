#include "core/util/sys.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>

#include "core/util/unique_fd.h"

namespace kaja::core {

std::string syscallMessage(std::string_view call, std::string_view what, int err) {
  return std::string(call) + "(" + std::string(what) + "): " + std::strerror(err);
}

std::optional<std::string> readTextFile(const std::string& path) {
  // Without blocking, and from a regular file only: a FIFO put where kaja keeps a file would
  // otherwise hang it until someone writes.
  auto text = readRegularFile(path, std::numeric_limits<std::size_t>::max(), path);
  if (!text) return std::nullopt;
  return std::move(*text);
}

Result<std::string> readRegularFile(const std::string& path, std::size_t maxBytes,
                                    std::string_view shown) {
  UniqueFd fd(retryOnEintr(
      [&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY); }));
  if (!fd.valid()) {
    return fail(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                syscallMessage("open", shown, errno));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    return fail(ErrorCode::kIo, syscallMessage("fstat", shown, errno));
  }
  if (!S_ISREG(info.st_mode)) {
    return fail(ErrorCode::kUsage, std::string(shown) + " is " +
                                       (S_ISDIR(info.st_mode) ? "a folder" : "not a regular file"));
  }
  auto tooLarge = [&] {
    std::string limit = maxBytes >= (std::size_t{1} << 20) ? std::to_string(maxBytes >> 20) + " MiB"
                                                           : std::to_string(maxBytes) + " bytes";
    return fail(ErrorCode::kUsage, std::string(shown) + " is larger than " + limit);
  };
  if (static_cast<std::uintmax_t>(info.st_size) > maxBytes) return tooLarge();
  std::string text;
  char buffer[65536];
  while (true) {
    ssize_t n = retryOnEintr([&] { return ::read(fd.get(), buffer, sizeof buffer); });
    if (n < 0) return fail(ErrorCode::kIo, syscallMessage("read", shown, errno));
    if (n == 0) return text;
    if (text.size() + static_cast<size_t>(n) > maxBytes) return tooLarge();
    text.append(buffer, static_cast<size_t>(n));
  }
}

Result<void> makeDirectories(const std::string& dir, mode_t mode) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    partial = dir.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), mode) != 0 && errno != EEXIST) {
      return fail(ErrorCode::kIo, syscallMessage("mkdir", partial, errno));
    }
  }
  return {};
}

Result<void> writeFileAtomically(const std::string& path, std::string_view content, mode_t mode) {
  std::filesystem::path target(path);
  std::string dir = target.parent_path().string();
  if (auto made = makeDirectories(dir, 0700); !made) return made;
  std::random_device random;
  std::string temp = dir + "/." + target.filename().string() + ".tmp" + std::to_string(random());
  int fd = retryOnEintr(
      [&] { return ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode); });
  if (fd < 0) return fail(ErrorCode::kIo, syscallMessage("open", temp, errno));
  auto abandon = [&](std::string_view call) {
    int err = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    return fail(ErrorCode::kIo, syscallMessage(call, temp, err));
  };
  // The umask may have narrowed `mode`; a secrets file must end up exactly as asked.
  if (::fchmod(fd, mode) != 0) return abandon("fchmod");
  size_t written = 0;
  while (written < content.size()) {
    ssize_t n = retryOnEintr(
        [&] { return ::write(fd, content.data() + written, content.size() - written); });
    if (n < 0) return abandon("write");
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return abandon("fsync");
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    return fail(ErrorCode::kIo, syscallMessage("close", temp, err));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    return fail(ErrorCode::kIo, syscallMessage("rename", path, err));
  }
  int dirFd = retryOnEintr([&] { return ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
  return {};
}

Result<UniqueFd> lockExclusive(const std::string& lockFile) {
  UniqueFd lock(retryOnEintr(
      [&] { return ::open(lockFile.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600); }));
  if (!lock.valid()) return fail(ErrorCode::kIo, syscallMessage("open", lockFile, errno));
  if (retryOnEintr([&] { return ::flock(lock.get(), LOCK_EX); }) != 0) {
    return fail(ErrorCode::kIo, syscallMessage("flock", lockFile, errno));
  }
  return lock;
}

}  // namespace kaja::core
