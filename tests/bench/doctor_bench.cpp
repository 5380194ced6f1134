// Measures `kaja doctor` over the shipped npm abilities against the slowest of them
// connected alone, in the same run, and cold starts through bunx against npx.
//
//   build/bin/doctor_bench [--rounds N] [--skip-cold]
//
// Each round runs doctor on all of them twice, first with nothing remembered and then as
// usual, with the connect times doctor remembers from earlier runs (servers that were quick
// start at lower CPU priority); then on each alone. Alternating lets machine noise fall on
// both sides. Figures are medians over the rounds.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/bench/run_kaja.h"
#include "tests/support/build_paths.h"

namespace {

using kaja::bench::binDir;
using kaja::bench::median;
using kaja::bench::Run;
using kaja::bench::runKaja;

using nlohmann::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string sourceDir() { return std::string(kaja::test::sourceDir()); }

long connectMs(const json& report, const std::string& name) {
  if (!report.is_object()) return -1;
  for (const auto& row : report["abilities"]) {
    if (row["name"] == name && row["state"] == "ok") return row["ms"].get<long>();
  }
  return -1;
}

std::vector<std::string> baseEnv(const std::string& home, const std::string& root) {
  const char* path = std::getenv("PATH");
  return {"HOME=" + home, "XDG_CONFIG_HOME=" + root + "/config", "XDG_DATA_HOME=" + root + "/data",
          "PATH=" + std::string(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin"),
          "LANG=C.UTF-8"};
}

void writeFile(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

void parallelBench(int rounds, const std::string& root) {
  // The shipped npm abilities; geo-service starts only with a key, so it gets a dummy one.
  std::vector<std::string> names = {"chrome-devtools", "filesystem", "geo-service",
                                    "sequential-thinking"};
  writeFile(root + "/config/kaja/secrets.toml",
            "[abilities.geo-service]\napi_key = \"benchmark-dummy-key\"\n");
  fs::permissions(root + "/config/kaja/secrets.toml",
                  fs::perms::owner_read | fs::perms::owner_write);
  auto env = baseEnv(root + "/home", root);
  fs::create_directories(root + "/home");

  std::vector<std::string> all = {"doctor", "--json"};
  all.insert(all.end(), names.begin(), names.end());
  runKaja(all, env);  // warm-up: bunx caches the packages
  std::vector<double> together;
  std::vector<double> fresh;
  std::string remembered = root + "/data/kaja/connect-costs.json";
  std::vector<double> slowestAloneConnect;
  std::vector<double> slowestAloneWall;
  std::map<std::string, std::vector<double>> aloneConnect;
  for (int round = 0; round < rounds; ++round) {
    fs::remove(remembered);
    fresh.push_back(runKaja(all, env).wallMs);
    Run run = runKaja(all, env);
    together.push_back(run.wallMs);
    double worstConnect = 0;
    double worstWall = 0;
    for (const auto& name : names) {
      Run alone = runKaja({"doctor", "--json", name}, env);
      long ms = connectMs(alone.report, name);
      if (ms < 0) std::fprintf(stderr, "warning: %s did not connect alone\n", name.c_str());
      aloneConnect[name].push_back(static_cast<double>(ms));
      worstConnect = std::max(worstConnect, static_cast<double>(ms));
      worstWall = std::max(worstWall, alone.wallMs);
    }
    slowestAloneConnect.push_back(worstConnect);
    slowestAloneWall.push_back(worstWall);
  }
  std::printf("kaja doctor over %zu npm abilities, %d rounds (medians)\n", names.size(), rounds);
  for (const auto& [name, values] : aloneConnect) {
    std::printf("  %-22s alone: connect %6.0f ms\n", name.c_str(), median(values));
  }
  double all_ = median(together);
  double connect = median(slowestAloneConnect);
  double wall = median(slowestAloneWall);
  double first = median(fresh);
  std::printf("  doctor, nothing remembered: wall %6.0f ms\n", first);
  std::printf("  doctor, all together:   wall %6.0f ms\n", all_);
  std::printf("  slowest alone:          wall %6.0f ms (connect %0.f ms)\n", wall, connect);
  std::printf("  ratio all / slowest alone (wall):    %.2fx  (target <= 1.3x)\n", all_ / wall);
  std::printf("  ratio all / slowest alone (connect): %.2fx\n", all_ / connect);
  std::printf("  ratio nothing remembered / slowest alone (wall): %.2fx\n", first / wall);
}

void coldBench(const std::string& root) {
  // One user ability per runner, same package, each started with an empty HOME so
  // neither bun's nor npm's cache helps; then once more warm.
  std::string package = "@modelcontextprotocol/server-sequential-thinking@2026.8.31";
  std::string bunx = sourceDir() + "/marketplace/runtime/node_modules/.bin/bunx";
  std::string market = root + "/market";
  writeFile(market + "/abilities/via-bunx/mcp.toml",
            "command = \"" + bunx + "\"\nargs = [\"" + package + "\"]\n");
  writeFile(market + "/abilities/via-npx/mcp.toml",
            "command = \"npx\"\nargs = [\"-y\", \"" + package + "\"]\n");
  std::printf("\ncold start of %s (empty caches), then warm\n", package.c_str());
  for (const std::string name : {"via-bunx", "via-npx"}) {
    std::string home = root + "/cold-" + name;
    fs::create_directories(home);
    auto env = baseEnv(home, root);
    env.push_back("KAJA_SHIPPED_MARKETPLACE=" + market);
    Run cold = runKaja({"doctor", "--json", "--timeout", "120", name}, env);
    Run warm = runKaja({"doctor", "--json", name}, env);
    std::printf("  %-9s cold: connect %6ld ms   warm: connect %6ld ms\n", name.c_str(),
                connectMs(cold.report, name), connectMs(warm.report, name));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  bool cold = true;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    if (arg == "--skip-cold") cold = false;
  }
  std::string root =
      fs::temp_directory_path() / ("kaja-doctor-bench-" + std::to_string(::getpid()));
  fs::create_directories(root);
  parallelBench(rounds, root);
  if (cold) coldBench(root);
  std::error_code ec;
  fs::remove_all(root, ec);
  return 0;
}
