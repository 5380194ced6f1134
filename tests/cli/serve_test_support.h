#pragma once
// A private marketplace, HOME and XDG dirs for `kaja serve` tests, with abilities that run the
// real server-filesystem and server-everything, each tagged in its environment so a test can
// find its processes; and a `kaja serve` driven line by line over pipes.

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/build_paths.h"
#include "tests/support/temp_dir.h"

namespace kaja::testing {

/// Waits up to `seconds` for `check` to hold; returns whether it did.
template <typename Check>
bool eventually(Check check, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (check()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return check();
}

/// Returns the pids of live processes whose environment or argv holds `tag`.
inline std::vector<pid_t> processesTagged(const std::string& tag) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  while (const dirent* entry = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0 || pid == ::getpid()) continue;
    const std::string base = "/proc/" + std::to_string(pid);
    const std::string seen = readFile(base + "/environ") + readFile(base + "/cmdline");
    if (seen.find(tag) == std::string::npos) continue;
    const std::string stat = readFile(base + "/stat");
    const auto close = stat.rfind(')');
    if (close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z') continue;
    found.push_back(pid);
  }
  ::closedir(proc);
  return found;
}

/// `kaja serve` on pipes: lines in, JSON lines out, stderr to a file. Started in a process
/// group of its own; the destructor kills what is left of it.
class ServeProcess {
 public:
  ServeProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env,
               const std::string& errPath) {
    int in[2];
    int out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) return;
    std::vector<char*> args;
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    std::vector<char*> envp;
    for (const auto& var : env) envp.push_back(const_cast<char*>(var.c_str()));
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      const int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::dup2(err, 2);
      ::execve(args[0], args.data(), envp.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    input_ = in[1];
    output_ = out[0];
  }
  ~ServeProcess() {
    closeInput();
    if (output_ >= 0) ::close(output_);
    if (pid_ > 0 && !exited_) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }

  /// Writes `line` and a newline (blocking until kaja has read it all); false on failure.
  bool send(const std::string& line) {
    std::string framed = line + "\n";
    std::size_t done = 0;
    while (done < framed.size()) {
      const ssize_t wrote = ::write(input_, framed.data() + done, framed.size() - done);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) return false;
      done += static_cast<std::size_t>(wrote);
    }
    return true;
  }
  bool send(const nlohmann::json& message) { return send(message.dump()); }

  /// Returns the next line kaja wrote, parsed (discarded when not JSON), or nothing when
  /// none came within `seconds` or the output ended.
  std::optional<nlohmann::json> next(double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (true) {
      if (auto newline = buffered_.find('\n'); newline != std::string::npos) {
        std::string line = buffered_.substr(0, newline);
        buffered_.erase(0, newline + 1);
        return nlohmann::json::parse(line, nullptr, false);
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd waiting{output_, POLLIN, 0};
      if (::poll(&waiting, 1, static_cast<int>(left.count())) <= 0) continue;
      char chunk[65536];
      const ssize_t got = ::read(output_, chunk, sizeof chunk);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return std::nullopt;
      buffered_.append(chunk, static_cast<std::size_t>(got));
    }
  }

  /// Returns the answer to request `id`, keeping every other line in `seen`.
  std::optional<nlohmann::json> answer(const nlohmann::json& id, double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      const double left =
          std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
      auto line = next(left);
      if (!line) return std::nullopt;
      if (line->is_object() && line->contains("id") && (*line)["id"] == id &&
          !line->contains("method")) {
        return line;
      }
      seen.push_back(std::move(*line));
    }
    return std::nullopt;
  }

  /// Returns the first line (read now or kept in `seen`) that has `method`, within `seconds`.
  std::optional<nlohmann::json> waitForMethod(const std::string& method, double seconds) {
    for (auto it = seen.begin(); it != seen.end(); ++it) {
      if (it->is_object() && it->value("method", "") == method) {
        nlohmann::json found = *it;
        seen.erase(it);
        return found;
      }
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      const double left =
          std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
      auto line = next(left);
      if (!line) return std::nullopt;
      if (line->is_object() && line->value("method", "") == method) return line;
      seen.push_back(std::move(*line));
    }
    return std::nullopt;
  }

  /// Sends initialize (declaring `capabilities`) and notifications/initialized; returns the
  /// initialize result, or null.
  nlohmann::json initialize(const nlohmann::json& capabilities = nlohmann::json::object()) {
    send(nlohmann::json{{"jsonrpc", "2.0"},
                        {"id", "init"},
                        {"method", "initialize"},
                        {"params",
                         {{"protocolVersion", "2025-06-18"},
                          {"capabilities", capabilities},
                          {"clientInfo", {{"name", "kaja-test"}, {"version", "1"}}}}}});
    auto answered = answer("init", 30);
    send(nlohmann::json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
    return answered && answered->contains("result") ? (*answered)["result"] : nlohmann::json();
  }

  /// Closes kaja's stdin.
  void closeInput() {
    if (input_ >= 0) ::close(input_);
    input_ = -1;
  }

  /// Waits up to `seconds` for kaja to exit; returns its exit code (-1 for a signal), or
  /// nothing while it still runs.
  std::optional<int> waitExit(double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!exited_) {
      int status = 0;
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        exited_ = true;
        exitCode_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        break;
      }
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return exitCode_;
  }

  /// Returns a field of /proc/PID/status in kB (VmHWM, VmRSS), or -1.
  [[nodiscard]] long statusKb(const std::string& field) const {
    const std::string status = readFile("/proc/" + std::to_string(pid_) + "/status");
    const auto at = status.find(field + ":");
    if (at == std::string::npos) return -1;
    return std::atol(status.c_str() + at + field.size() + 1);
  }

  std::vector<nlohmann::json> seen;  ///< lines read while waiting for something else

 private:
  pid_t pid_ = -1;
  int input_ = -1;
  int output_ = -1;
  std::string buffered_;
  bool exited_ = false;
  int exitCode_ = -1;
};

