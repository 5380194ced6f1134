// K15 against real folders and symlinks in a temp dir.
#include "core/policy/folder_guard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/policy/path_resolver.h"
#include "tests/support/temp_dir.h"

namespace kaja::core::policy {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

class FolderGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // home/notes (writable), home/site (read-only) with home/site/drafts (writable) inside.
    root_ = fs::canonical(dir_.path()).string();
    home_ = root_ + "/home";
    dir_.write("home/notes/a.md", "a");
    dir_.write("home/site/index.html", "i");
    dir_.write("home/site/drafts/d.md", "d");
    dir_.write("elsewhere/x", "x");
    fs::create_directory_symlink(home_ + "/site", home_ + "/notes/to-site");
    fs::create_symlink(home_ + "/site/index.html", home_ + "/notes/index-link.html");
    fs::create_symlink(home_ + "/site/new-page.html", home_ + "/notes/dangling.html");
    ability_.name = "filesystem";
    ability_.pathArgs = {"path", "paths", "destination"};
  }

  FolderGuard guard(std::vector<PersonaRoot> roots) {
    auto made = FolderGuard::create(roots, home_);
    EXPECT_TRUE(made) << made.error().describe();
    return made ? std::move(*made) : FolderGuard::create({}, home_).value();
  }

  FolderGuard writerGuard() {
    return guard(
        {{"~/notes", false, false}, {"~/site", true, false}, {"~/site/drafts", false, false}});
  }

  std::expected<std::vector<CheckedPath>, Refusal> check(const FolderGuard& g,
                                                         const mcp::Json& arguments) {
    return g.check(ability_, arguments);
  }

  kaja::testing::TempDir dir_;
  std::string root_;
  std::string home_;
  Ability ability_;
};

TEST_F(FolderGuardTest, WritableFolderPasses) {
  auto g = writerGuard();
  auto result = check(g, {{"path", "~/notes/a.md"}});
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_EQ(result->size(), 1u);
  EXPECT_EQ((*result)[0].resolved, home_ + "/notes/a.md");
  EXPECT_EQ((*result)[0].folder->given, "~/notes");
  EXPECT_TRUE(check(g, {{"path", home_ + "/notes"}}));  // the folder itself
}

TEST_F(FolderGuardTest, ReadOnlyFolderRefusesAndNamesArgumentPathAndRule) {
  auto g = writerGuard();
  auto result = check(g, {{"path", "~/site/index.html"}});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().rule, rule::kReadOnlyFolder);
  EXPECT_THAT(result.error().message, HasSubstr("Argument path (\"~/site/index.html\")"));
  EXPECT_THAT(result.error().message, HasSubstr("read-only folder ~/site"));
  EXPECT_THAT(result.error().message, HasSubstr(home_ + "/site/index.html"));
}

TEST_F(FolderGuardTest, NearestFolderDecidesSoAWritableFolderInsideReadOnlyIsWritable) {
  auto g = writerGuard();
  auto result = check(g, {{"path", "~/site/drafts/d.md"}});
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)[0].folder->given, "~/site/drafts");
  // "drafts-old" shares a prefix with "drafts" but is not inside it.
  EXPECT_FALSE(check(g, {{"path", "~/site/drafts-old/x.md"}}));
}

TEST_F(FolderGuardTest, SymlinksFromWritableIntoReadOnlyAreRefused) {
  auto g = writerGuard();
  auto viaDir = check(g, {{"path", "~/notes/to-site/index.html"}});
  ASSERT_FALSE(viaDir);
  EXPECT_EQ(viaDir.error().rule, rule::kReadOnlyFolder);
  auto viaFile = check(g, {{"path", "~/notes/index-link.html"}});
  ASSERT_FALSE(viaFile);
  EXPECT_EQ(viaFile.error().rule, rule::kReadOnlyFolder);
  // A dangling link would create its target, in the read-only folder.
  auto dangling = check(g, {{"path", "~/notes/dangling.html"}});
  ASSERT_FALSE(dangling);
  EXPECT_THAT(dangling.error().message, HasSubstr(home_ + "/site/new-page.html"));
}

