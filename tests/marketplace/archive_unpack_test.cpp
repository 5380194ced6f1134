// The archive unpacker against archives an attacker would send: every refusal names the
// entry and leaves the folders beside the target exactly as they were, and what is unpacked
// holds no link, device or name that leads out of the target.
#include <archive.h>
#include <archive_entry.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/util/quote.h"
#include "marketplace/sync/archive.h"
#include "tests/support/archive_builder.h"
#include "tests/support/temp_dir.h"

namespace kaja::marketplace::sync {
namespace {

namespace fs = std::filesystem;
using kaja::testing::ArchiveEntry;
using kaja::testing::ArchiveFormat;
using kaja::testing::buildArchive;
using kaja::testing::readFile;
using Kind = ArchiveEntry::Kind;
using ::testing::HasSubstr;

const std::string kLabel = "the archive from http://127.0.0.1:1/m.tar.gz";
const std::string kCanary = "canary: must never change\n";

// One raw tar record: a ustar header of `type` and `data` padded to 512 bytes, for what
// libarchive's writer will not make (global pax headers, lying ustar names, GNU long names).
std::string tarRecord(const std::string& name, char type, const std::string& data,
                      const std::string& link = "", const std::string& prefix = "") {
  std::string header(512, '\0');
  auto put = [&](size_t at, size_t width, const std::string& text) {
    header.replace(at, std::min(width, text.size()), text.substr(0, width));
  };
  auto octal = [&](size_t at, size_t width, unsigned long long value) {
    char digits[32];
    std::snprintf(digits, sizeof digits, "%0*llo", static_cast<int>(width - 1), value);
    put(at, width - 1, digits);
  };
  put(0, 100, name);
  octal(100, 8, 0644);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, data.size());
  octal(136, 12, 1700000000);
  header[156] = type;
  put(157, 100, link);
  put(257, 6, std::string("ustar\0", 6));
  put(263, 2, "00");
  put(345, 155, prefix);
  header.replace(148, 8, 8, ' ');
  unsigned sum = 0;
  for (unsigned char c : header) sum += c;
  char checksum[8];
  std::snprintf(checksum, sizeof checksum, "%06o", sum);
  header.replace(148, 7, checksum, 7);
  return header + data + std::string((512 - data.size() % 512) % 512, '\0');
}

// One pax record, "LEN key=value\n", LEN counting itself.
std::string paxRecord(const std::string& key, const std::string& value) {
  std::string body = " " + key + "=" + value + "\n";
  size_t length = body.size() + 1;
  while (std::to_string(length).size() + body.size() != length) ++length;
  return std::to_string(length) + body;
}

const std::string kTarEnd(1024, '\0');

// `bytes` gzip-compressed (libarchive's raw format writes one stream, no container).
std::string gzipped(const std::string& bytes) {
  struct archive* writer = archive_write_new();
  archive_write_set_format_raw(writer);
  archive_write_add_filter_gzip(writer);
  std::string out(bytes.size() + 65536, '\0');
  size_t used = 0;
  archive_write_open_memory(writer, out.data(), out.size(), &used);
  struct archive_entry* entry = archive_entry_new();
  archive_entry_set_pathname(entry, "data");
  archive_entry_set_filetype(entry, AE_IFREG);
  archive_entry_set_size(entry, static_cast<la_int64_t>(bytes.size()));
  archive_write_header(writer, entry);
  archive_write_data(writer, bytes.data(), bytes.size());
  archive_entry_free(entry);
  archive_write_close(writer);
  archive_write_free(writer);
  out.resize(used);
  return out;
}

// Every path under `root` (links not followed) with its kind and contents.
std::map<std::string, std::string> snapshot(const std::string& root) {
  std::map<std::string, std::string> out;
  for (const auto& item : fs::recursive_directory_iterator(root)) {
    std::string relative = item.path().lexically_relative(root).string();
    if (item.is_symlink()) {
      out[relative] = "link to " + fs::read_symlink(item.path()).string();
    } else if (item.is_directory()) {
      out[relative] = "folder";
    } else if (item.is_regular_file()) {
      out[relative] = "file " + readFile(item.path().string());
    } else {
      out[relative] = "other";
    }
  }
  return out;
}

class ArchiveUnpackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    into_ = base_.path() + "/jail/into";
    outside_ = base_.path() + "/outside";
    fs::create_directories(into_);
    base_.write("outside/canary.txt", kCanary);
    base_.write("jail/neighbour.txt", kCanary);
    before_ = outsideSnapshot();
    ASSERT_EQ(::stat("/etc/passwd", &passwd_), 0);
  }

  void resetInto() const {
    fs::remove_all(into_);
    fs::create_directory(into_);
  }

  core::Result<UnpackStats> unpack(std::string_view bytes, const UnpackLimits& limits = {}) {
    return unpackArchive(bytes, into_, kLabel, limits);
  }

  std::map<std::string, std::string> outsideSnapshot() const {
    auto all = snapshot(base_.path());
    std::erase_if(all, [](const auto& item) { return item.first.starts_with("jail/into/"); });
    return all;
  }

  // The folders beside the target, the canary and /etc/passwd are as they were.
  void expectNothingOutside() const {
    EXPECT_EQ(outsideSnapshot(), before_);
    EXPECT_EQ(readFile(outside_ + "/canary.txt"), kCanary);
    struct stat canary {};
    ASSERT_EQ(::stat((outside_ + "/canary.txt").c_str(), &canary), 0);
    EXPECT_EQ(canary.st_nlink, 1u);
    struct stat passwd {};
    ASSERT_EQ(::stat("/etc/passwd", &passwd), 0);
    EXPECT_EQ(passwd.st_ino, passwd_.st_ino);
    EXPECT_EQ(passwd.st_nlink, passwd_.st_nlink);
    EXPECT_EQ(passwd.st_size, passwd_.st_size);
    EXPECT_EQ(passwd.st_mtim.tv_nsec, passwd_.st_mtim.tv_nsec);
  }

  // What the target holds: files of one link each, folders, and links that stay inside.
  void expectInsideSafe() const {
    const fs::path root = fs::canonical(into_);
    for (const auto& item : fs::recursive_directory_iterator(into_)) {
      struct stat st {};
      ASSERT_EQ(::lstat(item.path().c_str(), &st), 0);
      const std::string shown = item.path().string();
      if (S_ISLNK(st.st_mode)) {
        const fs::path target = fs::read_symlink(item.path());
        EXPECT_FALSE(target.is_absolute()) << shown;
        for (const auto& part : target) EXPECT_NE(part, "..") << shown;
      } else if (S_ISREG(st.st_mode)) {
        EXPECT_EQ(st.st_nlink, 1u) << shown;
      } else {
        EXPECT_TRUE(S_ISDIR(st.st_mode)) << shown << " is a device, FIFO or socket";
      }
      const std::string landed = fs::weakly_canonical(item.path()).string();
      EXPECT_TRUE(landed.starts_with(root.string() + "/")) << shown << " leads to " << landed;
    }
  }

  // Bytes of every file in the target.
  std::uint64_t bytesOnDisk() const {
    std::uint64_t total = 0;
    for (const auto& item : fs::recursive_directory_iterator(into_)) {
      if (item.is_regular_file() && !item.is_symlink()) total += item.file_size();
    }
    return total;
  }

  // Unpacks `bytes` into a fresh target and expects a refusal that says `why` and names
  // `entry` (or only the archive, when `entry` is empty), with nothing changed outside.
  void expectRefused(const std::string& bytes, const std::string& entry, const std::string& why,
                     const UnpackLimits& limits = {}) {
    resetInto();
    auto result = unpack(bytes, limits);
    ASSERT_FALSE(result.has_value()) << "unpacked although it holds " << entry;
    EXPECT_EQ(result.error().code, core::ErrorCode::kRefused) << result.error().message;
    EXPECT_THAT(result.error().message, HasSubstr(kLabel));
    if (!entry.empty()) {
      EXPECT_THAT(result.error().message, HasSubstr("entry " + core::quoteForMessage(entry)));
    }
    EXPECT_THAT(result.error().message, HasSubstr(why));
    expectNothingOutside();
    expectInsideSafe();
  }

  void expectRefused(const std::vector<ArchiveEntry>& entries, const std::string& entry,
                     const std::string& why, ArchiveFormat format = ArchiveFormat::kTar) {
    expectRefused(buildArchive(entries, format), entry, why);
  }

  kaja::testing::TempDir base_;
  std::string into_;
  std::string outside_;
  std::map<std::string, std::string> before_;
  struct stat passwd_ {};
};

