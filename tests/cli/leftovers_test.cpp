// Nothing of a server outlives kaja: `kaja call`, `kaja tools` and `kaja doctor` run a
// server that ignores SIGTERM and EOF and leaves a group child, a setsid grandchild, a
// double-forked daemon and a child in a group of its own (tests/tools/kaja_leftover_server).
// kaja then finishes normally, or gets SIGINT, SIGTERM, SIGHUP or SIGKILL; each time no
// process of the server's tree may be left, nor a kaja-doctor-* folder in kaja's TMPDIR
// (after SIGKILL, once the next doctor ran).
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/core/mcp/test_servers.h"
#include "tests/support/build_paths.h"
#include "tests/support/temp_dir.h"

namespace kaja::cli {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// The guardian kaja runs the server under, the server, its group child, the child that
// starts the setsid grandchild, that grandchild, the daemon and the child in a group of
// its own.
constexpr size_t kServerTree = 7;
// What wait() adds to the number of the signal that killed kaja.
constexpr int kKilledBy = 1000;

class LeftoversTest : public ::testing::Test {
 protected:
  LeftoversTest() {
    std::random_device random;
    tag_ = "kaja-leftover-tag-" + std::to_string(::getpid()) + "-" + std::to_string(random());
    const std::string server = std::string(kaja::test::binDir()) + "/kaja_leftover_server";
    root_.write("market/abilities/leftover/mcp.toml",
                "command = \"" + server + "\"\nargs = [\"" + tag_ + "\"]\n");
    root_.write("market/abilities/stalling/mcp.toml",
                "command = \"" + server + "\"\nargs = [\"" + tag_ + "\", \"stall-list\"]\n");
    root_.write("market/personas/default.toml", "abilities = [\"leftover\"]\n");
    root_.write("market/personas/stalling.toml", "abilities = [\"stalling\"]\n");
    fs::create_directories(root_.path() + "/tmp");
  }
  ~LeftoversTest() override {
    // A failed test must not leave its servers to the next one.
    for (const pid_t pid : tagged()) ::kill(pid, SIGKILL);
  }

  // Live (not zombie) processes whose argv carries this test's tag.
  std::vector<pid_t> tagged() const {
    std::vector<pid_t> found;
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) return found;
    while (const dirent* entry = ::readdir(proc)) {
      const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
      if (pid <= 0) continue;
      std::string cmdline = testing::readFile("/proc/" + std::to_string(pid) + "/cmdline");
      for (char& c : cmdline) c = c == '\0' ? ' ' : c;
      if (cmdline.find(tag_) != std::string::npos && kaja::testing::isRunning(pid)) {
        found.push_back(pid);
      }
    }
    ::closedir(proc);
    return found;
  }

  std::vector<std::string> doctorFolders() const {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(root_.path() + "/tmp")) {
      const std::string name = entry.path().filename();
      if (name.rfind("kaja-doctor-", 0) == 0) found.push_back(name);
    }
    return found;
  }

  // Starts kaja in a process group of its own, output to files.
  pid_t start(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {std::string(kaja::test::binDir()) + "/kaja"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env = {"HOME=" + root_.path() + "/home",
                                    "XDG_CONFIG_HOME=" + root_.path() + "/config",
                                    "XDG_DATA_HOME=" + root_.path() + "/data",
                                    "PATH=/usr/local/bin:/usr/bin:/bin",
                                    "TMPDIR=" + root_.path() + "/tmp",
                                    "KAJA_SHIPPED_MARKETPLACE=" + root_.path() + "/market"};
    std::vector<char*> argp;
    for (auto& arg : argv) argp.push_back(arg.data());
    argp.push_back(nullptr);
    std::vector<char*> envp;
    for (auto& entry : env) envp.push_back(entry.data());
    envp.push_back(nullptr);
    const std::string out = root_.path() + "/out.txt";
    const std::string err = root_.path() + "/err.txt";
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      const int in = ::open("/dev/null", O_RDONLY);
      const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(in, 0);
      ::dup2(o, 1);
      ::dup2(e, 2);
      ::execve(argp[0], argp.data(), envp.data());
      ::_exit(127);
    }
    return pid;
  }

  // Waits up to `limit` for kaja; returns its exit code, kKilledBy + the signal that killed
  // it (so an exit with 130 and a death by SIGINT differ), or -1 when it was still running
  // (it is then killed).
  int wait(pid_t pid, std::chrono::milliseconds limit) {
    const auto started = std::chrono::steady_clock::now();
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() - started > limit) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        return -1;
      }
      std::this_thread::sleep_for(10ms);
    }
    return WIFSIGNALED(status) ? kKilledBy + WTERMSIG(status) : WEXITSTATUS(status);
  }

  std::string err() const { return testing::readFile(root_.path() + "/err.txt"); }

  // Runs kaja until the whole server tree is up, sends it `signal` and checks how it ends.
  void interrupt(const std::vector<std::string>& args, int signal) {
    const pid_t kaja = start(args);
    ASSERT_GT(kaja, 0);
    const bool up = kaja::testing::eventually([&] { return tagged().size() >= kServerTree; }, 20s);
    ASSERT_TRUE(up) << "found " << tagged().size() << " of the server's processes; " << err();
    ::kill(kaja, signal);
    EXPECT_EQ(wait(kaja, 15s), 128 + signal) << err();
    EXPECT_TRUE(kaja::testing::eventually([&] { return tagged().empty(); }, 5s))
        << tagged().size() << " of the server's processes are left";
    EXPECT_TRUE(doctorFolders().empty());
  }

  // Runs kaja to its end and checks its exit code and that it left nothing.
  void finish(const std::vector<std::string>& args, int exitCode = 0) {
    const pid_t kaja = start(args);
    ASSERT_GT(kaja, 0);
    EXPECT_EQ(wait(kaja, 30s), exitCode) << err();
    EXPECT_TRUE(kaja::testing::eventually([&] { return tagged().empty(); }, 5s))
        << tagged().size() << " of the server's processes are left";
    EXPECT_TRUE(doctorFolders().empty());
  }

  testing::TempDir root_;
  std::string tag_;
};