TEST_F(FolderGuardTest, HardLinksToFilesAnywhereAreRefusedInEverySpelling) {
  auto g = writerGuard();
  // A second name, in the writable folder, for a file of the read-only one: writing it in
  // place would change the read-only file.
  ASSERT_EQ(::link((home_ + "/site/index.html").c_str(), (home_ + "/notes/same.html").c_str()), 0);
  for (const std::string& spelling :
       {std::string("~/notes/same.html"), home_ + "/notes/same.html", home_ + "/notes/./same.html",
        home_ + "//notes/same.html", home_ + "/notes/to-site/../notes/same.html"}) {
    auto result = check(g, {{"path", spelling}});
    ASSERT_FALSE(result) << spelling;
    EXPECT_EQ(result.error().rule, rule::kLinkedFile) << spelling;
    EXPECT_THAT(result.error().message, HasSubstr("2 names (hard links)")) << spelling;
  }
  // In a list of paths, and as the last of several arguments.
  auto listed = check(g, {{"paths", {"~/notes/a.md", "~/notes/same.html"}}});
  ASSERT_FALSE(listed);
  EXPECT_EQ(listed.error().rule, rule::kLinkedFile);
  // Through a symlink to the second name, and a file outside every folder linked in.
  fs::create_symlink(home_ + "/notes/same.html", home_ + "/notes/to-same");
  EXPECT_EQ(check(g, {{"path", "~/notes/to-same"}}).error().rule, rule::kLinkedFile);
  ASSERT_EQ(::link((root_ + "/elsewhere/x").c_str(), (home_ + "/notes/x").c_str()), 0);
  EXPECT_EQ(check(g, {{"path", "~/notes/x"}}).error().rule, rule::kLinkedFile);
  // Once the read-only file's other name is gone, the file is the folder's own again.
  ASSERT_EQ(::unlink((home_ + "/notes/to-same").c_str()), 0);
  ASSERT_EQ(::unlink((home_ + "/notes/same.html").c_str()), 0);
  EXPECT_TRUE(check(g, {{"path", "~/notes/same.html"}}));
  // Folders have several links by nature and are not files with other names.
  EXPECT_TRUE(check(g, {{"path", "~/notes"}}));
}

TEST_F(FolderGuardTest, DotDotEscapesAreRefused) {
  auto g = writerGuard();
  auto intoReadOnly = check(g, {{"path", home_ + "/notes/../site/index.html"}});
  ASSERT_FALSE(intoReadOnly);
  EXPECT_EQ(intoReadOnly.error().rule, rule::kReadOnlyFolder);
  auto out = check(g, {{"path", "~/notes/new/../../../elsewhere/x"}});
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().rule, rule::kOutsideFolders);
  // `..` after a symlink climbs from the link's target, as the kernel does.
  auto afterLink = check(g, {{"path", "~/notes/to-site/../notes/a.md"}});
  ASSERT_TRUE(afterLink) << afterLink.error().message;
  auto past = check(g, {{"path", "/../../" + home_ + "/site/x"}});
  ASSERT_FALSE(past);
  EXPECT_EQ(past.error().rule, rule::kReadOnlyFolder);
}

// Found by an outside review: with writable folders only, a relative path went unchecked,
// and "../../../…/secrets.toml" overwrote kaja's secrets and its audit log, wherever the
// server's working folder was. A relative path is refused whenever a write is checked.
TEST_F(FolderGuardTest, RelativePathsAreRefusedForEveryFolderKind) {
  auto g = writerGuard();
  auto result = check(g, {{"path", "notes/a.md"}});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().rule, rule::kRelativePath);
  EXPECT_THAT(result.error().message, HasSubstr("absolute or starts with ~/"));
  EXPECT_FALSE(check(g, {{"path", "~bob/a.md"}}));

  auto backedUp = guard({{"~/notes", false, true}});
  EXPECT_FALSE(check(backedUp, {{"path", "a.md"}}));
  auto writable = guard({{"~/notes", false, false}});
  for (const char* given : {"a.md", "./a.md", "../../../../../../../../tmp/x", "..", "."}) {
    auto relative = check(writable, {{"path", given}});
    ASSERT_FALSE(relative) << given;
    EXPECT_EQ(relative.error().rule, rule::kRelativePath) << given;
  }
  EXPECT_TRUE(check(writable, {{"path", "~/notes/a.md"}}));
}