TEST_F(ArchiveUnpackTest, RefusesNamesThatClimbOutOrCannotBeWrittenSafely) {
  struct Case {
    std::string name;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"../../.bashrc", "climbs out of its folder with .."},
      {"a/../../x", "climbs out of its folder with .."},
      {"./../x", "climbs out of its folder with .."},
      {"a/./../../x", "climbs out of its folder with .."},
      {"..", "climbs out of its folder with .."},
      {"a/b/..", "climbs out of its folder with .."},
      {"/etc/passwd", "has an absolute name"},
      {outside_ + "/planted.txt", "has an absolute name"},
      {"//outside/x", "has an absolute name"},
      {"..\\..\\x", "has a backslash in its name"},
      {"a\\b", "has a backslash in its name"},
      {"a\x01"
       "b",
       "has a control character in its name"},
      {"new\nline", "has a control character in its name"},
      {"esc\x1b[2J", "has a control character in its name"},
      {"del\x7f", "has a control character in its name"},
      {std::string(2000, 'n'), "has a name longer than 1024 bytes"},
      {std::string(300, 'p') + "/x", "has a name part longer than 255 bytes"},
  };
  for (ArchiveFormat format : {ArchiveFormat::kTar, ArchiveFormat::kTarGz, ArchiveFormat::kZip}) {
    for (const auto& one : cases) {
      // libarchive's zip reader gives `\` as `/` (below); tar keeps the name as written.
      if (format == ArchiveFormat::kZip && one.name.find('\\') != std::string::npos) continue;
      SCOPED_TRACE(core::quoteForMessage(one.name) + " in format " +
                   std::to_string(static_cast<int>(format)));
      expectRefused({{"ok.txt", "fine"}, {one.name, "pwned\n"}}, one.name, one.why, format);
      EXPECT_EQ(readFile(into_ + "/ok.txt"), "fine");
    }
  }
  EXPECT_FALSE(fs::exists(base_.path() + "/.bashrc"));
  EXPECT_FALSE(fs::exists(outside_ + "/planted.txt"));
}

