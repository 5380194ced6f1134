#include "core/policy/backup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "core/util/quote.h"
#include "core/util/sys.h"
#include "core/util/unique_fd.h"
#include "core/util/utc_digits.h"

namespace kaja::core::policy {
namespace {

constexpr size_t kStampLength = 20;  // "20261129T193000.123Z"

std::unexpected<Error> ioError(std::string message) {
  return fail(ErrorCode::kIo, std::move(message), {}, "rule: " + std::string(rule::kBackup));
}

bool allDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string parentOf(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == 0 || slash == std::string::npos ? std::string("/") : path.substr(0, slash);
}

Result<void> writeAll(int fd, const char* data, size_t size, const std::string& what) {
  while (size > 0) {
    ssize_t n = retryOnEintr([&] { return ::write(fd, data, size); });
    if (n < 0) return fail(ErrorCode::kIo, syscallMessage("write", what, errno));
    data += n;
    size -= static_cast<size_t>(n);
  }
  return {};
}

// Copies everything readable from `source` into a new temporary file in `dir` (mkostemp,
// so 0600 and O_CLOEXEC), fsyncs it and returns its name. The caller links or renames it.
Result<std::string> copyToTemp(int source, const std::string& sourceName, const std::string& dir) {
  std::string temp = dir + "/.kaja-copy-XXXXXX";
  UniqueFd out(::mkostemp(temp.data(), O_CLOEXEC));
  if (!out.valid()) return fail(ErrorCode::kIo, syscallMessage("mkostemp", temp, errno));
  auto abandon = [&](Error error) {
    ::unlink(temp.c_str());
    return std::unexpected<Error>(std::move(error));
  };
  char buffer[64 * 1024];
  while (true) {
    ssize_t n = retryOnEintr([&] { return ::read(source, buffer, sizeof buffer); });
    if (n < 0) return abandon({ErrorCode::kIo, syscallMessage("read", sourceName, errno), {}, {}});
    if (n == 0) break;
    if (auto wrote = writeAll(out.get(), buffer, static_cast<size_t>(n), temp); !wrote) {
      return abandon(wrote.error());
    }
  }
  if (::fsync(out.get()) != 0) {
    return abandon({ErrorCode::kIo, syscallMessage("fsync", temp, errno), {}, {}});
  }
  int fd = out.release();
  if (::close(fd) != 0) {
    return abandon({ErrorCode::kIo, syscallMessage("close", temp, errno), {}, {}});
  }
  return temp;
}

void syncDirectory(const std::string& dir) {
  UniqueFd fd(
      retryOnEintr([&] { return ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); }));
  if (fd.valid()) ::fsync(fd.get());
}

// Orders "…123Z" < "…123Z-1" < "…123Z-2" < "…123Z-10".
bool stampBefore(const std::string& a, const std::string& b) {
  std::string_view baseA = std::string_view(a).substr(0, kStampLength);
  std::string_view baseB = std::string_view(b).substr(0, kStampLength);
  if (baseA != baseB) return baseA < baseB;
  auto suffix = [](const std::string& s) {
    unsigned long long value = 0;
    if (s.size() > kStampLength)
      std::from_chars(s.data() + kStampLength + 1, s.data() + s.size(), value);
    return value;
  };
  return suffix(a) < suffix(b);
}

}  // namespace

