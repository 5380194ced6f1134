#include "marketplace/sync/sync.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "core/manifest/ability_loader.h"
#include "core/manifest/secrets.h"
#include "core/util/sys.h"
#include "core/util/unique_fd.h"
#include "marketplace/catalog.h"
#include "marketplace/sync/verify.h"

namespace kaja::marketplace::sync {
namespace {

namespace fs = std::filesystem;
using core::ErrorCode;
using nlohmann::json;

constexpr std::size_t kMaxSignatureBytes = 4096;

// A step's failure as the sync reports it: which marketplace, which step, what happened,
// and that nothing changed.
core::Error stepError(const std::string& name, std::string_view step, core::Error error) {
  std::string what = error.context.empty() ? error.message : error.context + ": " + error.message;
  error.context.clear();
  while (!what.empty() && (what.back() == '.' || what.back() == ' ')) what.pop_back();
  error.message = "syncing marketplace " + name + " failed at " + std::string(step) + ": " + what +
                  "; the marketplace is as it was.";
  return error;
}

std::string nowIso() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// Returns the target of the link `path`, or "" when it is no link.
std::string readLink(const std::string& path) {
  char buffer[PATH_MAX];
  ssize_t n = ::readlink(path.c_str(), buffer, sizeof buffer - 1);
  if (n <= 0) return "";
  return std::string(buffer, static_cast<size_t>(n));
}

// The "gen-N" a link's target starts with.
std::string generationOf(const std::string& target) { return target.substr(0, target.find('/')); }

std::optional<Generation> readGeneration(const std::string& dir, const std::string& folder) {
  if (folder.empty()) return std::nullopt;
  auto text = core::readTextFile(dir + "/" + folder + ".json");
  Generation generation;
  generation.folder = folder;
  if (text) {
    json doc = json::parse(*text, nullptr, false);
    if (doc.is_object()) {
      generation.sha256 = doc.value("sha256", "");
      generation.syncedAt = doc.value("syncedAt", "");
      generation.source = doc.value("source", "");
      generation.abilities = doc.value("abilities", std::size_t{0});
      generation.personas = doc.value("personas", std::size_t{0});
    }
  }
  return generation;
}

core::Result<void> writeGeneration(const std::string& dir, const Generation& generation) {
  json doc = {{"sha256", generation.sha256},
              {"syncedAt", generation.syncedAt},
              {"source", generation.source},
              {"abilities", generation.abilities},
              {"personas", generation.personas}};
  return core::writeFileAtomically(dir + "/" + generation.folder + ".json", doc.dump(2) + "\n",
                                   0600);
}

// Points the link `name` in `dir` at `target` with one rename, so a reader sees the old
// target or the new one, never no link.
core::Result<void> pointLink(const std::string& dir, const std::string& name,
                             const std::string& target) {
  std::string temp = dir + "/." + name + ".new";
  ::unlink(temp.c_str());
  if (::symlink(target.c_str(), temp.c_str()) != 0) {
    return core::fail(ErrorCode::kIo, core::syscallMessage("symlink", temp, errno));
  }
  if (::rename(temp.c_str(), (dir + "/" + name).c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    return core::fail(ErrorCode::kIo, core::syscallMessage("rename", temp, err));
  }
  return {};
}

// Holds an exclusive lock on the marketplace's folder while it lives, so two syncs (or a
// sync and a rollback) of one marketplace run one after the other.
class FolderLock {
 public:
  static core::Result<FolderLock> take(const std::string& dir) {
    if (auto made = core::makeDirectories(dir, 0700); !made) return std::unexpected(made.error());
    auto fd = core::lockExclusive(dir + "/.lock");
    if (!fd) return std::unexpected(fd.error());
    FolderLock lock;
    lock.fd_ = std::move(*fd);
    return lock;
  }

 private:
  core::UniqueFd fd_;
};

// Returns the entries of `dir` that no link names any more: incoming folders an interrupted
// sync left, copies neither `live` nor `previous` points at, and trash.
std::vector<fs::path> strays(const std::string& dir) {
  std::set<std::string> keep = {generationOf(readLink(dir + "/live")),
                                generationOf(readLink(dir + "/previous"))};
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::string stem = name.ends_with(".json") ? name.substr(0, name.size() - 5) : name;
    if (name.starts_with("incoming-") || name.starts_with("trash-") ||
        (stem.starts_with("gen-") && keep.count(stem) == 0)) {
      out.push_back(it->path());
    }
  }
  return out;
}

// Removes every stray now.
void sweep(const std::string& dir) {
  std::error_code ec;
  for (const auto& path : strays(dir)) fs::remove_all(path, ec);
}

// Moves the strays aside (one rename each) and removes them in a detached process, so a
// sync does not wait for hundreds of folders to be unlinked. What it does not finish, the
// next sync's sweep does.
void sweepLater(const std::string& dir) {
  std::vector<fs::path> trash;
  for (const auto& path : strays(dir)) {
    std::string name = path.filename().string();
    fs::path moved = name.starts_with("trash-") ? path : path.parent_path() / ("trash-" + name);
    std::error_code ec;
    if (moved != path) fs::rename(path, moved, ec);
    if (!ec) trash.push_back(moved);
  }
  if (trash.empty()) return;
  pid_t child = ::fork();
  if (child < 0) {
    sweep(dir);
    return;
  }
  if (child == 0) {
    // The grandchild holds nothing of the sync's: not the marketplace's lock (a flock lives
    // as long as any copy of its descriptor, so the next sync would wait for this one), and
    // not the caller's stdout or stderr (whose reader would wait for them to close). They
    // are closed here, before it is forked, so that once the sync has waited for this
    // child no copy is left anywhere.
    int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
      for (int fd = 0; fd <= 2; ++fd) ::dup2(null, fd);
    }
    ::close_range(3, ~0U, 0);
    // The grandchild does the work, so the sync never leaves a zombie behind.
    if (::fork() == 0) {
      (void)::nice(10);
      std::error_code ec;
      for (const auto& path : trash) fs::remove_all(path, ec);
    }
    ::_exit(0);
  }
  int status = 0;
  core::retryOnEintr([&] { return ::waitpid(child, &status, 0); });
}

// Returns the next free "gen-N".
std::string nextGeneration(const std::string& dir) {
  long highest = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!name.starts_with("gen-")) continue;
    highest = std::max(highest, std::strtol(name.c_str() + 4, nullptr, 10));
  }
  return "gen-" + std::to_string(highest + 1);
}

