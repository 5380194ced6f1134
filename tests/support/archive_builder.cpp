#include "tests/support/archive_builder.h"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <cstdlib>

namespace kaja::testing {
namespace {

void check(int status, struct archive* a, const char* what) {
  if (status >= ARCHIVE_WARN) return;
  std::fprintf(stderr, "buildArchive: %s: %s\n", what, archive_error_string(a));
  std::abort();
}

}  // namespace

std::string buildArchive(const std::vector<ArchiveEntry>& entries, ArchiveFormat format) {
  struct archive* a = archive_write_new();
  if (format == ArchiveFormat::kZip) {
    check(archive_write_set_format_zip(a), a, "zip");
  } else {
    check(archive_write_set_format_pax_restricted(a), a, "tar");
  }
  if (format == ArchiveFormat::kTarGz) check(archive_write_add_filter_gzip(a), a, "gzip");
  if (format == ArchiveFormat::kTarZst) check(archive_write_add_filter_zstd(a), a, "zstd");
  if (format == ArchiveFormat::kTarXz) check(archive_write_add_filter_xz(a), a, "xz");
  // Written to a growing buffer: libarchive wants the size up front, so grow and retry.
  std::string out(1 << 20, '\0');
  for (;;) {
    size_t used = 0;
    check(archive_write_open_memory(a, out.data(), out.size(), &used), a, "open");
    bool full = false;
    for (const auto& item : entries) {
      struct archive_entry* entry = archive_entry_new();
      archive_entry_set_pathname(entry, item.name.c_str());
      archive_entry_set_perm(entry, item.mode);
      archive_entry_set_mtime(entry, 1700000000, 0);
      switch (item.kind) {
        case ArchiveEntry::Kind::kFile:
          archive_entry_set_filetype(entry, AE_IFREG);
          archive_entry_set_size(entry, static_cast<la_int64_t>(item.data.size()));
          break;
        case ArchiveEntry::Kind::kFolder:
          archive_entry_set_filetype(entry, AE_IFDIR);
          archive_entry_set_perm(entry, 0755);
          break;
        case ArchiveEntry::Kind::kSymlink:
          archive_entry_set_filetype(entry, AE_IFLNK);
          archive_entry_set_symlink(entry, item.target.c_str());
          break;
        case ArchiveEntry::Kind::kHardlink:
          archive_entry_set_filetype(entry, AE_IFREG);
          archive_entry_set_hardlink(entry, item.target.c_str());
          break;
        case ArchiveEntry::Kind::kFifo:
          archive_entry_set_filetype(entry, AE_IFIFO);
          break;
        case ArchiveEntry::Kind::kCharDevice:
          archive_entry_set_filetype(entry, AE_IFCHR);
          archive_entry_set_rdev(entry, makedev(1, 3));
          break;
      }
      int status = archive_write_header(a, entry);
      if (status == ARCHIVE_FATAL) full = true;
      if (!full && item.kind == ArchiveEntry::Kind::kFile && !item.data.empty()) {
        if (archive_write_data(a, item.data.data(), item.data.size()) < 0) full = true;
      }
      archive_entry_free(entry);
      if (full) break;
    }
    if (!full && archive_write_close(a) == ARCHIVE_OK) {
      archive_write_free(a);
      out.resize(used);
      return out;
    }
    // Out of room: start again with twice the buffer.
    archive_write_free(a);
    a = archive_write_new();
    if (format == ArchiveFormat::kZip) {
      archive_write_set_format_zip(a);
    } else {
      archive_write_set_format_pax_restricted(a);
    }
    if (format == ArchiveFormat::kTarGz) archive_write_add_filter_gzip(a);
    if (format == ArchiveFormat::kTarZst) archive_write_add_filter_zstd(a);
    if (format == ArchiveFormat::kTarXz) archive_write_add_filter_xz(a);
    out.assign(out.size() * 2, '\0');
    if (out.size() > (size_t{1} << 31)) std::abort();
  }
}

std::vector<ArchiveEntry> marketplaceEntries(int count, const std::string& top) {
  std::string prefix = top.empty() ? "" : top + "/";
  std::vector<ArchiveEntry> entries;
  std::string persona = "abilities = [";
  for (int i = 0; i < count; ++i) {
    std::string name = "ability-" + std::to_string(i);
    entries.push_back(
        {prefix + "abilities/" + name + "/mcp.toml",
         "description = \"ability number " + std::to_string(i) + "\"\ncommand = \"/bin/cat\"\n"});
    persona += (i > 0 ? ", \"" : "\"") + name + "\"";
  }
  persona += "]\n";
  entries.push_back({prefix + "personas/team.toml", persona});
  return entries;
}

}  // namespace kaja::testing