TEST_F(ArchiveUnpackTest, ReadsZipBackslashesAsSlashesAndStillRefusesTheClimb) {
  expectRefused({{"..\\..\\x", "pwned"}}, "../../x", "climbs out of its folder with ..",
                ArchiveFormat::kZip);
  resetInto();
  auto result = unpack(buildArchive({{"a\\b", "inside"}}, ArchiveFormat::kZip));
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(readFile(into_ + "/a/b"), "inside");
  expectInsideSafe();
  expectNothingOutside();
}

TEST_F(ArchiveUnpackTest, AcceptsNamesThatOnlyLookLikeDots) {
  resetInto();
  auto result = unpack(buildArchive({{"...", "a"}, {"..a", "b"}, {"a../.b..", "c"}}));
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(readFile(into_ + "/..."), "a");
  EXPECT_EQ(readFile(into_ + "/..a"), "b");
  EXPECT_EQ(readFile(into_ + "/a../.b.."), "c");
  expectNothingOutside();
}

TEST_F(ArchiveUnpackTest, RefusesFortyNestedFoldersAtTheThirtyThird) {
  std::vector<ArchiveEntry> entries;
  std::string name;
  for (int depth = 1; depth <= 40; ++depth) {
    name += "d/";
    entries.push_back({name, "", Kind::kFolder});
  }
  entries.push_back({name + "deep.txt", "deep"});
  std::string thirtyThird;
  for (int depth = 1; depth <= 33; ++depth) thirtyThird += "d/";
  expectRefused(entries, thirtyThird, "is nested more than 32 folders deep");
  std::string deepest = into_;
  for (int depth = 1; depth <= 32; ++depth) deepest += "/d";
  EXPECT_TRUE(fs::is_directory(deepest));
  EXPECT_FALSE(fs::exists(deepest + "/d"));
}

