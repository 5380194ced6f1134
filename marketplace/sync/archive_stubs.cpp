// libarchive's functions as kaja calls them: each opens libarchive.so.13 on its first call
// (core/util/lazy_library.h), so only a marketplace sync loads it.
#include <archive.h>
#include <archive_entry.h>

#include "core/util/lazy_library.h"

namespace {
kaja::core::util::LazyLibrary& libarchive() { return kaja::core::util::archiveLibrary(); }
}  // namespace

KAJA_LAZY_FUNCTION(libarchive(), struct archive*, archive_read_new, (void), ())
KAJA_LAZY_FUNCTION(libarchive(), int, archive_read_free, (struct archive * reader), (reader))
KAJA_LAZY_FUNCTION(libarchive(), const char*, archive_error_string, (struct archive * reader),
                   (reader))
KAJA_LAZY_FUNCTION(libarchive(), la_ssize_t, archive_read_data,
                   (struct archive * reader, void* buffer, size_t size), (reader, buffer, size))
KAJA_LAZY_FUNCTION(libarchive(), int, archive_read_next_header,
                   (struct archive * reader, struct archive_entry** entry), (reader, entry))
KAJA_LAZY_FUNCTION(libarchive(), int, archive_read_open_memory,
                   (struct archive * reader, const void* buffer, size_t size),
                   (reader, buffer, size))
KAJA_LAZY_FUNCTION(libarchive(), int, archive_read_support_filter_bzip2, (struct archive * reader),
                   (reader))
KAJA_LAZY_FUNCTION(libarchive(), int, archive_read_support_filter_gzip, (struct archive * reader),
                   (reader))
KAJA_LAZY_FUNCTION(libarchive(), int, archive_read_support_filter_xz, (struct archive * reader),
                   (reader))
KAJA_LAZY_FUNCTION(libarchive(), int, archive_read_support_filter_zstd, (struct archive * reader),
                   (reader))
KAJA_LAZY_FUNCTION(libarchive(), int, archive_read_support_format_gnutar, (struct archive * reader),
                   (reader))
KAJA_LAZY_FUNCTION(libarchive(), int, archive_read_support_format_tar, (struct archive * reader),
                   (reader))
KAJA_LAZY_FUNCTION(libarchive(), int, archive_read_support_format_zip, (struct archive * reader),
                   (reader))
KAJA_LAZY_FUNCTION(libarchive(), __LA_MODE_T, archive_entry_filetype,
                   (struct archive_entry * entry), (entry))
KAJA_LAZY_FUNCTION(libarchive(), __LA_MODE_T, archive_entry_perm, (struct archive_entry * entry),
                   (entry))
KAJA_LAZY_FUNCTION(libarchive(), const char*, archive_entry_hardlink,
                   (struct archive_entry * entry), (entry))
KAJA_LAZY_FUNCTION(libarchive(), const char*, archive_entry_pathname,
                   (struct archive_entry * entry), (entry))
KAJA_LAZY_FUNCTION(libarchive(), const char*, archive_entry_symlink, (struct archive_entry * entry),
                   (entry))
KAJA_LAZY_FUNCTION(libarchive(), la_int64_t, archive_entry_size, (struct archive_entry * entry),
                   (entry))
KAJA_LAZY_FUNCTION(libarchive(), int, archive_entry_size_is_set, (struct archive_entry * entry),
                   (entry))