TEST_F(FolderGuardTest, NewFilesAreCheckedThroughTheirParent) {
  auto g = writerGuard();
  auto created = check(g, {{"path", "~/notes/new-dir/deeper/new.md"}});
  ASSERT_TRUE(created) << created.error().message;
  EXPECT_EQ((*created)[0].resolved, home_ + "/notes/new-dir/deeper/new.md");
  auto viaLink = check(g, {{"path", "~/notes/to-site/new-dir/new.md"}});
  ASSERT_FALSE(viaLink);
  EXPECT_THAT(viaLink.error().message, HasSubstr(home_ + "/site/new-dir/new.md"));
}

TEST_F(FolderGuardTest, OutsideEveryFolderIsRefused) {
  auto g = writerGuard();
  auto result = check(g, {{"path", root_ + "/elsewhere/x"}});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().rule, rule::kOutsideFolders);
  EXPECT_THAT(result.error().message,
              HasSubstr("outside every folder the persona gives filesystem"));
}

TEST_F(FolderGuardTest, ArraysAreCheckedElementByElement) {
  auto g = writerGuard();
  EXPECT_TRUE(check(g, {{"paths", {"~/notes/a.md", "~/site/drafts/d.md"}}}));
  auto result = check(g, {{"paths", {"~/notes/a.md", "~/site/index.html", "~/notes/b.md"}}});
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message, HasSubstr("Argument paths (\"~/site/index.html\")"));
  auto notPaths = check(g, {{"paths", {"~/notes/a.md", 7}}});
  ASSERT_FALSE(notPaths);
  EXPECT_THAT(notPaths.error().message, HasSubstr("neither a path nor a list of paths"));
  // Both arguments of a move are checked; other arguments are not paths.
  EXPECT_FALSE(check(g, {{"path", "~/notes/a.md"}, {"destination", "~/site/a.md"}}));
  EXPECT_TRUE(check(g, {{"path", "~/notes/a.md"}, {"content", "~/site/a.md"}}));
}

TEST_F(FolderGuardTest, NoFoldersMeansNothingToGuard) {
  auto g = guard({});
  auto result = check(g, {{"path", "/etc/passwd"}});
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->empty());
}

TEST_F(FolderGuardTest, RejectsRelativeRoots) {
  auto made = FolderGuard::create({{"notes", false, false}}, home_);
  ASSERT_FALSE(made);
  EXPECT_EQ(made.error().code, ErrorCode::kInvalidConfig);
}

TEST_F(FolderGuardTest, UsableRootsDropReadOnlyAndBackupFoldersWithoutPathArgs) {
  PersonaEntry entry{
      "x", std::nullopt, {{"~/a", false, false}, {"~/b", true, false}, {"~/c", false, true}}};
  EXPECT_EQ(usableRoots(ability_, entry).size(), 3u);
  Ability unchecked;
  auto roots = usableRoots(unchecked, entry);
  ASSERT_EQ(roots.size(), 1u);
  EXPECT_EQ(roots[0].path, "~/a");
}

TEST(PathResolverTest, ResolvesLikeTheKernel) {
  kaja::testing::TempDir dir;
  std::string root = fs::canonical(dir.path()).string();
  dir.write("a/b/file", "x");
  fs::create_directory_symlink("b", root + "/a/rel-link");  // relative target
  fs::create_symlink(root + "/loop2", root + "/loop1");
  fs::create_symlink(root + "/loop1", root + "/loop2");
  EXPECT_EQ(resolvePath(root + "/a/rel-link/file").value(), root + "/a/b/file");
  EXPECT_EQ(resolvePath(root + "/a/./rel-link/../b//file").value(), root + "/a/b/file");
  EXPECT_EQ(resolvePath(root + "/a/missing/x/../y").value(), root + "/a/missing/y");
  EXPECT_EQ(resolvePath(root + "/a/missing/../../a/rel-link").value(), root + "/a/b");
  EXPECT_EQ(resolvePath("/../..").value(), "/");
  EXPECT_EQ(resolvePath(root + "/a/b/file/sub").value(), root + "/a/b/file/sub");
  auto loop = resolvePath(root + "/loop1/x");
  ASSERT_FALSE(loop);
  EXPECT_THAT(loop.error().message, HasSubstr("readlink"));
  EXPECT_FALSE(resolvePath("relative/path"));
  EXPECT_TRUE(isWithin("/a/b", "/a"));
  EXPECT_TRUE(isWithin("/a", "/a"));
  EXPECT_FALSE(isWithin("/ab", "/a"));
  EXPECT_TRUE(isWithin("/anything", "/"));
}