/// A marketplace with `fs` (server-filesystem, folder rules) and `everything`
/// (server-everything), both tagged in their environment, and personas over them:
///   work   fs with ~/rw, read-only ~/ro and backed-up ~/bk, and everything
///   files  fs alone, same folders
///   demo   everything alone
///   twins  fs and fs2, the same server twice
/// plus HOME, XDG dirs and the environment to run kaja in.
class ServeFixture {
 public:
  ServeFixture() {
    std::random_device random;
    tag = "kaja-serve-tag-" + std::to_string(::getpid()) + "-" + std::to_string(random());
    home = std::filesystem::canonical(root.path()).string() + "/home";
    const std::string npm =
        std::string(kaja::test::sourceDir()) + "/tests/npm/node_modules/@modelcontextprotocol/";
    const std::string fs = "command = \"node\"\nargs = [\"" + npm +
                           "server-filesystem/dist/index.js\"]\nroots = true\n"
                           "approval = \"writes\"\n"
                           "pathArgs = [\"path\", \"paths\", \"source\", \"destination\"]\n";
    root.write("market/abilities/fs/mcp.toml", fs + envTag("fs"));
    root.write("market/abilities/fs2/mcp.toml", fs + envTag("fs2"));
    root.write("market/abilities/everything/mcp.toml",
               "command = \"node\"\nargs = [\"" + npm +
                   "server-everything/dist/index.js\", \"stdio\"]\napproval = \"never\"\n" +
                   envTag("everything"));
    const std::string fsEntry = R"({ name = "fs", roots = [
  "~/rw",
  { path = "~/ro", readOnly = true },
  { path = "~/bk", backup = true },
] })";
    root.write("market/personas/work.toml", "abilities = [" + fsEntry + ", \"everything\"]\n");
    root.write("market/personas/files.toml", "abilities = [" + fsEntry + "]\n");
    root.write("market/personas/demo.toml", "abilities = [\"everything\"]\n");
    root.write("market/personas/twins.toml",
               "abilities = [{ name = \"fs\", roots = [\"~/rw\"] }, "
               "{ name = \"fs2\", roots = [\"~/rw\"] }]\n");
    root.write("home/rw/keep.txt", "rw");
    root.write("home/ro/secret.txt", "read only");
    root.write("home/bk/notes.txt", "version 1");
  }
  ~ServeFixture() {
    // A failed test must not leave its servers to the next one.
    for (const pid_t pid : processesTagged(tag)) ::kill(pid, SIGKILL);
  }

  /// The environment kaja (and a client that starts it) runs with.
  [[nodiscard]] std::vector<std::string> env() const {
    return {"HOME=" + home, "XDG_CONFIG_HOME=" + root.path() + "/config",
            "XDG_DATA_HOME=" + root.path() + "/data", "PATH=/usr/local/bin:/usr/bin:/bin",
            "KAJA_SHIPPED_MARKETPLACE=" + root.path() + "/market"};
  }
  [[nodiscard]] static std::string kajaBin() { return std::string(kaja::test::binDir()) + "/kaja"; }
  [[nodiscard]] std::string auditPath() const { return root.path() + "/data/kaja/audit.jsonl"; }
  /// The processes of one ability's server (its tag is `tag-<ability>`).
  [[nodiscard]] std::vector<pid_t> serverPids(const std::string& ability) const {
    return processesTagged(tag + "-" + ability + ";");
  }

  /// Starts `kaja serve ARGS` on pipes.
  std::unique_ptr<ServeProcess> serve(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {kajaBin(), "serve"};
    argv.insert(argv.end(), args.begin(), args.end());
    return std::make_unique<ServeProcess>(argv, env(), root.path() + "/serve-err.txt");
  }
  [[nodiscard]] std::string serveErrors() const { return readFile(root.path() + "/serve-err.txt"); }
  /// Waits up to 30 s for `kaja serve --persona P --http 127.0.0.1:0` to say where it listens;
  /// returns the port, or 0.
  [[nodiscard]] int httpPort(const std::string& persona) const {
    const std::regex served("serving persona \"" + persona +
                            "\" at http://127\\.0\\.0\\.1:([0-9]+)/mcp");
    int port = 0;
    eventually(
        [&] {
          std::smatch match;
          const std::string errors = serveErrors();
          if (!std::regex_search(errors, match, served)) return false;
          port = std::stoi(match[1]);
          return true;
        },
        30);
    return port;
  }

  TempDir root;
  std::string home;
  std::string tag;

 private:
  // The ability's tag in its server's environment: `tag-<ability>;`, so that "fs" does not
  // match "fs2".
  [[nodiscard]] std::string envTag(const std::string& ability) const {
    return "\n[env]\nKAJA_GATEWAY_TEST = \"" + tag + "-" + ability + ";\"\n";
  }
};

}  // namespace kaja::testing
