#include "marketplace/sync/archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "core/util/quote.h"
#include "core/util/sys.h"
#include "core/util/unique_fd.h"

namespace kaja::marketplace::sync {
namespace {

using core::ErrorCode;
using core::UniqueFd;

constexpr std::size_t kMaxNameBytes = 1024;
constexpr std::size_t kMaxPartBytes = 255;
constexpr std::size_t kMaxDepth = 32;

struct ArchiveDeleter {
  void operator()(struct archive* a) const { archive_read_free(a); }
};

std::vector<std::string> splitParts(std::string_view name) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= name.size()) {
    size_t slash = name.find('/', start);
    if (slash == std::string_view::npos) slash = name.size();
    std::string_view part = name.substr(start, slash - start);
    if (!part.empty() && part != ".") parts.emplace_back(part);
    start = slash + 1;
  }
  return parts;
}

std::string joinParts(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) {
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

// The reason a link target may not be written, or "".
std::string linkProblem(std::string_view target) {
  if (target.empty()) return "points nowhere";
  if (target.front() == '/') return "points to an absolute path";
  for (unsigned char c : target) {
    if (c < 0x20 || c == 0x7f) return "has a control character in its target";
    if (c == '\\') return "has a backslash in its target";
  }
  for (const auto& part : splitParts(target)) {
    if (part == "..") return "points outside its folder with ..";
  }
  return "";
}

class Unpacker {
 public:
  Unpacker(std::string_view archive, std::string label, const UnpackLimits& limits)
      : archive_(archive), label_(std::move(label)), limits_(limits) {}

  core::Result<UnpackStats> run(const std::string& into) {
    root_ = UniqueFd(::open(into.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root_.valid()) {
      return core::fail(ErrorCode::kIo, core::syscallMessage("open", into, errno));
    }
    std::unique_ptr<struct archive, ArchiveDeleter> reader(archive_read_new());
    // Only the filters libarchive decodes itself: _all would also hand lrzip, lzop, grzip and
    // other streams to an outside program found on PATH, on bytes from the network. A filter
    // it cannot decode itself it adds with ARCHIVE_WARN, and that is refused too.
    for (auto addFilter : {archive_read_support_filter_gzip, archive_read_support_filter_zstd,
                           archive_read_support_filter_xz, archive_read_support_filter_bzip2}) {
      if (addFilter(reader.get()) != ARCHIVE_OK) {
        return core::fail(ErrorCode::kInternal,
                          "kaja will not unpack " + label_ +
                              ": this libarchive cannot decompress gzip, zstd, xz and bzip2 "
                              "itself; install one built with zlib, zstd, liblzma and libbz2.");
      }
    }
    archive_read_support_format_tar(reader.get());
    archive_read_support_format_gnutar(reader.get());
    archive_read_support_format_zip(reader.get());
    if (archive_read_open_memory(reader.get(), archive_.data(), archive_.size()) != ARCHIVE_OK) {
      return damaged(reader.get());
    }
    struct archive_entry* entry = nullptr;
    for (;;) {
      int status = archive_read_next_header(reader.get(), &entry);
      if (status == ARCHIVE_EOF) break;
      if (status < ARCHIVE_WARN) return damaged(reader.get());
      if (++entries_ > limits_.maxEntries) {
        return refuse("", "holds more than " + std::to_string(limits_.maxEntries) + " entries");
      }
      if (auto written = writeEntry(reader.get(), entry); !written) {
        return std::unexpected(written.error());
      }
    }
    if (entries_ == 0) {
      return core::fail(ErrorCode::kInvalidConfig,
                        label_ +
                            " is empty or is no archive kaja reads (tar, tar.gz, tar.zst, "
                            "tar.xz or zip); check the source.");
    }
    return stats_;
  }

 private:
  core::Result<UnpackStats> damaged(struct archive* reader) const {
    const char* why = archive_error_string(reader);
    return core::fail(ErrorCode::kInvalidConfig,
                      label_ + " is damaged or truncated (" +
                          (why != nullptr ? core::quoteForMessage(why) : "no reason given") +
                          "); fetch it again, or check the source.");
  }

  std::unexpected<core::Error> refuse(const std::string& name, const std::string& why) const {
    std::string what = name.empty() ? label_ : label_ + " entry " + core::quoteForMessage(name);
    return core::fail(ErrorCode::kRefused,
                      what + " " + why + "; kaja unpacked nothing into the marketplace.");
  }

  core::Result<void> writeEntry(struct archive* reader, struct archive_entry* entry) {
    const char* raw = archive_entry_pathname(entry);
    if (raw == nullptr) {
      // libarchive gives no name when it cannot convert it; dropping the entry unsaid would
      // lose a file of the marketplace.
      return refuse("", "holds an entry whose name kaja cannot read (not UTF-8?)");
    }
    std::string shown = raw;
    auto name = cleanEntryName(shown);
    if (!name) return refuse(shown, name.error().message);
    if (name->empty()) return {};  // "./" itself
    if (archive_entry_hardlink(entry) != nullptr) {
      return refuse(shown, "is a hard link, which a marketplace may not hold");
    }
    const bool folder = archive_entry_filetype(entry) == AE_IFDIR;
    if (auto [seen, fresh] = seen_.emplace(*name, folder); !fresh) {
      // A folder may be listed again (zip and some tars do); anything else may not, nor a
      // folder where a file or link of its name came first.
      if (folder && seen->second) return {};
      return refuse(shown, "appears twice in the archive");
    }
    std::vector<std::string> parts = splitParts(*name);
    auto parent = openParent(parts, shown);
    if (!parent) return std::unexpected(parent.error());
    const std::string& leaf = parts.back();
    switch (archive_entry_filetype(entry)) {
      case AE_IFDIR:
        return makeFolder(*parent, leaf, shown);
      case AE_IFREG:
        return writeFile(reader, entry, *parent, leaf, shown);
      case AE_IFLNK: {
        const char* target = archive_entry_symlink(entry);
        std::string text = target != nullptr ? target : "";
        if (std::string why = linkProblem(text); !why.empty()) {
          return refuse(shown, "is a link that " + why);
        }
        if (::symlinkat(text.c_str(), *parent, leaf.c_str()) != 0) {
          return refuse(shown, "cannot be made (" + std::string(std::strerror(errno)) + ")");
        }
        ++stats_.links;
        return {};
      }
      default:
        return refuse(shown, "is a device, FIFO or socket, which a marketplace may not hold");
    }
  }

  // Opens (making as needed) every folder above the entry, refusing to pass through a link.
  // The folders opened last time are kept, so the many entries of one folder cost one
  // openat each, not one per folder above them.
  core::Result<int> openParent(const std::vector<std::string>& parts, const std::string& shown) {
    size_t depth = parts.size() - 1;
    size_t shared = 0;
    while (shared < depth && shared < openParts_.size() && openParts_[shared] == parts[shared]) {
      ++shared;
    }
    openParts_.resize(shared);
    openFds_.resize(shared);
    for (size_t i = shared; i < depth; ++i) {
      int dir = i == 0 ? root_.get() : openFds_[i - 1].get();
      UniqueFd next(
          ::openat(dir, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!next.valid() && errno == ENOENT) {
        if (::mkdirat(dir, parts[i].c_str(), 0755) != 0 && errno != EEXIST) {
          return refuse(shown, "cannot be unpacked (" + std::string(std::strerror(errno)) + ")");
        }
        ++stats_.folders;
        next = UniqueFd(
            ::openat(dir, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      }
      if (!next.valid()) {
        return refuse(shown, "would be written through a link or a file (" +
                                 core::quoteForMessage(parts[i]) + ")");
      }
      openParts_.push_back(parts[i]);
      openFds_.push_back(std::move(next));
    }
    // No entry can later replace a folder kept open: files are made with O_EXCL and links
    // with symlinkat, both of which fail on a name that exists.
    return depth == 0 ? root_.get() : openFds_[depth - 1].get();
  }

  core::Result<void> makeFolder(int parent, const std::string& leaf, const std::string& shown) {
    if (::mkdirat(parent, leaf.c_str(), 0755) == 0) {
      ++stats_.folders;
      return {};
    }
    struct stat st {};
    if (errno == EEXIST && ::fstatat(parent, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISDIR(st.st_mode)) {
      return {};
    }
    return refuse(shown, "is a folder where a file or link already is");
  }

  core::Result<void> writeFile(struct archive* reader, struct archive_entry* entry, int parent,
                               const std::string& leaf, const std::string& shown) {
    if (archive_entry_size_is_set(entry) != 0 &&
        static_cast<std::uint64_t>(archive_entry_size(entry)) > limits_.maxFileBytes) {
      return refuse(shown, "is larger than " + std::to_string(limits_.maxFileBytes) + " bytes");
    }
    mode_t mode = (archive_entry_perm(entry) & 0100) != 0 ? 0755 : 0644;
    UniqueFd out(
        ::openat(parent, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!out.valid()) {
      return refuse(shown, "cannot be written (" + std::string(std::strerror(errno)) + ")");
    }
    ++stats_.files;
    std::uint64_t fileBytes = 0;
    char buffer[64 * 1024];
    for (;;) {
      la_ssize_t got = archive_read_data(reader, buffer, sizeof buffer);
      if (got == 0) break;
      if (got < 0) return std::unexpected(damaged(reader).error());
      fileBytes += static_cast<std::uint64_t>(got);
      stats_.bytes += static_cast<std::uint64_t>(got);
      if (fileBytes > limits_.maxFileBytes) {
        return refuse(shown, "is larger than " + std::to_string(limits_.maxFileBytes) + " bytes");
      }
      if (stats_.bytes > limits_.maxTotalBytes) {
        return refuse("",
                      "unpacks to more than " + std::to_string(limits_.maxTotalBytes) + " bytes");
      }
      if (stats_.bytes > limits_.ratioFloorBytes &&
          static_cast<double>(stats_.bytes) >
              limits_.maxRatio * static_cast<double>(archive_.size())) {
        return refuse("", "unpacks to more than " +
                              std::to_string(static_cast<long long>(limits_.maxRatio)) +
                              " times its size, as an archive bomb does");
      }
      for (la_ssize_t done = 0; done < got;) {
        ssize_t n = core::retryOnEintr(
            [&] { return ::write(out.get(), buffer + done, static_cast<size_t>(got - done)); });
        if (n < 0) {
          return refuse(shown, "cannot be written (" + std::string(std::strerror(errno)) + ")");
        }
        done += n;
      }
    }
    return {};
  }

  std::string_view archive_;
  std::string label_;
  UnpackLimits limits_;
  UniqueFd root_;
  UnpackStats stats_;
  std::size_t entries_ = 0;
  std::map<std::string, bool> seen_;    ///< cleaned name -> whether it was a folder
  std::vector<std::string> openParts_;  ///< the folders of the last entry, outermost first
  std::vector<UniqueFd> openFds_;       ///< a descriptor of each
};

}  // namespace

core::Result<std::string> cleanEntryName(std::string_view name) {
  auto refused = [](const char* why) { return core::fail(ErrorCode::kRefused, why); };
  if (name.size() > kMaxNameBytes) return refused("has a name longer than 1024 bytes");
  if (!name.empty() && name.front() == '/') return refused("has an absolute name");
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) return refused("has a control character in its name");
    if (c == '\\') return refused("has a backslash in its name");
  }
  std::vector<std::string> parts = splitParts(name);
  if (parts.size() > kMaxDepth) return refused("is nested more than 32 folders deep");
  for (const auto& part : parts) {
    if (part == "..") return refused("climbs out of its folder with ..");
    if (part.size() > kMaxPartBytes) return refused("has a name part longer than 255 bytes");
  }
  return joinParts(parts);
}

core::Result<UnpackStats> unpackArchive(std::string_view archive, const std::string& into,
                                        const std::string& label, const UnpackLimits& limits) {
  return Unpacker(archive, label, limits).run(into);
}

}  // namespace kaja::marketplace::sync