bool isFolder(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(fs::symlink_status(path, ec));
}

bool holdsLayer(const fs::path& dir) {
  return isFolder(dir / "abilities") || isFolder(dir / "personas");
}

// Returns the layer's folder relative to `unpacked`: "" for the root, or its one top folder.
core::Result<std::string> findLayer(const fs::path& unpacked) {
  if (holdsLayer(unpacked)) return std::string();
  std::vector<fs::path> entries;
  std::error_code ec;
  for (fs::directory_iterator it(unpacked, ec), end; !ec && it != end; it.increment(ec)) {
    entries.push_back(it->path());
  }
  if (entries.size() == 1 && isFolder(entries[0]) && holdsLayer(entries[0])) {
    return entries[0].filename().string();
  }
  return core::fail(ErrorCode::kInvalidConfig,
                    "the archive holds neither abilities/ nor personas/, at its root or under "
                    "one top folder; check that SOURCE is a marketplace");
}

// Loads every manifest of the layer at `root`; the first broken one fails the sync.
core::Result<std::pair<std::size_t, std::size_t>> loadLayer(const std::string& root,
                                                            const std::string& name) {
  Catalog catalog = Catalog::loadLayers({{root, LayerKind::kMarketplace, name}});
  auto inArchive = [&](core::Error error) {
    // The folder is about to go: name the file as the archive does.
    for (std::string* text : {&error.message, &error.context}) {
      for (size_t at; (at = text->find(root + "/")) != std::string::npos;) {
        text->replace(at, root.size() + 1, "");
      }
    }
    error.code = ErrorCode::kInvalidConfig;
    return std::unexpected(std::move(error));
  };
  for (const auto& record : catalog.abilities()) {
    if (!record.ability) return inArchive(record.error);
  }
  for (const auto& record : catalog.personas()) {
    if (!record.persona) return inArchive(record.error);
  }
  if (catalog.abilities().empty() && catalog.personas().empty()) {
    return core::fail(ErrorCode::kInvalidConfig,
                      "the archive's abilities/ and personas/ are empty; there is nothing to "
                      "sync");
  }
  return std::pair{catalog.abilities().size(), catalog.personas().size()};
}

