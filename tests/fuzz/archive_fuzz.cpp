// The marketplace archive unpacker on any bytes, into one folder emptied before each input:
// nothing beside the folder changes; what lands in it is files of one link each, folders and
// links whose targets are relative and hold no `..`, with safe names, no deeper and no larger
// than the limits; a failure is a refusal or a damaged archive whose one-line message names
// the archive; a success counts exactly what it wrote; and no decompressor program is run.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "marketplace/sync/archive.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace fs = std::filesystem;
namespace msync = kaja::marketplace::sync;

const std::string kLabel = "the fuzzed archive";
const std::string kCanary = "canary: never written\n";
// Four levels below the base, so a name climbing out lands where the base is checked.
const std::string kInto = "a/b/c/into";
// Decompressors libarchive could hand a stream to; the ones on PATH only leave a mark.
const std::vector<std::string> kPrograms = {"lrzip", "lzop", "grzip", "lz4",  "lzip",
                                            "lzma",  "xz",   "zstd",  "gzip", "bzip2"};
const std::set<std::string> kBeside = {"outside", "outside/canary", "a", "a/b", "a/b/c", kInto,
                                       "bin"};

msync::UnpackLimits fuzzLimits() {
  msync::UnpackLimits limits;
  limits.maxEntries = 64;
  limits.maxTotalBytes = 256 * 1024;
  limits.maxFileBytes = 64 * 1024;
  limits.maxRatio = 200;
  limits.ratioFloorBytes = 32 * 1024;
  return limits;
}

// Made once, removed at exit: base/outside/canary and base/a/b/c/into, under $TMPDIR, or
// /dev/shm when it is unset: every input makes and removes files, several times faster there.
std::string makeBase() {
  const char* tmp = std::getenv("TMPDIR");
  std::string parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  if (tmp == nullptr && fs::is_directory("/dev/shm")) parent = "/dev/shm";
  std::string pattern = parent + "/kaja-fuzz-archive.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) std::abort();
  const std::string base = fs::canonical(pattern).string();
  fs::create_directories(base + "/outside");
  fs::create_directories(base + "/" + kInto);
  std::ofstream(base + "/outside/canary", std::ios::binary) << kCanary;
  // Any program run leaves base/ran-NAME, which checkBeside does not expect.
  fs::create_directories(base + "/bin");
  for (const auto& program : kPrograms) {
    const std::string path = base + "/bin/" + program;
    std::ofstream(path) << "#!/bin/sh\n: > '" << base << "/ran-" << program << "'\nexit 1\n";
    fs::permissions(path, fs::perms::owner_all);
  }
  ::setenv("PATH", (base + "/bin").c_str(), 1);
  static const std::string removeAtExit = base;
  std::atexit([] { fs::remove_all(removeAtExit); });
  return base;
}

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool safeText(std::string_view text) {
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f || c == '\\') return false;
  }
  return true;
}

void emptyFolder(const std::string& into) {
  for (const auto& child : fs::directory_iterator(into)) fs::remove_all(child.path());
}

void checkBeside(const std::string& base) {
  for (auto it = fs::recursive_directory_iterator(base); it != fs::end(it); ++it) {
    const std::string relative = it->path().lexically_relative(base).string();
    const bool program = relative.starts_with("bin/") &&
                         std::ranges::find(kPrograms, relative.substr(4)) != kPrograms.end();
    KAJA_FUZZ_CHECK(kBeside.contains(relative) || program,
                    "nothing lands beside the folder, and no outside program runs");
    if (relative == kInto) it.disable_recursion_pending();
  }
  KAJA_FUZZ_CHECK(readAll(base + "/outside/canary") == kCanary, "the canary is unchanged");
  struct stat st {};
  KAJA_FUZZ_CHECK(::stat((base + "/outside/canary").c_str(), &st) == 0 && st.st_nlink == 1,
                  "the canary gains no hard link");
}

struct Found {
  std::size_t files = 0;
  std::size_t folders = 0;
  std::size_t links = 0;
  std::uint64_t bytes = 0;
};

Found checkInside(const std::string& into, const msync::UnpackLimits& limits) {
  Found found;
  for (auto it = fs::recursive_directory_iterator(into); it != fs::end(it); ++it) {
    struct stat st {};
    KAJA_FUZZ_CHECK(::lstat(it->path().c_str(), &st) == 0, "what was unpacked can be read");
    KAJA_FUZZ_CHECK(it.depth() < 32, "no deeper than 32 folders");
    const std::string name = it->path().filename().string();
    KAJA_FUZZ_CHECK(safeText(name) && name != ".." && name.size() <= 255, "names are safe");
    if (S_ISLNK(st.st_mode)) {
      const std::string target = fs::read_symlink(it->path()).string();
      KAJA_FUZZ_CHECK(!target.empty() && target.front() != '/', "a link target is relative");
      KAJA_FUZZ_CHECK(safeText(target), "a link target has no control character or backslash");
      for (const auto& part : fs::path(target)) {
        KAJA_FUZZ_CHECK(part != "..", "a link target holds no ..");
      }
      ++found.links;
    } else if (S_ISREG(st.st_mode)) {
      KAJA_FUZZ_CHECK(st.st_nlink == 1, "no file is a hard link");
      KAJA_FUZZ_CHECK(static_cast<std::uint64_t>(st.st_size) <= limits.maxFileBytes,
                      "no file is over the file limit");
      KAJA_FUZZ_CHECK((st.st_mode & 07022) == 0, "no file is set-id or writable by others");
      found.bytes += static_cast<std::uint64_t>(st.st_size);
      ++found.files;
    } else {
      KAJA_FUZZ_CHECK(S_ISDIR(st.st_mode), "no device, FIFO or socket is made");
      ++found.folders;
    }
  }
  KAJA_FUZZ_CHECK(found.bytes <= limits.maxTotalBytes, "the bytes are within the limit");
  KAJA_FUZZ_CHECK(found.files + found.links <= limits.maxEntries, "the entries are within it");
  return found;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  static const std::string base = makeBase();
  static const std::string into = base + "/" + kInto;
  static const msync::UnpackLimits limits = fuzzLimits();
  emptyFolder(into);
  const std::string_view archive(reinterpret_cast<const char*>(bytes), size);
  const auto unpacked = msync::unpackArchive(archive, into, kLabel, limits);
  checkBeside(base);
  const Found found = checkInside(into, limits);
  if (!unpacked) {
    const auto& error = unpacked.error();
    KAJA_FUZZ_CHECK(error.code == kaja::core::ErrorCode::kRefused ||
                        error.code == kaja::core::ErrorCode::kInvalidConfig,
                    "a failure is a refusal or a damaged archive");
    KAJA_FUZZ_CHECK(error.message.find(kLabel) != std::string::npos, "it names the archive");
    for (unsigned char c : error.message) {
      KAJA_FUZZ_CHECK(c >= 0x20 && c != 0x7f, "its message is one line with no control bytes");
    }
    return 0;
  }
  KAJA_FUZZ_CHECK(unpacked->files == found.files && unpacked->links == found.links &&
                      unpacked->folders == found.folders && unpacked->bytes == found.bytes,
                  "a success counts what it wrote");
  return 0;
}
