// K15 kaja's own files, judged the way a hostile model would try to name them: spellings,
// symlinks, hard links, URIs, arguments that are not declared paths, floods.
#include "core/policy/own_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/support/temp_dir.h"

namespace kaja::core::policy {
namespace {

using ::testing::HasSubstr;
using Json = mcp::Json;
namespace fs = std::filesystem;

class OwnFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::canonical(dir_.path()).string();
    home_ = root_ + "/home";
    config_ = home_ + "/.config/kaja";
    data_ = home_ + "/.local/share/kaja";
    dir_.write("home/.config/kaja/secrets.toml", "key = \"SECRET\"\n");
    dir_.write("home/.local/share/kaja/audit.jsonl", "{}\n");
    dir_.write("home/.local/share/kaja/outputs/1-fs-read.txt", "the whole text");
    dir_.write("home/proj/notes.txt", "mine");
  }

  [[nodiscard]] OwnFiles own() const {
    return OwnFiles({config_, data_}, {data_ + "/outputs"}, home_);
  }

  /// The refusal for a call to a tool whose path arguments are "path" and "paths".
  [[nodiscard]] std::optional<Refusal> check(const Json& arguments,
                                             bool refuseRelative = false) const {
    return own().checkArguments(arguments, {"path", "paths"}, refuseRelative, "fs");
  }

  kaja::testing::TempDir dir_;
  std::string root_;
  std::string home_;
  std::string config_;
  std::string data_;
};

TEST_F(OwnFilesTest, EverySpellingOfAPathArgumentIntoKajasFoldersIsRefused) {
  fs::create_directory_symlink(config_, home_ + "/proj/keys");
  for (const std::string& path :
       {std::string("~/.config/kaja/secrets.toml"), config_ + "/secrets.toml",
        home_ + "/.config/../.config/kaja/secrets.toml", home_ + "/proj/keys/secrets.toml",
        home_ + "/.config/KAJA/secrets.toml", home_ + "//.local/share/kaja/audit.jsonl",
        home_ + "/.config/k\u0430ja/secrets.toml", "file://" + config_ + "/secrets.toml",
        "file://" + home_ + "/.config/%6Baja/secrets.toml", config_,
        data_ + "/outputs/../audit.jsonl", data_ + "/OUTPUTS/1-fs-read.txt"}) {
    auto refusal = check({{"path", path}});
    ASSERT_TRUE(refusal.has_value()) << path << " passed";
    EXPECT_EQ(refusal->rule, rule::kKajaFiles) << path;
    EXPECT_THAT(refusal->message, HasSubstr("kaja's own")) << path;
  }
  // One among several is enough.
  EXPECT_TRUE(check({{"paths", Json::array({home_ + "/proj/notes.txt", config_ + "/x"})}}));
  EXPECT_FALSE(check({{"path", home_ + "/proj/notes.txt"}}));
}

// The check does not depend on the persona's folders: with none, or with folders that do not
// hold kaja's, its files are still not handed to a server.
TEST_F(OwnFilesTest, KajasFilesAreRefusedWhateverFoldersThePersonaGives) {
  EXPECT_TRUE(check({{"path", "~/.config/kaja/secrets.toml"}}, false));
  EXPECT_TRUE(check({{"path", "~/.config/kaja/secrets.toml"}}, true));
}

// Found by an outside review: a hard link to secrets.toml in a project folder read kaja's
// keys, since no spelling of the link's path leads to kaja's folders.
TEST_F(OwnFilesTest, AHardLinkToOneOfKajasFilesIsRefused) {
  fs::create_hard_link(config_ + "/secrets.toml", home_ + "/proj/innocent.txt");
  auto refusal = check({{"path", home_ + "/proj/innocent.txt"}});
  ASSERT_TRUE(refusal.has_value());
  EXPECT_THAT(refusal->message, HasSubstr("hard link"));
  EXPECT_THAT(refusal->message, HasSubstr("secrets.toml"));
  // Through a symlink to the link too, and outside the path arguments.
  fs::create_symlink(home_ + "/proj/innocent.txt", home_ + "/proj/via-symlink");
  EXPECT_TRUE(check({{"path", home_ + "/proj/via-symlink"}}));
  EXPECT_TRUE(check({{"query", "file://" + home_ + "/proj/innocent.txt"}}));
  // A file with two names of the user's own is no concern of this rule.
  fs::create_hard_link(home_ + "/proj/notes.txt", home_ + "/proj/notes-too.txt");
  EXPECT_FALSE(check({{"path", home_ + "/proj/notes-too.txt"}}));
}

