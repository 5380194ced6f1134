// What a confined server sees: bwrap's filesystem arguments.
#include "sandbox/mounts.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>

namespace kaja::sandbox {
namespace {

namespace fs = std::filesystem;
using core::ErrorCode;

/// Folders of the system shown read-only when the host has them.
constexpr std::string_view kSystemFolders[] = {"/usr", "/opt", "/var/cache/fontconfig"};
/// Top-level entries that are links into /usr on merged-/usr systems, folders elsewhere.
constexpr std::string_view kRootEntries[] = {"/bin",   "/sbin",  "/lib",
                                             "/lib32", "/lib64", "/libx32"};
/// Inside paths kaja itself uses, which insideHome must stay clear of.
constexpr std::string_view kReservedInside[] = {"/tmp", "/proc", "/dev", "/run", "/etc"};

bool isUnder(std::string_view path, std::string_view dir) {
  if (dir == "/") return true;
  return path.starts_with(dir) && (path.size() == dir.size() || path[dir.size()] == '/');
}

/// Returns `path` (under `from`) moved to lie under `to` instead. Neither is "/": the root
/// is never bound.
std::string rebase(const std::string& path, const std::string& from, const std::string& to) {
  return to + path.substr(from.size());
}

std::string normalPath(const std::string& path) {
  std::string normal = fs::path(path).lexically_normal().string();
  while (normal.size() > 1 && normal.ends_with('/')) normal.pop_back();
  return normal;
}

std::optional<std::string> canonicalPath(const std::string& path) {
  std::error_code ec;
  const auto resolved = fs::canonical(path, ec);
  if (ec) return std::nullopt;
  return resolved.string();
}

bool isSymlink(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

bool isFolder(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// One host path (canonical) shown at an inside path.
struct Bind {
  std::string source;
  std::string dest;
  bool exempt = false;  ///< writable (home and tmp): never covered whole by a hidden folder
};

/// Collects bwrap's arguments in order and remembers what each shows.
class MountBuilder {
 public:
  void bind(const std::string& source, const std::string& dest, bool writable) {
    args_.insert(args_.end(), {writable ? "--bind" : "--ro-bind", source, dest});
    binds_.push_back({source, dest, writable});
    shown_.push_back(dest);
    // Home and tmp are the server's own folders, not the host's folders of those names.
    if (!writable) hostViews_.push_back(dest);
  }

  /// Shows `path` at the same path: a link stays a link (its target must be shown on its
  /// own), anything else is bound read-only. Does nothing when the host has no `path`.
  void showSystem(const std::string& path) {
    if (isSymlink(path)) {
      std::error_code ec;
      const auto target = fs::read_symlink(path, ec);
      if (ec) return;
      args_.insert(args_.end(), {"--symlink", target.string(), path});
      shown_.push_back(path);
      hostViews_.push_back(path);
      return;
    }
    if (const auto source = canonicalPath(path)) bind(*source, path, false);
  }

  /// Shows the file `path` read-only at the same path unless the host's folder around it is
  /// shown already (the server's private home and tmp do not count: a program in the host's
  /// /tmp is not in the server's).
  void showProgram(const std::string& path) {
    if (path.empty() || showsHostPath(path)) return;
    if (const auto source = canonicalPath(path)) bind(*source, path, false);
  }

  [[nodiscard]] bool showsHostPath(const std::string& insidePath) const {
    return std::ranges::any_of(hostViews_, [&](const std::string& dest) {
      return isUnder(insidePath, dest) && dest != "/";
    });
  }

  /// Notes every inside path where the host path `hidden` (canonical) can be seen.
  void hide(const std::string& hidden) {
    const bool folder = isFolder(hidden);
    for (const Bind& b : binds_) {
      if (isUnder(hidden, b.source)) {
        covers_.push_back({rebase(hidden, b.source, b.dest), folder});
      } else if (!b.exempt && isUnder(b.source, hidden)) {
        covers_.push_back({b.dest, isFolder(b.source)});
      }
    }
  }

  /// Covers what hide() noted: a folder with an empty tmpfs, anything else with /dev/null.
  /// A path inside a covered folder needs nothing more (and mounting on it would make it).
  void coverHidden() {
    for (const Cover& c : covers_) {
      const bool inCovered = std::ranges::any_of(covers_, [&](const Cover& other) {
        return other.folder && isUnder(c.inside, other.inside) &&
               (c.inside != other.inside || &other < &c);
      });
      if (inCovered) continue;
      if (c.folder) {
        args_.insert(args_.end(), {"--tmpfs", c.inside});
        covered_.push_back(c.inside);
      } else if (std::ranges::none_of(covers_, [&](const Cover& other) {
                   return other.inside == c.inside && &other < &c;
                 })) {
        args_.insert(args_.end(), {"--ro-bind", "/dev/null", c.inside});
      }
    }
  }

  void add(std::initializer_list<std::string> more) { args_.insert(args_.end(), more); }

  /// Makes the covers and the root read-only, last, once nothing more is mounted on them.
  std::vector<std::string> finish() {
    for (const auto& folder : covered_) args_.insert(args_.end(), {"--remount-ro", folder});
    args_.insert(args_.end(), {"--remount-ro", "/"});
    return std::move(args_);
  }

  [[nodiscard]] const std::vector<std::string>& shown() const { return shown_; }

 private:
  struct Cover {
    std::string inside;
    bool folder = false;
  };

  std::vector<std::string> args_;
  std::vector<Bind> binds_;
  std::vector<std::string> shown_;
  std::vector<std::string> hostViews_;  // the inside paths that show the host's own files
  std::vector<Cover> covers_;
  std::vector<std::string> covered_;  // folders covered by a tmpfs, remounted read-only
};

core::Result<std::string> privateFolder(const std::string& path, const char* what) {
  if (path.empty() || !path.starts_with('/')) {
    return core::fail(ErrorCode::kInvalidConfig,
                      std::string("the sandbox ") + what + " folder must be an absolute path");
  }
  const auto source = canonicalPath(path);
  if (!source || !isFolder(*source)) {
    return core::fail(ErrorCode::kInvalidConfig, std::string("the sandbox ") + what + " folder " +
                                                     path + " does not exist; create it first");
  }
  return *source;
}

core::Result<void> checkPaths(const Confinement& where) {
  for (const auto& list : {where.readOnly, where.hidden}) {
    for (const auto& path : list) {
      if (!path.starts_with('/')) {
        return core::fail(ErrorCode::kInvalidConfig,
                          "the sandbox path \"" + path + "\" must be absolute");
      }
    }
  }
  for (const auto& path : where.readOnly) {
    if (normalPath(path) == "/") {
      return core::fail(ErrorCode::kInvalidConfig,
                        "a read-only path of / would show the whole host to the server; list "
                        "the folders it needs instead");
    }
  }
  const std::string& home = where.insideHome;
  if (!home.starts_with('/') || home == "/" || home.find("/..") != std::string::npos) {
    return core::fail(ErrorCode::kInvalidConfig,
                      "the inside home \"" + home + "\" must be an absolute folder below /");
  }
  return {};
}

/// Refuses an inside home that overlaps anything else shown (`shown` starts with the home).
core::Result<void> checkInsideHome(const Confinement& where,
                                   const std::vector<std::string>& shown) {
  std::vector<std::string> taken(shown.begin() + 1, shown.end());
  taken.insert(taken.end(), std::begin(kReservedInside), std::end(kReservedInside));
  for (const auto& dest : taken) {
    if (isUnder(where.insideHome, dest) || isUnder(dest, where.insideHome)) {
      return core::fail(ErrorCode::kInvalidConfig,
                        "the inside home " + where.insideHome + " overlaps " + dest +
                            ", which the server also sees; choose another inside home");
    }
  }
  return {};
}

/// bwrap makes the mount points of paths shown below /tmp inside the server's own tmp
/// folder, which the server wrote to on its last run: a link it left there would send the
/// mount point (and the folders made for it) anywhere on the host.
core::Result<void> checkTmpMountPoints(const std::string& tmpSource,
                                       const std::vector<std::string>& shown) {
  for (const auto& dest : shown) {
    if (dest == kInsideTmp || !isUnder(dest, kInsideTmp)) continue;
    std::string host = tmpSource;
    for (const auto& part : fs::path(dest.substr(std::string_view(kInsideTmp).size()))) {
      if (part == "/") continue;
      host += "/" + part.string();
      struct stat st {};
      if (::lstat(host.c_str(), &st) != 0) break;  // bwrap makes the rest as real folders
      if (S_ISLNK(st.st_mode)) {
        return core::fail(ErrorCode::kRefused,
                          "the server's tmp folder holds a link at " + host +
                              " where kaja mounts " + dest +
                              "; empty that tmp folder before starting the server");
      }
    }
  }
  return {};
}

}  // namespace

const std::vector<std::string>& etcWhitelist() {
  static const std::vector<std::string> kEtc = {"/etc/alternatives",
                                                "/etc/ca-certificates",
                                                "/etc/ca-certificates.conf",
                                                "/etc/chromium",
                                                "/etc/chromium.d",
                                                "/etc/crypto-policies",
                                                "/etc/debian_version",
                                                "/etc/fonts",
                                                "/etc/gai.conf",
                                                "/etc/group",
                                                "/etc/host.conf",
                                                "/etc/hosts",
                                                "/etc/ld.so.cache",
                                                "/etc/ld.so.conf",
                                                "/etc/ld.so.conf.d",
                                                "/etc/localtime",
                                                "/etc/magic",
                                                "/etc/magic.mime",
                                                "/etc/mime.types",
                                                "/etc/nsswitch.conf",
                                                "/etc/os-release",
                                                "/etc/passwd",
                                                "/etc/pki",
                                                "/etc/protocols",
                                                "/etc/services",
                                                "/etc/ssl",
                                                "/etc/terminfo",
                                                "/etc/timezone"};
  return kEtc;
}

const std::vector<std::string>& alwaysHidden() {
  static const std::vector<std::string> kHidden = {"/etc/ssl/private", "/etc/pki/tls/private"};
  return kHidden;
}

core::Result<std::vector<std::string>> mountArgs(const Confinement& where,
                                                 const std::string& program) {
  if (auto checked = checkPaths(where); !checked) return std::unexpected(checked.error());
  auto home = privateFolder(where.home, "home");
  if (!home) return std::unexpected(home.error());
  auto tmp = privateFolder(where.tmp, "tmp");
  if (!tmp) return std::unexpected(tmp.error());

  MountBuilder mounts;
  mounts.bind(*home, where.insideHome, true);
  mounts.bind(*tmp, kInsideTmp, true);
  for (const auto folder : kSystemFolders) mounts.showSystem(std::string(folder));
  for (const auto entry : kRootEntries) mounts.showSystem(std::string(entry));
  for (const auto& entry : etcWhitelist()) mounts.showSystem(entry);
  for (const auto& path : where.readOnly) {
    const auto normal = normalPath(path);
    if (const auto source = canonicalPath(normal)) mounts.bind(*source, normal, false);
  }
  mounts.showProgram(program);
  if (!where.egressSocket.empty()) mounts.showProgram(where.kaja);

  if (auto clear = checkInsideHome(where, mounts.shown()); !clear) {
    return std::unexpected(clear.error());
  }
  if (auto clear = checkTmpMountPoints(*tmp, mounts.shown()); !clear) {
    return std::unexpected(clear.error());
  }

  for (const auto& list : {alwaysHidden(), where.hidden}) {
    for (const auto& path : list) {
      if (const auto source = canonicalPath(path)) mounts.hide(*source);
    }
  }
  mounts.coverHidden();
  // A second wall beside the user namespace: no sysctl is writable, whoever the server is.
  mounts.add({"--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev", "--perms",
              "1777", "--tmpfs", "/dev/shm"});
  if (!where.egressSocket.empty()) {
    mounts.add({"--ro-bind", where.egressSocket, kInsideEgressSocket});
  }
  return mounts.finish();
}

}  // namespace kaja::sandbox
