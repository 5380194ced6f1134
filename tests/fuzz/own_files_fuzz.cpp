// The own-files check (K15) over a small real tree: the cheap test that lets a call skip the
// check (mayNamePaths) never skips one the check would refuse, and kaja's secrets file wrapped
// in the white space and spellings a server tidies away is always refused, wherever in the
// arguments it stands.
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/policy/own_files.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace fs = std::filesystem;
namespace policy = kaja::core::policy;
using Json = kaja::core::mcp::Json;

struct Tree {
  std::string root;
  std::string home;
  std::string secrets;
  std::vector<std::string> kajaFolders;
  std::vector<std::string> working;
};

// Made once, removed at exit: home/.config/kaja/secrets.toml, home/.local/share/kaja,
// home/proj/notes.txt.
const Tree& tree() {
  static const Tree made = [] {
    char pattern[] = "/tmp/kaja-fuzz-own.XXXXXX";
    const char* dir = ::mkdtemp(pattern);
    if (dir == nullptr) std::abort();
    Tree t;
    t.root = fs::canonical(dir).string();
    t.home = t.root + "/home";
    fs::create_directories(t.home + "/.config/kaja");
    fs::create_directories(t.home + "/.local/share/kaja/outputs");
    fs::create_directories(t.home + "/proj");
    t.secrets = t.home + "/.config/kaja/secrets.toml";
    std::ofstream(t.secrets) << "key = \"x\"\n";
    std::ofstream(t.home + "/proj/notes.txt") << "mine";
    t.kajaFolders = {t.home + "/.config/kaja", t.home + "/.local/share/kaja"};
    t.working = {t.home + "/proj", t.root};
    static const std::string removeAtExit = t.root;
    std::atexit([] { fs::remove_all(removeAtExit); });
    return t;
  }();
  return made;
}

// Edges a server that strips its input removes, and nothing else.
const std::vector<std::string> kEdges = {"",
                                         " ",
                                         "\t",
                                         "\n",
                                         "\r",
                                         "\x0b",
                                         "\x1c",
                                         "\x1f",
                                         "\x7f",
                                         "\xc2\x85",
                                         "\xc2\xa0",
                                         "\xe3\x80\x80",
                                         "\xe2\x80\xa8",
                                         "\xe2\x80\xa9",
                                         "\xef\xbb\xbf",
                                         "\xe2\x80\x80",
                                         "\xe2\x80\x8a"};

// Spellings of the secrets file a server opens as that file.
std::vector<std::string> spellings(const Tree& t) {
  std::string fullwidth;
  for (const char c : t.secrets)
    fullwidth += c == '/' ? std::string("\xef\xbc\x8f") : std::string(1, c);
  std::string percent;
  for (const char c : t.secrets) percent += c == '/' ? std::string("%2F") : std::string(1, c);
  return {t.secrets,
          "file://" + t.secrets,
          "FILE:" + t.secrets,
          "fi\tle://" + t.secrets,
          "~/.config/kaja/secrets.toml",
          t.home + "/proj/../.config/kaja/secrets.toml",
          fullwidth,
          percent,
          "file://" + t.secrets.substr(1)};
}

// Puts `value` where `place` says: a path argument, another argument, a key, or nested.
Json placed(int place, const std::string& value, const std::string& noise) {
  switch (place) {
    case 0:
      return {{"path", value}};
    case 1:
      return {{"q", value}, {"n", noise}};
    case 2:
      return {{"map", {{value, noise}}}};
    case 3:
      return {{"a", Json::array({Json::array({noise, Json{{"b", value}}})})}};
    default:
      return {{"paths", Json::array({noise, value})}};
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Tree& t = tree();
  const policy::OwnFiles own(t.kajaFolders, {t.home + "/.local/share/kaja/outputs"}, t.home);
  const std::vector<std::string> pathArgs = {"path", "paths"};
  FuzzedDataProvider input(data, size);
  const int place = input.ConsumeIntegralInRange<int>(0, 4);
  const bool constructed = input.ConsumeBool();
  if (constructed) {
    // The secrets file in a spelling a server tidies, wrapped in edges it strips.
    const auto all = spellings(t);
    const std::string& spelling = all[input.ConsumeIntegralInRange<size_t>(0, all.size() - 1)];
    const std::string& before = kEdges[input.ConsumeIntegralInRange<size_t>(0, kEdges.size() - 1)];
    const std::string& after = kEdges[input.ConsumeIntegralInRange<size_t>(0, kEdges.size() - 1)];
    const std::string noise = input.ConsumeRandomLengthString(64);
    const Json arguments = placed(place, before + spelling + after, noise);
    KAJA_FUZZ_CHECK(policy::mayNamePaths(arguments, pathArgs), "the cheap test sees the path");
    KAJA_FUZZ_CHECK(own.checkArguments(arguments, pathArgs, false, "fs", t.working).has_value(),
                    "kaja's secrets file is refused in every tidied spelling");
    return 0;
  }
  // Free text: whatever it is, a call the cheap test lets skip the check passes the check.
  const std::string text = input.ConsumeRandomLengthString(256);
  const std::string noise = input.ConsumeRemainingBytesAsString();
  const Json arguments = placed(place, text, noise);
  if (!policy::mayNamePaths(arguments, pathArgs)) {
    KAJA_FUZZ_CHECK(!own.checkArguments(arguments, pathArgs, false, "fs", t.working).has_value(),
                    "a call the cheap test skips is one the check passes");
  }
  return 0;
}