std::string formatBackupStamp(std::chrono::system_clock::time_point time) {
  auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  if (millis % 1000 < 0) --seconds;  // before 1970: keep the milliseconds positive
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char text[80];
  std::snprintf(text, sizeof text, "%04d%02d%02dT%02d%02d%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(((millis % 1000) + 1000) % 1000));
  return text;
}

bool isBackupStamp(std::string_view stamp) {
  if (stamp.size() < kStampLength) return false;
  std::string_view base = stamp.substr(0, kStampLength);
  bool baseOk = allDigits(base.substr(0, 8)) && base[8] == 'T' && allDigits(base.substr(9, 6)) &&
                base[15] == '.' && allDigits(base.substr(16, 3)) && base[19] == 'Z';
  if (!baseOk) return false;
  std::string_view rest = stamp.substr(kStampLength);
  return rest.empty() || (rest.size() <= 10 && rest[0] == '-' && allDigits(rest.substr(1)));
}

Result<void> checkBackupStamp(std::string_view stamp) {
  if (isBackupStamp(stamp)) return {};
  return fail(ErrorCode::kUsage, quoteForMessage(stamp) + " is not a backup stamp such as " +
                                     "20261129T193000.123Z; list_backups shows them.");
}

std::optional<std::chrono::system_clock::time_point> parseBackupStamp(std::string_view stamp) {
  if (!isBackupStamp(stamp)) return std::nullopt;
  return utcFromDigits(stamp, {0, 4, 6, 9, 11, 13, 16});
}

BackupStore::BackupStore(std::string backupsDir, Clock clock, TreeLimits treeLimits)
    : backupsDir_(std::move(backupsDir)), clock_(std::move(clock)), treeLimits_(treeLimits) {}

std::string BackupStore::folderFor(const std::string& resolvedPath) const {
  return backupsDir_ + (resolvedPath.starts_with("/") ? "" : "/") + resolvedPath;
}

Result<std::optional<std::string>> BackupStore::backupFile(const std::string& resolvedPath) const {
  UniqueFd source(retryOnEintr([&] {
    return ::open(resolvedPath.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  }));
  if (!source.valid()) {
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<std::string>();
    return ioError(syscallMessage("open", resolvedPath, errno));
  }
  struct stat info {};
  if (::fstat(source.get(), &info) != 0)
    return ioError(syscallMessage("fstat", resolvedPath, errno));
  if (!S_ISREG(info.st_mode)) return std::optional<std::string>();
  std::string dir = folderFor(resolvedPath);
  if (auto made = makeDirectories(dir, 0700); !made) return ioError(made.error().message);
  auto temp = copyToTemp(source.get(), resolvedPath, dir);
  if (!temp) return ioError(temp.error().message);
  std::string stamp = formatBackupStamp(clock_());
  // link() refuses an existing name, so two copies in one millisecond both survive.
  for (int attempt = 0; attempt < 1000; ++attempt) {
    std::string name = attempt == 0 ? stamp : stamp + "-" + std::to_string(attempt);
    std::string stored = dir + "/" + name;
    if (::link(temp->c_str(), stored.c_str()) == 0) {
      ::unlink(temp->c_str());
      syncDirectory(dir);
      return std::optional<std::string>(stored);
    }
    if (errno != EEXIST) {
      int err = errno;
      ::unlink(temp->c_str());
      return ioError(syscallMessage("link", stored, err));
    }
  }
  ::unlink(temp->c_str());
  return ioError("link(" + dir + "/" + stamp + "): a thousand copies in one millisecond");
}

Result<std::vector<std::string>> BackupStore::backupTree(const std::string& resolvedDir) const {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  uint64_t bytes = 0;
  uint64_t entries = 0;
  std::error_code ec;
  // Counted before anything is copied, so a folder too large to keep leaves no partial copy.
  for (fs::recursive_directory_iterator it(resolvedDir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (++entries > treeLimits_.maxFiles) {
      return fail(ErrorCode::kRefused, resolvedDir + " holds more than " +
                                           std::to_string(treeLimits_.maxFiles) +
                                           " entries, more than kaja copies before a change");
    }
    // Links are not followed (a dangling one is no error), and only regular files are copied.
    std::error_code entryError;
    if (it->is_symlink(entryError) || !it->is_regular_file(entryError)) continue;
    bytes += it->file_size(entryError);
    if (bytes > treeLimits_.maxBytes) {
      return fail(ErrorCode::kRefused,
                  resolvedDir + " holds more than " + std::to_string(treeLimits_.maxBytes) +
                      " bytes of files, more than kaja copies before a change");
    }
    files.push_back(it->path().string());
  }
  if (ec) return ioError("opendir(" + resolvedDir + "): " + ec.message());
  std::vector<std::string> copies;
  for (const auto& file : files) {
    auto copy = backupFile(file);
    if (!copy) return std::unexpected(copy.error());
    if (*copy) copies.push_back(**copy);
  }
  return copies;
}

Result<std::vector<std::string>> BackupStore::backupBeforeCall(
    const std::vector<CheckedPath>& paths, bool copyFolders) const {
  std::vector<std::string> copies;
  std::vector<std::string> done;
  auto refuse = [](const std::string& path, const Error& error) {
    return fail(error.code == ErrorCode::kRefused ? ErrorCode::kRefused : ErrorCode::kIo,
                "Could not back up " + quoteForMessage(path) + " (" + error.message +
                    "), so the call did not run.",
                {}, "rule: " + std::string(rule::kBackup));
  };
  for (const auto& path : paths) {
    for (const auto& landing : path.landings) {
      if (!landing.backup) continue;
      if (std::find(done.begin(), done.end(), landing.resolved) != done.end()) continue;
      done.push_back(landing.resolved);
      struct stat info {};
      bool folder = ::lstat(landing.resolved.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
      if (folder) {
        if (!copyFolders) continue;
        auto tree = backupTree(landing.resolved);
        if (!tree) return refuse(landing.resolved, tree.error());
        copies.insert(copies.end(), tree->begin(), tree->end());
        continue;
      }
      auto copy = backupFile(landing.resolved);
      if (!copy) return refuse(landing.resolved, copy.error());
      if (*copy) copies.push_back(**copy);
    }
  }
  return copies;
}

Result<std::vector<BackupEntry>> BackupStore::listBackups(const std::string& resolvedPath) const {
  std::vector<BackupEntry> entries;
  std::string dir = folderFor(resolvedPath);
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return entries;
    return fail(ErrorCode::kIo, "opendir(" + dir + "): " + ec.message());
  }
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!isBackupStamp(name) || !it->is_regular_file(ec)) continue;
    entries.push_back({name, it->path().string(), static_cast<uint64_t>(it->file_size(ec))});
  }
  if (ec) return fail(ErrorCode::kIo, "readdir(" + dir + "): " + ec.message());
  std::sort(entries.begin(), entries.end(), [](const BackupEntry& a, const BackupEntry& b) {
    return stampBefore(a.stamp, b.stamp);
  });
  return entries;
}

Result<std::vector<StoredCopy>> BackupStore::listAllBackups() const {
  namespace fs = std::filesystem;
  std::vector<StoredCopy> copies;
  std::error_code ec;
  fs::recursive_directory_iterator it(backupsDir_, fs::directory_options::none, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return copies;
    return fail(ErrorCode::kIo, "opendir(" + backupsDir_ + "): " + ec.message());
  }
  for (fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    std::error_code entryError;
    // A copy is a regular file named by a stamp; its folder, below the store, is the path
    // of the file it was taken of.
    if (!fs::is_regular_file(it->symlink_status(entryError))) continue;
    auto copy = describeCopy(it->path().string());
    if (copy) copies.push_back(std::move(*copy));
  }
  if (ec) return fail(ErrorCode::kIo, "readdir(" + backupsDir_ + "): " + ec.message());
  std::sort(copies.begin(), copies.end(), [](const StoredCopy& a, const StoredCopy& b) {
    if (a.entry.stamp != b.entry.stamp) return stampBefore(b.entry.stamp, a.entry.stamp);
    return a.original < b.original;
  });
  return copies;
}

std::optional<StoredCopy> BackupStore::describeCopy(const std::string& storedPath) const {
  std::string prefix = backupsDir_ + "/";
  auto slash = storedPath.find_last_of('/');
  if (!storedPath.starts_with(prefix) || slash == std::string::npos || slash < prefix.size()) {
    return std::nullopt;
  }
  std::string stamp = storedPath.substr(slash + 1);
  std::string original = storedPath.substr(backupsDir_.size(), slash - backupsDir_.size());
  if (!isBackupStamp(stamp) || original.size() < 2) return std::nullopt;
  struct stat info {};
  if (::lstat(storedPath.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  return StoredCopy{original, {stamp, storedPath, static_cast<uint64_t>(info.st_size)}};
}

Result<std::optional<std::string>> BackupStore::restoreBackup(const std::string& resolvedPath,
                                                              const std::string& stamp) const {
  if (auto checked = checkBackupStamp(stamp); !checked) return std::unexpected(checked.error());
  std::string stored = folderFor(resolvedPath) + "/" + stamp;
  UniqueFd source(
      retryOnEintr([&] { return ::open(stored.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW); }));
  if (!source.valid()) {
    if (errno == ENOENT) {
      return fail(ErrorCode::kNotFound, "There is no backup " + stamp + " of " + resolvedPath +
                                            "; list_backups shows the ones there are.");
    }
    return fail(ErrorCode::kIo, syscallMessage("open", stored, errno));
  }
  auto before = backupFile(resolvedPath);
  if (!before) {
    return fail(ErrorCode::kIo, "Could not back up " + resolvedPath + " before restoring it (" +
                                    before.error().message + "), so nothing was changed.");
  }
  struct stat current {};
  bool exists = ::stat(resolvedPath.c_str(), &current) == 0;
  std::string dir = parentOf(resolvedPath);
  if (auto made = makeDirectories(dir, 0755); !made) return std::unexpected(made.error());
  auto temp = copyToTemp(source.get(), stored, dir);
  if (!temp) return std::unexpected(temp.error());
  // The copy is private; the restored file gets the mode of the file it replaces.
  mode_t mode = exists ? (current.st_mode & 07777) : 0644;
  const char* call = ::chmod(temp->c_str(), mode) != 0                    ? "chmod"
                     : ::rename(temp->c_str(), resolvedPath.c_str()) != 0 ? "rename"
                                                                          : nullptr;
  if (call != nullptr) {
    int err = errno;
    ::unlink(temp->c_str());
    return fail(ErrorCode::kIo, syscallMessage(call, resolvedPath, err));
  }
  syncDirectory(dir);
  return *before;
}

}  // namespace kaja::core::policy