// Removes the stored key of every ability whose url differs between the layers at `before`
// and `after`: a key given for one server must not reach another (V6).
std::vector<std::string> dropMovedKeys(const core::Paths& paths, const std::string& before,
                                       const std::string& after) {
  auto secrets = core::Secrets::load(paths.secretsFile);
  if (!secrets) return {};
  std::vector<std::string> dropped;
  // Only the abilities a key is stored for are read again: a few manifests, not the
  // hundreds a marketplace may hold.
  for (const auto& name : secrets->stored()) {
    if (!core::isValidName(name)) continue;
    auto was = core::loadAbility(before + "/abilities/" + name);
    auto now = core::loadAbility(after + "/abilities/" + name);
    if (!was || !now || was->url == now->url) continue;
    // The user's own ability of that name is what runs, and its key is the user's to keep.
    std::error_code ec;
    if (fs::exists(paths.userMarketplace + "/abilities/" + name + "/mcp.toml", ec)) continue;
    if (secrets->remove(name)) dropped.push_back(name);
  }
  if (!dropped.empty() && !secrets->save(paths.secretsFile)) return {};
  return dropped;
}

}  // namespace

MarketplaceState marketplaceState(const core::Paths& paths, const std::string& name) {
  std::string dir = marketplaceDir(paths, name);
  MarketplaceState state;
  state.live = readGeneration(dir, generationOf(readLink(dir + "/live")));
  state.previous = readGeneration(dir, generationOf(readLink(dir + "/previous")));
  return state;
}

core::Result<SyncReport> syncMarketplace(const core::Paths& paths, const MarketplaceEntry& entry,
                                         const SyncOptions& options) {
  const std::string& name = entry.name;
  auto step = [&](std::string_view which) {
    if (options.onStep) options.onStep(which);
  };
  auto failAt = [&](std::string_view which, core::Error error) {
    return std::unexpected(stepError(name, which, std::move(error)));
  };
  const std::string dir = marketplaceDir(paths, name);
  auto lock = FolderLock::take(dir);
  if (!lock) return failAt("lock", lock.error());
  // What earlier syncs left (copies no link names, an interrupted sync's folder) is swept
  // once this one switched, in the background: a sync never waits for unlinking.

  step("fetch");
  auto bytes = fetchSource(entry.source, options.fetch);
  if (!bytes) return failAt("fetch", bytes.error());

  step("verify");
  std::optional<std::string> pin = options.sha256 ? options.sha256 : entry.sha256;
  if (!pin && !entry.publicKey) {
    return failAt(
        "verify",
        core::Error{
            ErrorCode::kRefused, "it has neither a --sha256 pin nor a public key", {}, {}, 0});
  }
  const std::string actual = sha256Hex(*bytes);
  if (pin && *pin != actual) {
    return failAt("verify",
                  core::Error{ErrorCode::kRefused,
                              "the archive's SHA-256 is " + actual + ", not the pinned " + *pin +
                                  " (if the new archive is the one you expect, sync with "
                                  "--sha256 " +
                                  actual + ")",
                              {},
                              {},
                              0});
  }
  if (entry.publicKey) {
    auto key = parsePublicKey(*entry.publicKey);
    if (!key) return failAt("verify", key.error());
    FetchLimits sigLimits = options.fetch;
    sigLimits.maxBytes = kMaxSignatureBytes;
    auto signature = fetchSource(entry.signatureSource(), sigLimits);
    if (!signature) return failAt("verify", signature.error());
    if (auto ok = verifyEd25519(*bytes, *signature, *key); !ok) {
      core::Error error = ok.error();
      error.message += " (signature from " + entry.signatureSource() + ")";
      return failAt("verify", std::move(error));
    }
  }

  MarketplaceState before = marketplaceState(paths, name);
  SyncReport report;
  if (before.live && before.live->sha256 == actual) {
    if (options.beforeSwitch) {
      if (auto ok = options.beforeSwitch(); !ok) return failAt("switch", ok.error());
    }
    report.live = *before.live;
    report.unchanged = true;
    return report;
  }

  step("unpack");
  std::string incoming = dir + "/incoming-XXXXXX";
  if (::mkdtemp(incoming.data()) == nullptr) {
    return failAt(
        "unpack",
        core::Error{ErrorCode::kIo, core::syscallMessage("mkdtemp", incoming, errno), {}, {}, 0});
  }
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      std::error_code ec;
      if (!path.empty()) fs::remove_all(path, ec);
    }
  } cleanup{incoming};
  std::string label = "the archive from " + entry.source;
  auto unpacked = unpackArchive(*bytes, incoming, label, options.unpack);
  if (!unpacked) return failAt("unpack", unpacked.error());
  report.unpacked = *unpacked;
  auto layer = findLayer(incoming);
  if (!layer) return failAt("unpack", layer.error());

  step("load");
  std::string root = layer->empty() ? incoming : incoming + "/" + *layer;
  auto counts = loadLayer(root, name);
  if (!counts) return failAt("load", counts.error());

  step("switch");
  if (options.beforeSwitch) {
    if (auto ok = options.beforeSwitch(); !ok) return failAt("switch", ok.error());
  }
  Generation generation;
  generation.folder = nextGeneration(dir);
  generation.sha256 = actual;
  generation.syncedAt = nowIso();
  generation.source = entry.source;
  generation.abilities = counts->first;
  generation.personas = counts->second;
  const std::string generationDir = dir + "/" + generation.folder;
  if (::rename(incoming.c_str(), generationDir.c_str()) != 0) {
    return failAt(
        "switch",
        core::Error{ErrorCode::kIo, core::syscallMessage("rename", incoming, errno), {}, {}, 0});
  }
  cleanup.path = generationDir;  // until the link points at it
  if (auto written = writeGeneration(dir, generation); !written) {
    return failAt("switch", written.error());
  }
  std::string oldLive = readLink(dir + "/live");
  std::string target = layer->empty() ? generation.folder : generation.folder + "/" + *layer;
  if (auto pointed = pointLink(dir, "live", target); !pointed) {
    ::unlink((generationDir + ".json").c_str());
    return failAt("switch", pointed.error());
  }
  cleanup.path.clear();
  if (!oldLive.empty())
    report.droppedKeys = dropMovedKeys(paths, dir + "/" + oldLive, dir + "/live");
  if (!oldLive.empty()) {
    // Keeping the old copy for rollback is not the sync itself: the new one is live even
    // if this fails, and the next sync sweeps what is left.
    (void)pointLink(dir, "previous", oldLive);
  }
  sweepLater(dir);
  report.live = generation;
  return report;
}