// Spellings a server may map onto an existing folder: it reads them as that folder, so kaja
// must too. server-filesystem maps a missing name to an existing one with the same NFC form.
class EquivalentPathTest : public FolderGuardTest {
 protected:
  void SetUp() override {
    FolderGuardTest::SetUp();
    dir_.write("home/Caf\xc3\xa9/menu.txt", "menu");  // NFC é
    dir_.write("home/Kids/k.txt", "k");
    dir_.write("home/ro/inner/ok.txt", "ok");
    dir_.write("home/bk/Caf\xc3\xa9/m.txt", "m");
    dir_.write("home/rw/x/y/z/file", "z");
    fs::create_directory_symlink("x/y", home_ + "/rw/link");
    fs::create_directory_symlink("x/y/z", home_ + "/rw/deep");
    fs::create_directory_symlink(root_ + "/elsewhere", home_ + "/rw/abs");
  }
  FolderGuard strictGuard() {
    return guard({{"~/rw", false, false},
                  {"~/notes", false, false},
                  {"~/Caf\xc3\xa9", true, false},
                  {"~/Kids", true, false},
                  {"~/ro", true, false},
                  {"~/ro/inner", false, false},
                  {"~/bk", false, true}});
  }
  void expectRefused(const FolderGuard& g, const std::string& path, std::string_view rule) {
    auto result = check(g, {{"path", path}});
    ASSERT_FALSE(result) << "allowed: " << path;
    EXPECT_EQ(result.error().rule, rule) << path << ": " << result.error().message;
    EXPECT_EQ(result.error().message.find('\n'), std::string::npos) << result.error().message;
  }
};

TEST_F(EquivalentPathTest, UnicodeEquivalentSpellingsOfAReadOnlyFolderAreRefused) {
  auto g = strictGuard();
  for (const std::string& spelling : {
           std::string("~/Cafe\xcc\x81/new.txt"),     // NFD: e + U+0301
           std::string("~/Cafe\xcc\x81/menu.txt"),    // an existing file through NFD
           std::string("~/CAF\xc3\x89/new.txt"),      // upper case É
           std::string("~/\xe2\x84\xaaids/new.txt"),  // U+212A KELVIN SIGN
           std::string("~/\xef\xbc\xabids/new.txt"),  // U+FF2B FULLWIDTH K
           std::string("~/KIDS/new.txt"),             // case, for case-insensitive mounts
           std::string("~/\xd0\x9a"
                       "ids/new.txt"),  // Cyrillic К, a look-alike
           std::string("~/Ki\xe2\x80\x8b"
                       "ds/x"),  // a zero-width space inside
           std::string("~/notes/../\xe2\x84\xaaids/deeper/new.txt"),
       }) {
    expectRefused(g, spelling, rule::kReadOnlyFolder);
  }
  // A different name is still a different folder.
  EXPECT_TRUE(check(g, {{"path", "~/rw/Cafe/new.txt"}}));
  EXPECT_TRUE(check(g, {{"path", "~/rw/Kidsroom.txt"}}));
}

TEST_F(EquivalentPathTest, AWritableFolderInsideAReadOnlyOneNeedsItsExactName) {
  auto g = strictGuard();
  EXPECT_TRUE(check(g, {{"path", "~/ro/inner/ok.txt"}}));
  // "INNER" is missing: a server that does not map it creates it in the read-only folder.
  expectRefused(g, "~/ro/INNER/new.txt", rule::kReadOnlyFolder);
  expectRefused(g, "~/ro/inn\xd0\xb5r/new.txt", rule::kReadOnlyFolder);  // Cyrillic е
}

