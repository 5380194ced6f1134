#pragma once

// A fresh HOME and XDG dirs with a small shipped marketplace, for the tests of the commands
// that change abilities and personas (`kaja add`, `kaja persona add`, …).
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::testing {

class CliEditFixture {
 public:
  /// Shipped: `files` (roots = true), `echo` (a command) and personas `default` (files with
  /// ~/docs) and `plain` (echo alone). `default` is active.
  CliEditFixture() {
    home_ = root_.path() + "/home";
    root_.write("market/abilities/files/mcp.toml", "command = \"/bin/cat\"\nroots = true\n");
    root_.write("market/abilities/echo/mcp.toml",
                "description = \"echoes\"\ncommand = \"/bin/cat\"\n");
    root_.write("market/personas/default.toml",
                "# the shipped default\nabilities = [\"echo\", { name = \"files\", roots = "
                "[\"~/docs\"] }]\n");
    root_.write("market/personas/plain.toml", "abilities = [\"echo\"]\n");
    root_.write("home/docs/a.txt", "a");
    std::filesystem::create_directories(configDir());
  }

  /// Runs `kaja ARGS` in the fixture's environment, feeding `input` on stdin.
  CommandResult kaja(const std::vector<std::string>& args, const std::string& input = "") {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunOptions options;
    options.input = input;
    options.timeoutSeconds = 60;
    return runCommandWith(argv, env(), options);
  }

  [[nodiscard]] std::vector<std::string> env() const {
    return {"HOME=" + home_, "XDG_CONFIG_HOME=" + root_.path() + "/config",
            "XDG_DATA_HOME=" + root_.path() + "/data", "PATH=/usr/local/bin:/usr/bin:/bin",
            "KAJA_SHIPPED_MARKETPLACE=" + root_.path() + "/market"};
  }

  [[nodiscard]] std::string configDir() const { return root_.path() + "/config/kaja"; }
  [[nodiscard]] std::string userMarket() const { return configDir() + "/marketplace"; }
  [[nodiscard]] std::string shippedMarket() const { return root_.path() + "/market"; }
  [[nodiscard]] std::string secretsFile() const { return configDir() + "/secrets.toml"; }
  [[nodiscard]] std::string manifest(const std::string& ability) const {
    return userMarket() + "/abilities/" + ability + "/mcp.toml";
  }

  /// Every file under the config dir and the shipped marketplace, path to bytes (and a
  /// marker for each folder, so an empty one left behind shows).
  [[nodiscard]] std::map<std::string, std::string> snapshot() const {
    std::map<std::string, std::string> files;
    for (const auto& top : {root_.path() + "/config", shippedMarket(), home_}) {
      std::error_code ec;
      for (std::filesystem::recursive_directory_iterator it(top, ec), end; !ec && it != end;
           it.increment(ec)) {
        const auto& path = it->path().string();
        files[path] = it->is_directory() ? "<dir>" : readFile(path);
      }
    }
    return files;
  }

  /// Returns the permission bits of `path`, or -1.
  static int modeOf(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 ? static_cast<int>(info.st_mode & 07777) : -1;
  }

 protected:
  TempDir root_;
  std::string home_;
};

}  // namespace kaja::testing