core::Result<MarketplaceState> rollbackMarketplace(
    const core::Paths& paths, const std::string& name,
    const std::function<core::Result<void>(const Generation& next)>& beforeSwitch) {
  const std::string dir = marketplaceDir(paths, name);
  auto lock = FolderLock::take(dir);
  if (!lock) return std::unexpected(lock.error());
  std::string live = readLink(dir + "/live");
  std::string previous = readLink(dir + "/previous");
  if (previous.empty() || !isFolder(dir + "/" + previous)) {
    return core::fail(ErrorCode::kNotFound,
                      "marketplace " + name +
                          " has no earlier sync to go back to; it keeps one only after a second "
                          "sync that changed it");
  }
  if (beforeSwitch) {
    std::optional<Generation> next = marketplaceState(paths, name).previous;
    if (!next) {
      return core::fail(ErrorCode::kNotFound, "marketplace " + name +
                                                  "'s earlier sync has lost its record (" +
                                                  previous + "); sync it again instead");
    }
    if (auto ok = beforeSwitch(*next); !ok) return std::unexpected(ok.error());
  }
  if (auto pointed = pointLink(dir, "live", previous); !pointed) {
    return std::unexpected(pointed.error());
  }
  if (!live.empty()) (void)pointLink(dir, "previous", live);
  return marketplaceState(paths, name);
}

core::Result<void> removeMarketplaceData(const core::Paths& paths, const std::string& name) {
  const std::string dir = marketplaceDir(paths, name);
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir, ec))) return {};
  {
    auto lock = FolderLock::take(dir);
    if (!lock) return std::unexpected(lock.error());
    // Unlink first, so no reader finds a half-removed layer.
    ::unlink((dir + "/live").c_str());
  }
  fs::remove_all(dir, ec);
  if (ec) {
    return core::fail(ErrorCode::kIo, "cannot remove " + dir + ": " + ec.message());
  }
  return {};
}

}  // namespace kaja::marketplace::sync