TEST_F(EquivalentPathTest, SymlinkThenDotDotIsJudgedBothWays) {
  auto g = strictGuard();
  // The kernel reads ~/rw/x/y/../../ro/f as ~/rw/ro/f; Node collapses the text to ~/ro/f.
  expectRefused(g, "~/rw/link/../../ro/f", rule::kReadOnlyFolder);
  expectRefused(g, "~/rw/deep/../../ro/f", rule::kReadOnlyFolder);
  expectRefused(g, "~/rw/deep/./..//../Kids/f", rule::kReadOnlyFolder);
  expectRefused(g, "~/rw/link/../../\xe2\x84\xaaids/f", rule::kReadOnlyFolder);
  // An absolute link out of the folders: lexically inside, physically outside.
  expectRefused(g, "~/rw/abs/../rw/f", rule::kOutsideFolders);
  // Both readings writable: allowed, and both are reported.
  auto both = check(g, {{"path", "~/rw/link/../f"}});
  ASSERT_TRUE(both) << both.error().message;
  ASSERT_EQ((*both)[0].landings.size(), 2u);
  EXPECT_EQ((*both)[0].landings[0].resolved, home_ + "/rw/x/f");
  EXPECT_EQ((*both)[0].landings[1].resolved, home_ + "/rw/f");
}

TEST_F(EquivalentPathTest, ControlCharactersAndBrokenBytesAreRefused) {
  auto g = strictGuard();
  for (const std::string& spelling : {
           std::string("~/rw/a\0b", 8), std::string("~/rw/a\nb"), std::string("~/rw/a\rb"),
           std::string("~/rw/\x1b[31mred"), std::string("~/rw/a\x7f"),
           std::string("~/rw/a\xc2\x85"),  // U+0085 NEXT LINE
           std::string("~/rw/\xe2\x80\xae"
                       "fdp.sh"),  // U+202E RIGHT-TO-LEFT OVERRIDE
           std::string("~/rw/a\xff"), std::string("~/rw/\xed\xa0\xbd"),  // not UTF-8
       }) {
    expectRefused(g, spelling, rule::kUnsafePath);
  }
  auto result = check(g, {{"path", std::string("~/rw/a\nb")}});
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message, HasSubstr("(\"~/rw/a\\nb\")"));
  EXPECT_THAT(result.error().message, HasSubstr("U+000A"));
}

TEST_F(EquivalentPathTest, EquivalentSpellingOfABackedUpFileIsDueACopy) {
  auto g = strictGuard();
  auto result = check(g, {{"path", "~/bk/Cafe\xcc\x81/m.txt"}});
  ASSERT_TRUE(result) << result.error().message;
  bool copyDue = false;
  for (const auto& landing : (*result)[0].landings) {
    if (landing.resolved == home_ + "/bk/Caf\xc3\xa9/m.txt") copyDue = landing.backup;
  }
  EXPECT_TRUE(copyDue);
}

TEST(PathResolverTest, ReadingsIncludeEveryEquivalentName) {
  kaja::testing::TempDir dir;
  std::string root = fs::canonical(dir.path()).string();
  dir.write("d/Caf\xc3\xa9/x", "1");
  dir.write("d/CAF\xc3\x89/x", "2");
  auto readings = resolveInterpretations(root + "/d/Cafe\xcc\x81/x");
  ASSERT_TRUE(readings) << readings.error().message;
  EXPECT_THAT(*readings,
              ::testing::UnorderedElementsAre(root + "/d/Cafe\xcc\x81/x", root + "/d/Caf\xc3\xa9/x",
                                              root + "/d/CAF\xc3\x89/x"));
  // An existing exact name is what every server opens: no other reading.
  EXPECT_EQ(resolveInterpretations(root + "/d/Caf\xc3\xa9/x")->size(), 1u);
  auto bounded = resolveInterpretations(root + "/d/Cafe\xcc\x81/x", {2, 1000});
  ASSERT_FALSE(bounded);
  EXPECT_EQ(bounded.error().code, ErrorCode::kRefused);
  EXPECT_EQ(collapseLexically("/a/./b//../../../c/"), "/c");
  EXPECT_TRUE(equivalentNames("Cafe\xcc\x81", "Caf\xc3\xa9"));
  EXPECT_TRUE(equivalentNames("\xe2\x84\xaa", "k"));
  EXPECT_FALSE(equivalentNames("cafe", "caf\xc3\xa9"));
  EXPECT_TRUE(isWithinEquivalent("/h/KIDS/x", "/h/kids"));
  EXPECT_FALSE(isWithinEquivalent("/h/kidsx/x", "/h/kids"));
}

}  // namespace
}  // namespace kaja::core::policy
