// Every example command in README.md, run exactly as written, in order, by an ordinary user
// with a fresh home and an installed kaja, so that the README stays true.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja {
namespace {

namespace fs = std::filesystem;

const std::string kBuild = fs::path(kaja::test::binDir()).parent_path().string();
const std::string kSource = kaja::test::sourceDir();
const std::string kSystemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
constexpr int kNobody = 65534;

/// How one README line is run and what it must do.
struct Example {
  std::string line;      ///< the README line without its trailing comment
  int exit = 0;          ///< the exit status it must end with
  std::string mustShow;  ///< text its output (stdout and stderr) must hold, when set
  std::string input;     ///< fed on stdin
  int listensOn = 0;     ///< a server: it must accept connections on this port, then it is
                         ///< stopped (it runs in a network namespace of its own)
};

// The README's example lines, in the order the README gives them. A line added to the
// README without an entry here fails the test, and so does an entry the README lost.
std::vector<Example> examples() {
  return {
      {"mkdir -p ~/Documents && echo '- buy milk' > ~/Documents/todo.md"},
      // context7 is remote and this machine has no DNS; time needs PyPI.
      {"kaja doctor", 1, "filesystem"},
      {"kaja doctor --verbose time filesystem", 0, "filesystem"},
      {"kaja tools", 0, "mcp__filesystem__read_text_file"},
      {"kaja tools filesystem read_text_file", 0, "path"},
      {"kaja call filesystem read_text_file '{\"path\": \"~/Documents/todo.md\"}'", 0, "buy milk"},
      // A read keeps no copy; the call above wrote an audit row.
      {"kaja backups", 0},
      {"kaja audit --since 1h", 0, "read_text_file"},
      {"kaja serve", 0},
      {"kaja serve --http 127.0.0.1:8931", 0, "", "", 8931},
      {"kaja abilities", 0, "sequential-thinking"},
      {"kaja personas", 0, "* default"},
      {"kaja persona use writer", 0, "writer is now the active persona."},
      {"kaja add notes -- /usr/local/bin/notes-mcp --db ~/notes.db", 0, "added notes"},
      {"kaja add docs https://mcp.example.com/mcp --header 'Authorization: Bearer …'", 0,
       "added docs"},
      {"kaja add everything --npm @modelcontextprotocol/server-everything@2026.8.31", 0,
       "added everything"},
      {"kaja add-json gh '{\"command\": \"npx\", \"args\": [\"-y\", \"pkg@1.0.0\"], \"env\": "
       "{\"GITHUB_TOKEN\": \"…\"}}'",
       0, "added gh"},
      // A fresh home has no Claude Code files to import.
      {"kaja import claude --dry-run", 2, "found no Claude Code file"},
      {"kaja get notes", 0, "/usr/local/bin/notes-mcp"},
      {"kaja enable notes", 0, "persona writer"},
      {"kaja persona new work --from writer", 0, "persona work"},
      {"kaja persona add work notes --tools search,read", 0, "persona work"},
      {"kaja persona folder add work ~/projects --read-only", 0, "persona work"},
      {"kaja persona folder rm work ~/projects", 0, "persona work"},
      {"kaja remove notes", 0, "removed notes"},
      {"kaja config paths", 0, "secrets"},
      {"kaja key set context7", 0, "saved the key for context7", "ctx7-example-key\n"},
      {"kaja key rm context7", 0, "removed the key for context7"},
      {"kaja key list", 0, "context7"},
      // No DNS here: the server cannot be asked what it wants.
      {"kaja login context7", 4, "cannot reach context7"},
      {"kaja login --status", 0, "no remote ability is signed in"},
      {"kaja logout context7", 0, "no sign-in was stored for context7"},
      {"head -c 32 /dev/urandom > worker.key && chmod 600 worker.key"},
      {"kaja sandbox serve --listen 127.0.0.1:8080 --key-file worker.key", 0, "", "", 8080},
      {"kaja sandbox token alice --key-file worker.key", 0, "kj1_"},
      // The worker was stopped after the line that started it.
      {"kaja sandbox status", 1, "no sandbox worker is running"},
      {"kaja docker mounts", 0, "-v "},
      {"kaja completion bash", 0, "complete"},
      {"kaja export claude", 0, "mcpServers"},
      {"kaja help call", 0, "Usage: kaja call"},
      {"kaja help rules K15", 0, "K15 read-only folder"},
      {"head -c 32 /dev/urandom > worker.key && chmod 600 worker.key"},
      {"kaja sandbox serve --listen 0.0.0.0:8080 --key-file worker.key", 0, "", "", 8080},
      {"kaja sandbox token alice --key-file worker.key --ttl 3600", 0, "kj1_"},
      {"kaja sandbox status", 1, "no sandbox worker is running"},
  };
}

// Returns every line of the README's ```sh blocks that runs kaja, or that prepares for a
// line that does (mkdir, head), without trailing comments and surrounding blanks.
std::vector<std::string> readmeLines() {
  std::ifstream in(kSource + "/README.md");
  std::vector<std::string> lines;
  std::string line;
  bool inShell = false;
  while (std::getline(in, line)) {
    if (line.starts_with("```")) {
      inShell = !inShell && line == "```sh";
      continue;
    }
    if (!inShell) continue;
    // A comment starts at "  #" (two blanks); no example has that inside quotes.
    if (auto hash = line.find("  #"); hash != std::string::npos) line.resize(hash);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    while (!line.empty() && line.front() == ' ') line.erase(0, 1);
    if (line.starts_with("kaja ") || line.starts_with("mkdir -p ~/") ||
        line.starts_with("head -c 32 /dev/urandom")) {
      lines.push_back(line);
    }
  }
  return lines;
}

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

class ReadmeExamplesTest : public ::testing::Test {
 protected:
  // Installs kaja into a fresh prefix and makes a fresh home that nobody owns.
  void install() {
    ::chmod(root_.path().c_str(), 0755);
    prefix_ = root_.path() + "/prefix";
    auto installed = testing::runCommand(
        {"/usr/bin/cmake", "--install", kBuild, "--prefix", prefix_}, {"PATH=" + kSystemPath});
    ASSERT_EQ(installed.exitCode, 0) << installed.out << installed.err;
    home_ = root_.path() + "/home";
    fs::create_directories(home_);
    ASSERT_EQ(::chown(home_.c_str(), kNobody, kNobody), 0);
  }