TEST_F(ArchiveUnpackTest, RefusesLinksThatLeadOut) {
  struct Case {
    std::string name;
    std::string target;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"l", "/etc", "is a link that points to an absolute path"},
      {"l", outside_, "is a link that points to an absolute path"},
      {"sub/l", "/tmp", "is a link that points to an absolute path"},
      {"l", "../../x", "is a link that points outside its folder with .."},
      {"l", "a/../..", "is a link that points outside its folder with .."},
      {"l", "..", "is a link that points outside its folder with .."},
      {"sub/l", "./..//", "is a link that points outside its folder with .."},
      {"l", "..\\..\\x", "is a link that has a backslash in its target"},
      {"l", "x\x1b]0;t\x07", "is a link that has a control character in its target"},
  };
  for (ArchiveFormat format : {ArchiveFormat::kTar, ArchiveFormat::kZip}) {
    for (const auto& one : cases) {
      SCOPED_TRACE(one.name + " -> " + core::quoteForMessage(one.target));
      expectRefused({{one.name, "", Kind::kSymlink, one.target}}, one.name, one.why, format);
      EXPECT_FALSE(fs::is_symlink(into_ + "/" + one.name));
    }
  }
}

TEST_F(ArchiveUnpackTest, RefusesAChainOfLinksAtTheLinkThatClimbs) {
  // `a` -> `b` is harmless alone; `b` -> `..` (or `c/..`) would make it lead out.
  expectRefused({{"a", "", Kind::kSymlink, "b"}, {"b", "", Kind::kSymlink, ".."}}, "b",
                "points outside its folder with ..");
  expectRefused({{"a", "", Kind::kSymlink, "b/c"}, {"b", "", Kind::kSymlink, "c/.."}}, "b",
                "points outside its folder with ..");
  expectRefused({{"sub/", "", Kind::kFolder},
                 {"sub/up", "", Kind::kSymlink, "."},
                 {"sub/up2", "", Kind::kSymlink, "up/.."}},
                "sub/up2", "points outside its folder with ..");
}

TEST_F(ArchiveUnpackTest, KeepsAChainOfInsideLinksInside) {
  resetInto();
  auto result = unpack(buildArchive({{"sub/f", "through"},
                                     {"a", "", Kind::kSymlink, "b"},
                                     {"b", "", Kind::kSymlink, "sub"},
                                     {"sub/self", "", Kind::kSymlink, "."}}));
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->links, 3u);
  EXPECT_EQ(readFile(into_ + "/a/f"), "through");
  EXPECT_EQ(fs::canonical(into_ + "/a/self/self/f"), fs::canonical(into_ + "/sub/f"));
  expectInsideSafe();
  expectNothingOutside();
}

TEST_F(ArchiveUnpackTest, RefusesToWriteThroughALink) {
  expectRefused({{"sub/", "", Kind::kFolder}, {"l", "", Kind::kSymlink, "sub"}, {"l/x", "pwned"}},
                "l/x", "would be written through a link or a file");
  EXPECT_FALSE(fs::exists(into_ + "/sub/x"));
  expectRefused({{"l", "", Kind::kSymlink, "later"}, {"l/x", "pwned"}}, "l/x",
                "would be written through a link or a file");
  EXPECT_FALSE(fs::exists(into_ + "/later"));
  // The link first, then a file or folder of its name, then the write through it.
  expectRefused({{"l", "", Kind::kSymlink, "sub"}, {"l", "pwned"}}, "l", "appears twice");
  EXPECT_EQ(fs::read_symlink(into_ + "/l"), "sub");
  expectRefused({{"sub/", "", Kind::kFolder},
                 {"l", "", Kind::kSymlink, "sub"},
                 {"l/", "", Kind::kFolder},
                 {"l/x", "pwned"}},
                "l/", "appears twice");
  EXPECT_FALSE(fs::exists(into_ + "/sub/x"));
}