// A server may take any argument as a path, not only those the manifest names.
TEST_F(OwnFilesTest, StringsThatReadAsPathsAnywhereInTheArgumentsAreChecked) {
  for (const Json& arguments : {
           Json{{"query", "~/.config/kaja/secrets.toml"}},
           Json{
               {"a", Json::array({Json{{"b", "file:///" + config_.substr(1) + "/secrets.toml"}}})}},
           Json{{"target", "FILE://localhost" + data_ + "/audit.jsonl?x=1#y"}},
           Json{{"include", Json::array({"/etc/hostname", home_ + "/.config/./kaja"})}},
       }) {
    auto refusal = check(arguments);
    ASSERT_TRUE(refusal.has_value()) << arguments.dump();
    EXPECT_EQ(refusal->rule, rule::kKajaFiles);
  }
  // Text that only starts like a path, and relative names outside path arguments, pass.
  const std::string longName = "/" + std::string(300, 'x') + " is a comment";
  for (const Json& arguments : {
           Json{{"content", "/* a comment */\nint main() {}\n"}},
           Json{{"content", longName}},
           Json{{"content", "see .config/kaja/secrets.toml"}},
           Json{{"n", 3}, {"flag", true}, {"nothing", nullptr}},
       }) {
    EXPECT_FALSE(check(arguments).has_value()) << arguments.dump();
  }
}

// The pipeline sets the check up only for calls that may name a path; every call the check
// would judge must be one of them.
TEST_F(OwnFilesTest, EveryCallThatMayNameAPathIsSeenByTheCheapTest) {
  const std::vector<std::string> pathArgs = {"path", "paths"};
  for (const Json& arguments : {
           Json{{"path", "notes.txt"}},
           Json{{"paths", Json::array({"a", "b"})}},
           Json{{"query", "~/.config/kaja/secrets.toml"}},
           Json{{"a", Json::array({Json{{"b", "file:relative"}}})}},
           Json{{"map", {{"/etc/hostname", 1}}}},
           Json{{"deep", {{"x", Json::array({Json::array({"~root/.ssh"})})}}}},
           Json{{"content", "see .config/kaja/secrets.toml"}},
       }) {
    EXPECT_TRUE(mayNamePaths(arguments, pathArgs)) << arguments.dump();
  }
  for (const Json& arguments : {
           Json{{"message", "kaja gateway benchmark: echo me!"}},
           Json{{"content", "see the secrets file"}},
           Json{{"n", 3}, {"flag", true}, {"nothing", nullptr}, {"path", nullptr}},
           Json::array({"a", 1}),
       }) {
    EXPECT_FALSE(mayNamePaths(arguments, pathArgs)) << arguments.dump();
    EXPECT_FALSE(check(arguments).has_value()) << arguments.dump();
  }
}

// kaja's folders are found when a path is first checked, so a folder made after the check was
// set up (the data folder of a first run) is kept all the same.
TEST_F(OwnFilesTest, AFolderMadeAfterTheCheckWasSetUpIsKept) {
  const std::string later = home_ + "/.cache/kaja";
  const OwnFiles own({config_, later}, {}, home_);
  dir_.write("home/.cache/kaja/token.json", "{}");
  auto refusal = own.checkArguments({{"path", later + "/token.json"}}, {"path"}, false, "fs");
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->rule, rule::kKajaFiles);
}

// Servers strip their input (Python's strip(), JavaScript's trim()) and read URLs as URL parsers
// do: a path with white space or invisible characters at its ends, or a tab or line break
// inside "file:", is the path it hides, in a path argument or anywhere else.
TEST_F(OwnFilesTest, PathsAServerTrimsOrAUrlParserCleansAreRefused) {
  const std::string secrets = config_ + "/secrets.toml";
  for (const std::string& edge : {" ", "\t", "\n", "\x1c", "\x1f", "\x7f", "\xc2\x85", "\xc2\xa0",
                                  "\xe3\x80\x80", "\xe2\x80\xa8", "\xef\xbb\xbf"}) {
    for (const std::string& given : {edge + secrets, secrets + edge, edge + secrets + edge}) {
      EXPECT_TRUE(check({{"path", given}})) << given;
      EXPECT_TRUE(check({{"query", given}})) << given;
      EXPECT_TRUE(check({{"map", {{given, 1}}}})) << given;
    }
  }
  for (const std::string& uri : {"fi\tle://" + secrets, "f\nile://" + secrets, "fil\re:" + secrets,
                                 "\tFI\nLE:" + secrets, " file://" + secrets}) {
    EXPECT_TRUE(check({{"path", uri}})) << uri;
    EXPECT_TRUE(check({{"query", uri}})) << uri;
  }
}