TEST_F(LeftoversTest, CallThatFinishesLeavesNothing) {
  finish({"call", "--persona", "default", "--yes", "leftover", "echo", "{}"});
}

TEST_F(LeftoversTest, ToolsThatFinishLeavesNothing) { finish({"tools", "--persona", "default"}); }

TEST_F(LeftoversTest, DoctorThatFinishesLeavesNothing) { finish({"doctor", "leftover"}); }

TEST_F(LeftoversTest, DoctorThatFailsLeavesNothing) {
  root_.write("market/abilities/broken/mcp.toml",
              "command = \"/bin/sh\"\nargs = [\"-c\", \"exit 3\"]\n");
  finish({"doctor", "leftover", "broken"}, 1);
}

TEST_F(LeftoversTest, AServerThatKillsItsGuardianStillLeavesNothing) {
  // The server then dies too (its parent-death signal), and what it left is reparented to
  // kaja, the subreaper, which ends it before exiting.
  root_.write("market/abilities/parricide/mcp.toml",
              "command = \"" + std::string(kaja::test::binDir()) +
                  "/kaja_leftover_server\"\nargs = [\"" + tag_ + "\", \"kill-parent\"]\n");
  finish({"doctor", "parricide"});
}

TEST_F(LeftoversTest, SigintDuringACallEndsTheServerTreeAndExits130) {
  interrupt({"call", "--persona", "default", "--yes", "leftover", "stall", "{}"}, SIGINT);
}

TEST_F(LeftoversTest, SigtermDuringACallEndsTheServerTreeAndExits143) {
  interrupt({"call", "--persona", "default", "--yes", "leftover", "stall", "{}"}, SIGTERM);
}

TEST_F(LeftoversTest, SigintDuringToolsEndsTheServerTree) {
  interrupt({"tools", "--persona", "stalling"}, SIGINT);
}

TEST_F(LeftoversTest, SighupDuringToolsEndsTheServerTreeAndExits129) {
  interrupt({"tools", "--persona", "stalling"}, SIGHUP);
}

TEST_F(LeftoversTest, SigintDuringDoctorEndsTheServerTreeAndRemovesItsFolder) {
  // The folder exists while doctor runs, so its removal is kaja's doing.
  const pid_t kaja = start({"doctor", "--timeout", "60", "stalling"});
  ASSERT_TRUE(kaja::testing::eventually([&] { return tagged().size() >= kServerTree; }, 20s));
  EXPECT_EQ(doctorFolders().size(), 1u);
  ::kill(kaja, SIGINT);
  EXPECT_EQ(wait(kaja, 15s), 130) << err();
  EXPECT_TRUE(kaja::testing::eventually([&] { return tagged().empty(); }, 5s));
  EXPECT_TRUE(doctorFolders().empty());
}

TEST_F(LeftoversTest, SigtermDuringDoctorEndsTheServerTreeAndExits143) {
  interrupt({"doctor", "--timeout", "60", "stalling"}, SIGTERM);
}

// kaja gets no chance to act on SIGKILL. Its guardian sees kaja gone and ends the whole
// tree under it, the daemon and the setsid grandchild too (they were reparented to the
// guardian, not past it).
TEST_F(LeftoversTest, SigkillOfKajaEndsTheServerTree) {
  const pid_t kaja = start({"call", "--persona", "default", "--yes", "leftover", "stall", "{}"});
  ASSERT_TRUE(kaja::testing::eventually([&] { return tagged().size() >= kServerTree; }, 20s));
  ::kill(kaja, SIGKILL);
  EXPECT_EQ(wait(kaja, 5s), kKilledBy + SIGKILL);
  EXPECT_TRUE(kaja::testing::eventually([&] { return tagged().empty(); }, 5s))
      << tagged().size() << " of the server's processes are left";
}

TEST_F(LeftoversTest, SigkillOfKajaDuringDoctorEndsTheServerTreeAndTheNextDoctorItsFolder) {
  const pid_t kaja = start({"doctor", "--timeout", "60", "stalling"});
  ASSERT_TRUE(kaja::testing::eventually([&] { return tagged().size() >= kServerTree; }, 20s));
  ::kill(kaja, SIGKILL);
  EXPECT_EQ(wait(kaja, 5s), kKilledBy + SIGKILL);
  EXPECT_TRUE(kaja::testing::eventually([&] { return tagged().empty(); }, 5s))
      << tagged().size() << " of the server's processes are left";
  // The killed doctor could not remove its folder; once it is a minute old, the next does.
  const auto left = doctorFolders();
  ASSERT_EQ(left.size(), 1u);
  const std::string path = root_.path() + "/tmp/" + left.front();
  const timeval old[2] = {{::time(nullptr) - 3600, 0}, {::time(nullptr) - 3600, 0}};
  ASSERT_EQ(::utimes(path.c_str(), old), 0);
  finish({"doctor", "leftover"});
}

}  // namespace
}  // namespace kaja::cli