TEST_F(ArchiveUnpackTest, RefusesHardLinksDevicesAndFifos) {
  expectRefused({{"f", "inside"}, {"h", "", Kind::kHardlink, "f"}}, "h", "is a hard link");
  EXPECT_FALSE(fs::exists(into_ + "/h"));
  expectRefused({{"h", "", Kind::kHardlink, "/etc/passwd"}}, "h", "is a hard link");
  expectRefused({{"h", "", Kind::kHardlink, outside_ + "/canary.txt"}}, "h", "is a hard link");
  expectRefused({{"h", "", Kind::kHardlink, "../../outside/canary.txt"}}, "h", "is a hard link");
  expectRefused({{"p", "", Kind::kFifo}}, "p", "is a device, FIFO or socket");
  EXPECT_FALSE(fs::exists(fs::symlink_status(into_ + "/p")));
  expectRefused({{"dev/null", "", Kind::kCharDevice}}, "dev/null", "is a device, FIFO or socket");
  EXPECT_FALSE(fs::exists(fs::symlink_status(into_ + "/dev/null")));
}

TEST_F(ArchiveUnpackTest, RefusesTheSameNameTwiceAndAFileWhereAFolderIs) {
  expectRefused({{"f", "first"}, {"f", "second"}}, "f", "appears twice");
  EXPECT_EQ(readFile(into_ + "/f"), "first");
  expectRefused({{"./f", "first"}, {"f", "second"}}, "f", "appears twice");
  EXPECT_EQ(readFile(into_ + "/f"), "first");
  expectRefused({{"d/", "", Kind::kFolder}, {"d", "file"}}, "d", "appears twice");
  EXPECT_TRUE(fs::is_directory(into_ + "/d"));
  expectRefused({{"d", "file"}, {"d/", "", Kind::kFolder}}, "d/", "appears twice");
  EXPECT_EQ(readFile(into_ + "/d"), "file");
  expectRefused({{"d", "file"}, {"d/x", "under a file"}}, "d/x",
                "would be written through a link or a file");
  expectRefused({{"d/x", "makes d"}, {"d", "file"}}, "d", "cannot be written");
  EXPECT_EQ(readFile(into_ + "/d/x"), "makes d");
}

TEST_F(ArchiveUnpackTest, AcceptsAFolderListedTwice) {
  resetInto();
  auto result = unpack(buildArchive({{"d/", "", Kind::kFolder},
                                     {"d/x", "x"},
                                     {"d/", "", Kind::kFolder},
                                     {"./d", "", Kind::kFolder}}));
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(readFile(into_ + "/d/x"), "x");
}

TEST_F(ArchiveUnpackTest, RefusesMoreEntriesOrBytesThanTheLimits) {
  std::vector<ArchiveEntry> five;
  for (int i = 0; i < 5; ++i) five.push_back({"f" + std::to_string(i), "x"});
  UnpackLimits limits;
  limits.maxEntries = 5;
  resetInto();
  ASSERT_TRUE(unpack(buildArchive(five), limits).has_value());
  auto six = five;
  six.push_back({"f5", "x"});
  expectRefused(buildArchive(six), "", "holds more than 5 entries", limits);
  EXPECT_FALSE(fs::exists(into_ + "/f5"));

  limits = {};
  limits.maxTotalBytes = 1000;
  expectRefused(buildArchive({{"a", std::string(600, 'a')}, {"b", std::string(600, 'b')}}), "",
                "unpacks to more than 1000 bytes", limits);
  EXPECT_LE(bytesOnDisk(), 1000u);

  limits = {};
  limits.maxFileBytes = 100;
  resetInto();
  ASSERT_TRUE(unpack(buildArchive({{"exact", std::string(100, 'e')}}), limits).has_value());
  expectRefused(buildArchive({{"big", std::string(101, 'b')}}), "big", "is larger than 100 bytes",
                limits);
  EXPECT_LE(bytesOnDisk(), 100u);
}