// A careless server may fold fullwidth forms, take backslashes for slashes, or percent-decode
// any text: each of those readings is judged too.
TEST_F(OwnFilesTest, FoldedBackslashedAndPercentEncodedSpellingsAreRefused) {
  const std::string secrets = config_ + "/secrets.toml";
  const auto replaced = [&](const std::string& slash) {
    std::string out;
    for (const char c : secrets) out += c == '/' ? slash : std::string(1, c);
    return out;
  };
  for (const std::string& given : {
           replaced("\xef\xbc\x8f"),                                       // fullwidth solidus
           std::string("\xef\xbd\x9e/.config/kaja/secrets.toml"),          // fullwidth tilde
           "\xef\xbd\x86\xef\xbd\x89\xef\xbd\x8c\xef\xbd\x85:" + secrets,  // fullwidth "file"
           replaced("\\"),
           replaced("%2F"),
           replaced("%2f"),
       }) {
    EXPECT_TRUE(check({{"query", given}})) << given;
    EXPECT_TRUE(check({{"path", given}})) << given;
  }
  // Text of the same shapes outside kaja's folders passes.
  for (const std::string& given : {"\xef\xbc\x8fetc\xef\xbc\x8fhostname", "\\etc\\hostname",
                                   "%2Fetc%2Fhostname", " /etc/hostname", "100% sure"}) {
    EXPECT_FALSE(check({{"query", given}})) << given;
  }
}

// A relative path argument is judged from every folder the server may resolve it from.
TEST_F(OwnFilesTest, ARelativePathIsJudgedFromEachFolderTheServerWasGiven) {
  auto refusal = own().checkArguments({{"path", ".config/kaja/secrets.toml"}}, {"path"}, false,
                                      "fs", {root_ + "/elsewhere", home_});
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->rule, rule::kKajaFiles);
  EXPECT_FALSE(own().checkArguments({{"path", "proj/notes.txt"}}, {"path"}, false, "fs",
                                    {root_ + "/elsewhere", home_}));
}

// Outside the path arguments, text with a slash may be a relative path a server opens from its
// working folder: it is judged from each folder the server may start from, and passes where it
// cannot be resolved. A file: URI with a host is also read with the host kept, as a server that
// only strips "file://" reads it.
TEST_F(OwnFilesTest, RelativePathsAndFileHostsOutsideThePathArgumentsAreJudged) {
  const std::vector<std::string> working = {root_ + "/elsewhere", root_};
  const auto checkFrom = [&](const Json& arguments) {
    return own().checkArguments(arguments, {"path"}, false, "fs", working);
  };
  for (const Json& arguments : {
           Json{{"q", "home/.config/kaja/secrets.toml"}},
           Json{{"q", " ./home/.config/kaja/secrets.toml"}},
           Json{{"q", "elsewhere/../home/.config/kaja"}},
           Json{{"home/.local/share/kaja/audit.jsonl", 1}},
       }) {
    auto refusal = checkFrom(arguments);
    ASSERT_TRUE(refusal.has_value()) << arguments.dump();
    EXPECT_EQ(refusal->rule, rule::kKajaFiles);
  }
  for (const Json& arguments : {
           Json{{"mime", "text/plain"}},
           Json{{"url", "https://example.test/a/b?c=d"}},
           Json{{"q", "home/proj/notes.txt"}},
           Json{{"ratio", "1/2"}},
       }) {
    EXPECT_FALSE(checkFrom(arguments).has_value()) << arguments.dump();
  }
  const std::string hostPath = config_.substr(1) + "/secrets.toml";  // "tmp/.../secrets.toml"
  for (const std::string& uri : {"file://" + hostPath, "FILE://" + hostPath}) {
    EXPECT_TRUE(check({{"q", uri}})) << uri;
    EXPECT_TRUE(check({{"path", uri}})) << uri;
  }
}

// A server working inside kaja's folders reaches its files by bare names: its folder is refused.
TEST_F(OwnFilesTest, AWorkingFolderInsideKajasFoldersIsRefused) {
  auto refusal = own().checkFolder(config_, "The working folder (cwd) of fs", "fs");
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->rule, rule::kKajaFiles);
  EXPECT_THAT(refusal->message, HasSubstr("The working folder (cwd) of fs"));
  EXPECT_TRUE(own().checkFolder(home_ + "/.config/./KAJA", "cwd", "fs"));
  EXPECT_FALSE(own().checkFolder(home_ + "/proj", "cwd", "fs"));
  EXPECT_FALSE(own().checkFolder(data_ + "/outputs", "cwd", "fs"));
}

