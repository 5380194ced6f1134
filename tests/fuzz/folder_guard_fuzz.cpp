// The path resolver with the folder guard, over a small real tree with a symlink that leaves
// the folders: a path the guard lets a call write to lands, under the kernel's reading and the
// lexical one, inside a folder that is not read-only, never outside every folder; and the
// resolver's answers are absolute, collapsed and stable.
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/manifest/ability.h"
#include "core/policy/folder_guard.h"
#include "core/policy/path_resolver.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace fs = std::filesystem;
namespace policy = kaja::core::policy;

struct Tree {
  std::string root;
  std::vector<std::string> prefixes;
  policy::FolderGuard guard;
};

// Made once, removed at exit: home/{rw,ro,bk}, rw/sub, rw/out -> ../outside, ro/up -> ../rw.
Tree makeTree() {
  char pattern[] = "/tmp/kaja-fuzz-guard.XXXXXX";
  const char* made = ::mkdtemp(pattern);
  if (made == nullptr) std::abort();
  const std::string root = fs::canonical(made).string();
  for (const char* dir : {"/rw/sub", "/ro/inner", "/bk", "/outside", "/Kaja"}) {
    fs::create_directories(root + dir);
  }
  fs::create_directory_symlink(root + "/outside", root + "/rw/out");
  fs::create_directory_symlink("../rw", root + "/ro/up");
  fs::create_symlink(root + "/ro/inner/file", root + "/rw/into-ro");
  std::vector<kaja::core::PersonaRoot> roots = {
      {"~/rw", false, false}, {"~/ro", true, false}, {"~/bk", false, true}};
  auto guard = policy::FolderGuard::create(roots, root, {root + "/Kaja"});
  if (!guard) std::abort();
  static const std::string removeAtExit = root;
  std::atexit([] { fs::remove_all(removeAtExit); });
  return Tree{root,
              {root + "/rw/", root + "/ro/", root + "/bk/", root + "/", "~/", "/", ""},
              std::move(*guard)};
}

bool within(const std::string& path, const std::string& folder) {
  return path == folder ||
         (path.starts_with(folder) && path.size() > folder.size() && path[folder.size()] == '/');
}

// The nearest folder holding `path` by plain byte comparison, or null.
const policy::GuardedFolder* nearest(const Tree& tree, const std::string& path) {
  const policy::GuardedFolder* best = nullptr;
  for (const auto& folder : tree.guard.folders()) {
    if (within(path, folder.resolved) &&
        (best == nullptr || folder.resolved.size() > best->resolved.size())) {
      best = &folder;
    }
  }
  return best;
}

void checkWritable(const Tree& tree, const std::string& resolved) {
  const policy::GuardedFolder* folder = nearest(tree, resolved);
  KAJA_FUZZ_CHECK(folder != nullptr, "an allowed path lands inside a folder");
  KAJA_FUZZ_CHECK(!folder->readOnly && !folder->kajaOwn, "in a writable one");
  KAJA_FUZZ_CHECK(!within(resolved, tree.root + "/Kaja"), "never in kaja's own folders");
}

void checkResolver(const std::string& path) {
  if (!path.starts_with('/')) return;
  const std::string lexical = policy::collapseLexically(path);
  KAJA_FUZZ_CHECK(lexical.starts_with('/'), "a collapsed path is absolute");
  KAJA_FUZZ_CHECK(lexical.find("//") == std::string::npos &&
                      lexical.find("/./") == std::string::npos &&
                      lexical.find("/../") == std::string::npos && !lexical.ends_with("/..") &&
                      !lexical.ends_with("/."),
                  "a collapsed path has no empty, . or .. component");
  KAJA_FUZZ_CHECK(policy::collapseLexically(lexical) == lexical, "collapsing is idempotent");
  const auto resolved = policy::resolvePath(path);
  if (!resolved) return;
  KAJA_FUZZ_CHECK(resolved->starts_with('/'), "a resolved path is absolute");
  const auto again = policy::resolvePath(*resolved);
  KAJA_FUZZ_CHECK(again && *again == *resolved, "resolving is idempotent");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  static const Tree tree = makeTree();
  FuzzedDataProvider input(bytes, size);
  const std::string& prefix =
      tree.prefixes[input.ConsumeIntegralInRange<std::size_t>(0, tree.prefixes.size() - 1)];
  const std::string path = prefix + input.ConsumeRemainingBytesAsString();
  if (path.find('\0') != std::string::npos)
    return 0;  // JSON strings from a model may hold it,
               // but no path can.
  checkResolver(path);

  kaja::core::Ability ability;
  ability.name = "fuzzed";
  ability.pathArgs = {"path"};
  const kaja::core::mcp::Json arguments = {{"path", path}};
  const auto checked = tree.guard.check(ability, arguments);
  if (!checked) return 0;
  for (const auto& one : *checked) {
    checkWritable(tree, one.resolved);
    for (const auto& landing : one.landings) checkWritable(tree, landing.resolved);
    // Readings computed here, independently of the guard's own list.
    if (one.given.starts_with('/')) {
      if (const auto physical = policy::resolvePath(one.given)) checkWritable(tree, *physical);
      if (const auto lexical = policy::resolvePath(policy::collapseLexically(one.given))) {
        checkWritable(tree, *lexical);
      }
    }
  }
  return 0;
}