TEST_F(ArchiveUnpackTest, StopsAnArchiveBombEarly) {
  // 50 MB of zeros in files under the 16 MB file limit, so only the ratio can stop it.
  std::vector<ArchiveEntry> entries;
  for (int i = 0; i < 5; ++i)
    entries.push_back({"zeros" + std::to_string(i), std::string(10 << 20, '\0')});
  const UnpackLimits limits;
  for (ArchiveFormat format :
       {ArchiveFormat::kTarGz, ArchiveFormat::kTarZst, ArchiveFormat::kZip}) {
    SCOPED_TRACE("format " + std::to_string(static_cast<int>(format)));
    const std::string bomb = buildArchive(entries, format);
    ASSERT_LT(bomb.size(), 200u * 1024);
    expectRefused(bomb, "", "times its size, as an archive bomb does");
    const double allowed = std::max(static_cast<double>(limits.ratioFloorBytes),
                                    limits.maxRatio * static_cast<double>(bomb.size()));
    EXPECT_LE(static_cast<double>(bytesOnDisk()), allowed);
    EXPECT_LT(bytesOnDisk(), limits.maxFileBytes);
    EXPECT_FALSE(fs::exists(into_ + "/zeros4"));
  }
}

TEST_F(ArchiveUnpackTest, CallsDamagedOrForeignBytesInvalid) {
  const std::string good =
      buildArchive(kaja::testing::marketplaceEntries(40), ArchiveFormat::kTarGz);
  const std::string tar = buildArchive(kaja::testing::marketplaceEntries(40), ArchiveFormat::kTar);
  const std::string zip = buildArchive(kaja::testing::marketplaceEntries(40), ArchiveFormat::kZip);
  std::mt19937 random(1);
  std::string garbage(4096, '\0');
  for (char& c : garbage) c = static_cast<char>(random());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"tar.gz cut in half", good.substr(0, good.size() / 2)},
      {"tar cut in half", tar.substr(0, tar.size() / 2)},
      {"zip cut in half", zip.substr(0, zip.size() / 2)},
      {"gzip magic alone", "\x1f\x8b"},
      {"random bytes", garbage},
      {"nothing", ""},
  };
  for (const auto& [what, bytes] : cases) {
    SCOPED_TRACE(what);
    resetInto();
    auto result = unpack(bytes);
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code, core::ErrorCode::kInvalidConfig) << result.error().message;
    EXPECT_THAT(result.error().message, HasSubstr(kLabel));
    expectNothingOutside();
    expectInsideSafe();
  }
}

TEST_F(ArchiveUnpackTest, RunsNoOutsideDecompressor) {
  // libarchive hands lrzip, lzop and grzip streams to a program on PATH unless told not to;
  // each stand-in here leaves a mark if it is run.
  const std::string bin = base_.path() + "/bin";
  for (const char* program : {"lrzip", "lzop", "grzip", "lz4", "zstd", "xz", "gzip", "bzip2"}) {
    base_.writeScript(std::string("bin/") + program,
                      ": > '" + base_.path() + "/ran-" + program + "'\nexit 1");
  }
  before_ = outsideSnapshot();
  const std::string oldPath = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  ::setenv("PATH", bin.c_str(), 1);
  const std::vector<std::pair<std::string, std::string>> streams = {
      {"lrzip", std::string("LRZI\0\6", 6) + std::string(18, '\0')},
      {"lzop",
       std::string("\x89LZO\0\r\n\x1a\n\x10\x30\x20\xa0\x09\x40\x01\x05\x03\0\0\1\0\0\x81\xa4",
                   26) +
           std::string(12, '\0')},
      {"grzip", std::string("GRZipII\0\2\4:)", 12) + std::string(8, '\0')},
  };
  for (const auto& [what, bytes] : streams) {
    SCOPED_TRACE(what);
    resetInto();
    auto result = unpack(bytes);
    EXPECT_FALSE(result.has_value());
    EXPECT_FALSE(fs::exists(base_.path() + "/ran-" + what)) << what << " was run";
    expectNothingOutside();
  }
  ::setenv("PATH", oldPath.c_str(), 1);
  resetInto();
  auto zst = unpack(buildArchive({{"x", "zstd inside"}}, ArchiveFormat::kTarZst));
  EXPECT_TRUE(zst.has_value()) << zst.error().message;
}