  // The command that runs `line` as an ordinary user (nobody) in the fresh home, with only
  // the installed kaja on PATH.
  [[nodiscard]] std::string asUser(const std::string& line) const {
    return "/usr/bin/setpriv --reuid=" + std::to_string(kNobody) +
           " --regid=" + std::to_string(kNobody) +
           " --clear-groups /usr/bin/env -i HOME=" + quoted(home_) +
           " PATH=" + quoted(prefix_ + "/bin:" + kSystemPath) +
           " NO_COLOR=1 LANG=C.UTF-8 /bin/bash -c " + quoted("cd ~ && " + line);
  }

  // Runs a server line in a network namespace of its own (so its port is free and nothing
  // leaves the machine), waits up to 60 s for its port to accept, then stops it. Exits 0
  // when it listened, 1 when it ended first, 2 when it never listened.
  [[nodiscard]] std::string serverScript(const std::string& line, int port) const {
    std::ostringstream script;
    script
        << "ip link set lo up || exit 3\n"
        << asUser(line) << " </dev/null & pid=$!\n"
        << "for i in $(seq 600); do\n"
        << "  if ! kill -0 $pid 2>/dev/null; then wait $pid; echo \"ended: $?\" >&2; exit 1; fi\n"
        << "  if (exec 3<>/dev/tcp/127.0.0.1/" << port << ") 2>/dev/null; then\n"
        << "    kill -TERM $pid; wait $pid; exit 0\n"
        << "  fi\n"
        << "  sleep 0.1\n"
        << "done\n"
        << "kill -KILL $pid; exit 2\n";
    return script.str();
  }

  testing::CommandResult run(const Example& example) const {
    testing::RunOptions options;
    options.input = example.input;
    options.timeoutSeconds = 240;
    if (example.listensOn != 0) {
      return testing::runCommandWith({"/usr/bin/unshare", "-n", "/bin/bash", "-c",
                                      serverScript(example.line, example.listensOn)},
                                     {"PATH=" + kSystemPath}, options);
    }
    return testing::runCommandWith({"/bin/bash", "-c", asUser(example.line)},
                                   {"PATH=" + kSystemPath}, options);
  }

  testing::TempDir root_;
  std::string prefix_;
  std::string home_;
};

TEST_F(ReadmeExamplesTest, EveryExampleLineHasAnEntryAndEveryEntryIsInTheReadme) {
  std::vector<std::string> wanted;
  for (const auto& example : examples()) wanted.push_back(example.line);
  EXPECT_EQ(readmeLines(), wanted)
      << "the README's example lines and this test's list differ: keep them in step";
}

TEST_F(ReadmeExamplesTest, EveryExampleRunsAsWrittenInAFreshHome) {
  if (::geteuid() != 0) GTEST_SKIP() << "runs the examples as nobody, which needs root";
  install();
  if (HasFatalFailure()) return;
  for (const auto& example : examples()) {
    auto result = run(example);
    const std::string output = result.out + result.err;
    EXPECT_EQ(result.exitCode, example.exit) << example.line << "\n" << output;
    if (!example.mustShow.empty()) {
      EXPECT_THAT(output, ::testing::HasSubstr(example.mustShow)) << example.line;
    }
  }
  // The examples' secrets ("…") went to the secrets file, never into a manifest.
  auto manifests =
      testing::runCommand({"/bin/grep", "-rl", "\u2026", home_ + "/.config/kaja/marketplace"}, {});
  EXPECT_EQ(manifests.out, "");
  EXPECT_THAT(testing::readFile(home_ + "/.config/kaja/secrets.toml"),
              ::testing::HasSubstr("\u2026"));
}

}  // namespace
}  // namespace kaja