// The whole text of a cut result is kept for the model to read in parts.
TEST_F(OwnFilesTest, TheOutputsFolderStaysReadable) {
  EXPECT_FALSE(check({{"path", data_ + "/outputs/1-fs-read.txt"}}));
  EXPECT_FALSE(check({{"query", "file://" + data_ + "/outputs/1-fs-read.txt"}}));
  EXPECT_TRUE(check({{"path", data_ + "/outputs/../backups"}}));
}

TEST_F(OwnFilesTest, RelativePathsAreRefusedOnlyWhereAFolderHoldsKajas) {
  auto refused = check({{"path", ".config/kaja/secrets.toml"}}, true);
  ASSERT_TRUE(refused.has_value());
  EXPECT_THAT(refused->message, HasSubstr("relative path"));
  EXPECT_FALSE(check({{"path", "notes.txt"}}, false));
}

// A path kaja cannot resolve may hide where a server lands, so it is refused wherever it
// is; only a name longer than any file's, which no process can open, is read as text. A
// review found the text reading let a path through that kaja failed to resolve and the
// kernel would not.
TEST_F(OwnFilesTest, APathThatCannotBeResolvedIsRefusedUnlessNoProcessCouldOpenIt) {
  fs::create_symlink(home_ + "/proj/loop-b", home_ + "/proj/loop-a");
  fs::create_symlink(home_ + "/proj/loop-a", home_ + "/proj/loop-b");
  for (const char* argument : {"path", "query"}) {
    auto refused = check({{argument, home_ + "/proj/loop-a/x"}});
    ASSERT_TRUE(refused.has_value()) << argument;
    EXPECT_EQ(refused->rule, rule::kUnsafePath);
    EXPECT_THAT(refused->message, HasSubstr("cannot be checked"));
  }
  const std::string overlong = home_ + "/" + std::string(300, 'n') + "/x";
  EXPECT_FALSE(check({{"query", overlong}}));
  EXPECT_TRUE(
      check({{"query", home_ + "/" + std::string(300, 'n') + "/../.config/kaja/secrets.toml"}}));
}

TEST_F(OwnFilesTest, AFloodOfPathsIsRefusedNotResolvedOneByOne) {
  Json many = Json::array();
  for (int i = 0; i < 1100; ++i) many.push_back(home_ + "/proj/n" + std::to_string(i));
  auto refused = check({{"paths", many}});
  ASSERT_TRUE(refused.has_value());
  EXPECT_THAT(refused->message, HasSubstr("send fewer"));
  many.erase(many.begin(), many.begin() + 200);
  EXPECT_FALSE(check({{"paths", many}}));
}

// Found by an outside review: /proc/self/cwd/../../config/kaja/secrets.toml read the secrets
// through a server running in another folder: kaja resolved /proc/self in its own process,
// the server in its own. A path through a link in /proc is refused, in every place.
TEST_F(OwnFilesTest, PathsThroughTheLinksOfProcAreRefused) {
  for (const std::string& path :
       {std::string("/proc/self/cwd/../../config/kaja/secrets.toml"),
        std::string("/proc/thread-self/cwd/x"), std::string("/dev/fd/../cwd/x"),
        "/proc/self/root" + config_ + "/secrets.toml", "/proc/1/root" + config_ + "/secrets.toml",
        std::string("/dev/../proc/self/cwd/x")}) {
    auto refused = check({{"path", path}});
    ASSERT_TRUE(refused.has_value()) << path;
    EXPECT_THAT(refused->message, HasSubstr("/proc")) << path;
    EXPECT_TRUE(check({{"query", path}})) << path << " outside a path argument";
    EXPECT_TRUE(own().checkUri("file://" + path, "ref")) << path << " as a URI";
  }
}

// Found by an outside review: a path given as an argument's name (a map of paths to
// contents) was never looked at.
TEST_F(OwnFilesTest, KeysThatReadAsPathsAreCheckedToo) {
  EXPECT_TRUE(check({{config_ + "/secrets.toml", 1}}));
  EXPECT_TRUE(check({{"files", {{"file://" + data_ + "/audit.jsonl", "x"}}}}));
  EXPECT_FALSE(check({{"files", {{home_ + "/proj/notes.txt", "x"}}}}));
}