TEST_F(ArchiveUnpackTest, UnpacksEveryFormatByteForByte) {
  std::string blob;
  for (int i = 0; i < 300 * 256; ++i) blob += static_cast<char>(i % 256);
  auto entries = kaja::testing::marketplaceEntries(3);
  entries.push_back({"bin/blob", blob});
  entries.push_back({"bin/run.sh", "#!/bin/sh\necho hi\n", Kind::kFile, "", 0755});
  entries.push_back({"empty/", "", Kind::kFolder});
  entries.push_back({"latest", "", Kind::kSymlink, "personas/team.toml"});
  std::uint64_t bytes = 0;
  std::size_t files = 0;
  for (const auto& entry : entries) {
    if (entry.kind == Kind::kFile) {
      bytes += entry.data.size();
      ++files;
    }
  }
  for (ArchiveFormat format : {ArchiveFormat::kTar, ArchiveFormat::kTarGz, ArchiveFormat::kTarZst,
                               ArchiveFormat::kTarXz, ArchiveFormat::kZip}) {
    SCOPED_TRACE("format " + std::to_string(static_cast<int>(format)));
    resetInto();
    auto result = unpack(buildArchive(entries, format));
    ASSERT_TRUE(result.has_value()) << result.error().message;
    EXPECT_EQ(result->files, files);
    EXPECT_EQ(result->links, 1u);
    EXPECT_EQ(result->bytes, bytes);
    for (const auto& entry : entries) {
      if (entry.kind == Kind::kFile) EXPECT_EQ(readFile(into_ + "/" + entry.name), entry.data);
    }
    EXPECT_NE(fs::status(into_ + "/bin/run.sh").permissions() & fs::perms::owner_exec,
              fs::perms::none);
    EXPECT_EQ(fs::status(into_ + "/bin/blob").permissions() & fs::perms::owner_exec,
              fs::perms::none);
    EXPECT_TRUE(fs::is_directory(into_ + "/empty"));
    EXPECT_EQ(fs::read_symlink(into_ + "/latest"), "personas/team.toml");
    expectInsideSafe();
    expectNothingOutside();
  }
}

TEST_F(ArchiveUnpackTest, UnpacksAGitHubTarballUnderItsOneTopFolder) {
  // What `git archive` and GitHub's codeload write: a global pax header, then one folder.
  const std::string top = "owner-market-0123abc";
  const std::string manifest = "description = \"x\"\ncommand = \"/bin/cat\"\n";
  const std::string tarball =
      gzipped(tarRecord("pax_global_header", 'g',
                        paxRecord("comment", "0123abc0123abc0123abc0123abc0123abc0123a")) +
              tarRecord(top + "/", '5', "") + tarRecord(top + "/abilities/", '5', "") +
              tarRecord(top + "/abilities/x/", '5', "") +
              tarRecord(top + "/abilities/x/mcp.toml", '0', manifest) + kTarEnd);
  auto result = unpack(tarball);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->files, 1u);
  std::vector<std::string> names;
  for (const auto& item : fs::directory_iterator(into_)) {
    names.push_back(item.path().filename().string());
  }
  EXPECT_EQ(names, std::vector<std::string>{top});
  EXPECT_EQ(readFile(into_ + "/" + top + "/abilities/x/mcp.toml"), manifest);
  expectNothingOutside();
}

