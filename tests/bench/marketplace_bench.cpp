// Measures syncing a marketplace of many abilities and listing them, against `kaja
// abilities` with the shipped marketplace alone, in the same run.
//
//   build/bin/marketplace_bench [--abilities N] [--rounds R]
//
// Each round syncs one of two archives (so every sync has new bytes to fetch, check,
// unpack, load and switch to), then lists the abilities, then lists them with no
// marketplace. The archives are files (tar.gz, made with tar) so the network is not
// measured. Figures are medians over the rounds.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "marketplace/sync/verify.h"
#include "tests/bench/run_kaja.h"

namespace {

namespace fs = std::filesystem;
using kaja::bench::median;
using kaja::bench::runKaja;

void writeFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string readAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Writes a marketplace of `count` abilities (the version number in each description) as
// `archive`, and returns its SHA-256.
std::string makeArchive(const fs::path& root, const fs::path& archive, int count, int version) {
  fs::path tree = root / ("tree-" + std::to_string(version));
  fs::remove_all(tree);
  std::string persona = "abilities = [";
  for (int i = 0; i < count; ++i) {
    std::string name = "ability-" + std::to_string(i);
    writeFile(tree / "market" / "abilities" / name / "mcp.toml",
              "description = \"ability " + std::to_string(i) + ", version " +
                  std::to_string(version) + "\"\ncommand = \"/bin/cat\"\nargs = [\"-u\"]\n");
    persona += (i > 0 ? ", \"" : "\"") + name + "\"";
  }
  writeFile(tree / "market" / "personas" / "team.toml", persona + "]\n");
  std::string command = "tar -C '" + tree.string() + "' -czf '" + archive.string() + "' market";
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "marketplace_bench: tar failed\n");
    std::exit(1);
  }
  return kaja::marketplace::sync::sha256Hex(readAll(archive));
}

}  // namespace

int main(int argc, char** argv) {
  int count = 500;
  int rounds = 9;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--abilities" && i + 1 < argc) count = std::max(1, std::atoi(argv[++i]));
    if (arg == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
  }
  fs::path root = fs::temp_directory_path() / ("kaja-market-bench-" + std::to_string(::getpid()));
  fs::create_directories(root / "home");
  std::vector<std::string> env = {
      "HOME=" + (root / "home").string(), "XDG_CONFIG_HOME=" + (root / "config").string(),
      "XDG_DATA_HOME=" + (root / "data").string(), "PATH=/usr/local/bin:/usr/bin:/bin"};
  std::vector<std::string> bare = {
      "HOME=" + (root / "home").string(), "XDG_CONFIG_HOME=" + (root / "bare-config").string(),
      "XDG_DATA_HOME=" + (root / "bare-data").string(), "PATH=/usr/local/bin:/usr/bin:/bin"};
  std::string pins[2] = {makeArchive(root, root / "a.tar.gz", count, 0),
                         makeArchive(root, root / "b.tar.gz", count, 1)};
  // Both archives sit at one path, swapped between rounds, as a published one is replaced.
  fs::path served = root / "market.tar.gz";
  fs::copy_file(root / "a.tar.gz", served);
  auto added = runKaja({"marketplace", "add", "team", served.string(), "--sha256", pins[0]}, env);
  if (added.exitCode != 0) {
    std::fprintf(stderr, "marketplace_bench: kaja marketplace add failed (exit %d)\n",
                 added.exitCode);
    return 1;
  }
  std::vector<double> syncMs;
  std::vector<double> listMs;
  std::vector<double> bareMs;
  for (int round = 0; round < rounds; ++round) {
    int next = (round + 1) % 2;
    fs::copy_file(root / (next == 0 ? "a.tar.gz" : "b.tar.gz"), served,
                  fs::copy_options::overwrite_existing);
    auto synced = runKaja({"marketplace", "sync", "team", "--sha256", pins[next], "--json"}, env);
    if (synced.exitCode != 0 || !synced.report.is_array() || synced.report.empty() ||
        !synced.report[0].value("changed", false)) {
      std::fprintf(stderr, "marketplace_bench: the sync of round %d did not change it\n", round);
      return 1;
    }
    syncMs.push_back(synced.wallMs);
    auto listed = runKaja({"abilities", "--json"}, env);
    if (listed.exitCode != 0 || !listed.report.is_array() ||
        listed.report.size() < static_cast<size_t>(count)) {
      std::fprintf(stderr, "marketplace_bench: kaja abilities did not list %d abilities\n", count);
      return 1;
    }
    listMs.push_back(listed.wallMs);
    bareMs.push_back(runKaja({"abilities", "--json"}, bare).wallMs);
  }
  double sync = median(syncMs);
  double list = median(listMs);
  double shippedOnly = median(bareMs);
  std::printf("marketplace of %d abilities, %d rounds (medians)\n", count, rounds);
  std::printf("  kaja marketplace sync (new archive): %6.1f ms  (target <= 200 ms)\n", sync);
  std::printf("  kaja abilities --json, %d loaded:   %6.1f ms  (target <= 200 ms)\n", count, list);
  std::printf("  kaja abilities --json, shipped only: %6.1f ms\n", shippedOnly);
  std::printf("  ratio listing with / without the marketplace: %.2fx\n", list / shippedOnly);
  std::error_code ec;
  fs::remove_all(root, ec);
  return sync <= 200 && list <= 200 ? 0 : 2;
}