// Found by an outside review: a relative path was let through unless a persona folder held
// kaja's folders, and "../../config/kaja/secrets.toml" from a server's working folder read
// the secrets. It is judged from each working folder a server may have.
TEST_F(OwnFilesTest, RelativePathsAreJudgedFromTheServersWorkingFolders) {
  const std::vector<std::string> working = {home_ + "/proj", root_};
  const OwnFiles files = own();
  EXPECT_TRUE(files.checkArguments({{"path", "../.config/kaja/secrets.toml"}}, {"path"}, false,
                                   "fs", working));
  EXPECT_TRUE(files.checkArguments({{"path", "home/.local/share/kaja/audit.jsonl"}}, {"path"},
                                   false, "fs", working));
  EXPECT_FALSE(
      files.checkArguments({{"path", "notes.txt"}}, {"path"}, false, "fs", working).has_value());
}

// Found by an outside review: only hard links to the files at the top of kaja's folders were
// caught, not those to a backup copy or to a file in a subfolder.
TEST_F(OwnFilesTest, AHardLinkToAnyFileInKajasFoldersIsRefused) {
  dir_.write("home/.local/share/kaja/backups/x/20261205T000000.000Z", "an old version");
  dir_.write("home/.config/kaja/sub/token", "t");
  fs::create_hard_link(data_ + "/backups/x/20261205T000000.000Z", home_ + "/proj/copy");
  fs::create_hard_link(config_ + "/sub/token", home_ + "/proj/token");
  EXPECT_TRUE(check({{"path", home_ + "/proj/copy"}}));
  EXPECT_TRUE(check({{"path", home_ + "/proj/token"}}));
}

// Found by a review: a file: URI is read by a server's URL parser, which trims its ends,
// drops tabs and line breaks, takes a backslash for a slash and reads "file:home" as
// "/home"; kaja read the text as it was. A path longer than PATH_MAX that collapses to a short
// one, and paths nested inside a path argument, went unchecked too.
TEST_F(OwnFilesTest, SpellingsOnlyAParserTidiesAreRefused) {
  const std::string secrets = config_ + "/secrets.toml";
  const std::string tabbed = home_ + "/.con\tfig/kaja/secrets.toml";
  std::string backslashed = secrets;
  std::replace(backslashed.begin(), backslashed.end(), '/', '\\');
  std::string longWay = "/";
  for (int i = 0; i < 2100; ++i) longWay += "./";
  longWay += secrets.substr(1);
  std::string encodedWay = "file:///";
  for (int i = 0; i < 1100; ++i) encodedWay += "%2e/";
  encodedWay += secrets.substr(1);
  for (const std::string& text :
       {"file://" + tabbed, " file://" + secrets, "\tFILE://" + secrets + "\n",
        "file://" + backslashed, "file:" + secrets.substr(1), longWay, encodedWay}) {
    EXPECT_TRUE(check({{"query", text}})) << text.substr(0, 80) << " as an argument";
    if (text != longWay) {
      EXPECT_TRUE(own().checkUri(text, "ref")) << text.substr(0, 80) << " as a URI";
    }
  }
  // The refusal quotes a long path cut short, not whole.
  auto refused = check({{"query", longWay}});
  ASSERT_TRUE(refused.has_value());
  EXPECT_LT(refused->message.size(), 1500U);
  EXPECT_TRUE(check({{"path", Json::array({Json::array({secrets})})}}));
  EXPECT_TRUE(check({{"path", {{"inner", secrets}}}}));
}

TEST_F(OwnFilesTest, FileUrisAreCheckedAndOtherSchemesPass) {
  const OwnFiles files = own();
  EXPECT_TRUE(files.checkUri("file://" + config_ + "/secrets.toml", "ref"));
  EXPECT_TRUE(files.checkUri("file:" + config_.substr(1) + "/secrets.toml", "ref"));
  EXPECT_FALSE(files.checkUri("file://" + home_ + "/proj/notes.txt", "ref"));
  EXPECT_FALSE(files.checkUri("https://example.invalid" + config_ + "/secrets.toml", "ref"));
  EXPECT_FALSE(OwnFiles().checkUri("file://" + config_ + "/secrets.toml", "ref"));
  EXPECT_EQ(fileUriPath("file://host/a%20b/c?q#f"), "/a b/c");
  EXPECT_EQ(fileUriPath("File:/x"), "/x");
  EXPECT_EQ(fileUriPath(" file:a\\b\tc\n "), "/a/bc");
  EXPECT_EQ(fileUriPath("http://x/y"), std::nullopt);
}

}  // namespace
}  // namespace kaja::core::policy