TEST_F(ArchiveUnpackTest, ChecksTheNameThatPaxOrGnuHeadersReallyGive) {
  // The ustar name is harmless; the pax or GNU record that overrides it is not.
  expectRefused(tarRecord("PaxHeaders/x", 'x', paxRecord("path", "../../evil.txt")) +
                    tarRecord("innocent.txt", '0', "pwned") + kTarEnd,
                "../../evil.txt", "climbs out of its folder with ..");
  EXPECT_FALSE(fs::exists(into_ + "/innocent.txt"));
  expectRefused(tarRecord("PaxHeaders/l", 'x', paxRecord("linkpath", "/etc")) +
                    tarRecord("l", '2', "", "safe") + kTarEnd,
                "l", "is a link that points to an absolute path");
  expectRefused(tarRecord("././@LongLink", 'L', std::string("../../long.txt") + '\0') +
                    tarRecord("short.txt", '0', "pwned") + kTarEnd,
                "../../long.txt", "climbs out of its folder with ..");
  expectRefused(tarRecord("x.txt", '0', "pwned", "", "../..") + kTarEnd, "../../x.txt",
                "climbs out of its folder with ..");
  expectRefused(gzipped(tarRecord("PaxHeaders/x", 'x', paxRecord("path", "/tmp/evil.txt")) +
                        tarRecord("innocent.txt", '0', "pwned") + kTarEnd),
                "/tmp/evil.txt", "has an absolute name");
  EXPECT_FALSE(fs::exists("/tmp/evil.txt"));
}

TEST(ArchiveUnpackNameTest, CleansHarmlessNames) {
  EXPECT_EQ(cleanEntryName("./a//b/").value_or("?"), "a/b");
  EXPECT_EQ(cleanEntryName(".").value_or("?"), "");
  EXPECT_EQ(cleanEntryName("./").value_or("?"), "");
  EXPECT_EQ(cleanEntryName("a/./b/.").value_or("?"), "a/b");
  EXPECT_EQ(cleanEntryName("...").value_or("?"), "...");
  EXPECT_EQ(cleanEntryName("a..b/c").value_or("?"), "a..b/c");
}

TEST(ArchiveUnpackNameTest, RefusesWhatCouldLeadOutWithTheReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"..", "climbs out of its folder with .."},
      {"a/..", "climbs out of its folder with .."},
      {"./../a", "climbs out of its folder with .."},
      {"/a", "has an absolute name"},
      {"a\\..\\b", "has a backslash in its name"},
      {std::string("a\0b", 3), "has a control character in its name"},
      {"a\tb", "has a control character in its name"},
  };
  for (const auto& [name, why] : cases) {
    auto cleaned = cleanEntryName(name);
    ASSERT_FALSE(cleaned.has_value()) << core::quoteForMessage(name) << " became " << *cleaned;
    EXPECT_EQ(cleaned.error().code, core::ErrorCode::kRefused);
    EXPECT_THAT(cleaned.error().message, HasSubstr(why));
  }
}

TEST(ArchiveUnpackNameTest, HoldsTheLengthAndDepthLimitsExactly) {
  const std::string part(255, 'p');
  const std::string longest = part + "/" + part + "/" + part + "/" + part + "/";
  ASSERT_EQ(longest.size(), 1024u);
  EXPECT_TRUE(cleanEntryName(longest).has_value());
  EXPECT_FALSE(cleanEntryName(longest + "q").has_value());
  EXPECT_FALSE(cleanEntryName(std::string(256, 'p')).has_value());
  std::string deep;
  for (int i = 0; i < 32; ++i) deep += "d/";
  EXPECT_TRUE(cleanEntryName(deep).has_value());
  EXPECT_FALSE(cleanEntryName(deep + "d").has_value());
  // `.` parts do not count as depth.
  EXPECT_TRUE(cleanEntryName(deep + "./././").has_value());
}

}  // namespace
}  // namespace kaja::marketplace::sync
