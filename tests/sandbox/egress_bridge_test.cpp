// `kaja sandbox bridge` for real: inside a network namespace of the test's own it starts
// its program, relays a TCP port to the egress proxy's unix socket, passes SIGTERM on and
// exits with the program's status. With the egress lab (egress_lab.h) as the outside, a
// program in a bwrap sandbox with no network reaches the public server only through the
// bridge and the proxy.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/sandbox/egress_lab.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"

namespace kaja::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kKaja = std::string(kaja::test::binDir()) + "/kaja";

// Runs `kaja sandbox bridge ARGS` in a network namespace of its own.
CommandResult bridgeAlone(const std::vector<std::string>& args, double timeoutSeconds = 30) {
  std::vector<std::string> argv = {"/usr/bin/unshare", "-n", kKaja, "sandbox", "bridge"};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions options;
  options.timeoutSeconds = timeoutSeconds;
  return runCommandWith(argv, {kLabPath}, options);
}

TEST(EgressBridgeTest, ExitsWithItsProgramsStatus) {
  if (const std::string problem = namespaceProblem(); !problem.empty()) GTEST_SKIP() << problem;
  const std::vector<std::string> listen = {"--listen", "127.0.0.1:3128", "--socket", "/none"};
  auto with = [&](std::vector<std::string> program) {
    auto args = listen;
    args.push_back("--");
    args.insert(args.end(), program.begin(), program.end());
    return bridgeAlone(args);
  };
  // The namespace's lo starts down; the bridge brings it up to listen.
  auto done = with({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(done.exitCode, 3) << done.err;
  EXPECT_EQ(done.out, "out\n");
  EXPECT_EQ(done.err, "err\n");
  EXPECT_EQ(with({"/bin/sh", "-c", "kill -KILL $$"}).exitCode, 137);
  auto input = bridgeAlone({"--listen", "[::1]:3128", "--socket", "/none", "--", "/bin/cat"});
  EXPECT_TRUE(input.exitCode == 0 || input.err.find("bind(") != std::string::npos) << input.err;
  auto missing = with({"/no/such/program"});
  EXPECT_EQ(missing.exitCode, 126);
  EXPECT_THAT(missing.err, HasSubstr("execv(/no/such/program): No such file or directory"));
}

TEST(EgressBridgeTest, RefusesBadUsageWithExit2) {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"--listen", "127.0.0.1:3128", "--socket", "/s"},
      {"--listen", "127.0.0.1:3128", "--socket", "/s", "--"},
      {"--listen", "127.0.0.1:3128", "--socket", "/s", "--", "sh"},
      {"--listen", "127.0.0.1", "--socket", "/s", "--", "/bin/true"},
      {"--listen", "127.0.0.1:0", "--socket", "/s", "--", "/bin/true"},
      {"--listen", "localhost:3128", "--socket", "/s", "--", "/bin/true"},
      {"--listen", "127.0.0.1:3128", "--", "/bin/true"},
      {"--listen", "127.0.0.1:3128", "--socket", "/s", "--what", "x", "--", "/bin/true"},
  };
  for (const auto& args : cases) {
    std::vector<std::string> argv = {kKaja, "sandbox", "bridge"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto result = runCommand(argv, {kLabPath});
    EXPECT_EQ(result.exitCode, 2) << ::testing::PrintToString(args) << result.err;
    EXPECT_THAT(result.err, HasSubstr("kaja sandbox bridge --listen"));
  }
}

TEST(EgressBridgeTest, PassesSigtermToItsProgramAndStaysSmall) {
  if (const std::string problem = namespaceProblem(); !problem.empty()) GTEST_SKIP() << problem;
  const std::string script =
      kKaja +
      " sandbox bridge --listen 127.0.0.1:3128 --socket /none -- /bin/sh -c "
      "'trap \"exit 42\" TERM; echo started; while :; do sleep 0.1; done' &\n"
      "bridge=$!\n"
      "for i in $(seq 100); do grep -q started out 2>/dev/null && break; sleep 0.1; done\n"
      "grep VmRSS /proc/$bridge/status\n"
      "kill -TERM $bridge\nwait $bridge\necho status=$?\n";
  TempDir dir;
  RunOptions options;
  options.timeoutSeconds = 30;
  const auto result = runCommandWith({"/usr/bin/unshare", "-n", "/bin/sh", "-c",
                                      "cd " + dir.path() + " && (" + script + ") > out"},
                                     {kLabPath}, options);
  const std::string out = readFile(dir.path() + "/out");
  EXPECT_THAT(out, HasSubstr("status=42")) << out << result.err;
  const auto rss = out.find("VmRSS:");
  ASSERT_NE(rss, std::string::npos) << out;
  const long kb = std::atol(out.c_str() + rss + 6);
  ::testing::Test::RecordProperty("bridge_rss_kb", static_cast<int>(kb));
  // Most of it is the kaja binary's shared pages; the bridge itself adds little.
  EXPECT_GT(kb, 0);
  if (kaja::testing::kMemoryIsMeasured) {
    EXPECT_LT(kb, 64 * 1024) << out;
  }
}

// Returns an empty string when bwrap can make a sandbox without network here.
std::string bwrapProblem() {
  const auto result = runCommand(
      {"/usr/bin/bwrap", "--ro-bind", "/", "/", "--unshare-net", "--", "/bin/true"}, {kLabPath});
  if (result.exitCode == 0) return {};
  return "bwrap --unshare-net does not work here (" + result.err.substr(0, 200) + ")";
}

TEST(EgressBridgeTest, AProgramWithoutNetworkGoesOutOnlyThroughBridgeAndProxy) {
  if (const std::string problem = namespaceProblem(); !problem.empty()) GTEST_SKIP() << problem;
  if (const std::string problem = bwrapProblem(); !problem.empty()) GTEST_SKIP() << problem;
  auto lab = EgressLab::start();
  ASSERT_TRUE(lab);
  const std::string script = R"sh(
export http_proxy=http://127.0.0.1:3128 HTTP_PROXY=http://127.0.0.1:3128
grep VmRSS /proc/$PPID/status
curl -sS --max-time 10 http://93.184.216.34/via-env; echo "env=$?"
curl -sS --max-time 10 -p http://93.184.216.34/via-connect; echo "connect=$?"
curl -sS --max-time 10 -o /dev/null -w "private=%{http_code}\n" http://10.0.0.5/
curl -sS --max-time 10 -o /dev/null -w "metadata=%{http_code}\n" http://169.254.169.254/
curl -sS --max-time 10 -o /dev/null -w "named=%{http_code}\n" http://private.example/
head -c 1048576 /dev/urandom > /tmp/big
curl -sS --max-time 30 --data-binary @/tmp/big http://93.184.216.34/echo -o /tmp/answer
tail -c 1048576 /tmp/answer | cmp -s - /tmp/big && echo same=yes
(for i in $(seq 20); do
  curl -sS --max-time 30 -o /dev/null -w "%{http_code}\n" http://93.184.216.34/p$i &
done; wait) > /tmp/codes
echo "parallel=$(grep -c '^200$' /tmp/codes)"
curl -sS --noproxy '*' --max-time 5 http://93.184.216.34/raw 2>/dev/null; echo "raw=$?"
bash -c 'echo x > /dev/tcp/93.184.216.34/80' 2>/dev/null; echo "tcp=$?"
bash -c 'echo x > /dev/udp/93.184.216.34/53' 2>/dev/null; echo "udp=$?"
exit 7
)sh";
  RunOptions options;
  options.timeoutSeconds = 90;
  const auto result = runCommandWith({"/usr/bin/bwrap",
                                      "--ro-bind",
                                      "/",
                                      "/",
                                      "--dev",
                                      "/dev",
                                      "--proc",
                                      "/proc",
                                      "--tmpfs",
                                      "/tmp",
                                      "--tmpfs",
                                      "/run",
                                      "--bind",
                                      lab->socketPath(),
                                      "/run/kaja-egress.sock",
                                      "--unshare-net",
                                      "--unshare-pid",
                                      "--die-with-parent",
                                      "--",
                                      kKaja,
                                      "sandbox",
                                      "bridge",
                                      "--listen",
                                      "127.0.0.1:3128",
                                      "--socket",
                                      "/run/kaja-egress.sock",
                                      "--",
                                      "/bin/sh",
                                      "-c",
                                      script},
                                     {kLabPath}, options);
  EXPECT_EQ(result.exitCode, 7) << result.out << result.err;
  EXPECT_THAT(result.out, HasSubstr("origin 93.184.216.34:80\nGET /via-env HTTP/1.1\r\n"));
  EXPECT_THAT(result.out, HasSubstr("env=0"));
  EXPECT_THAT(result.out, HasSubstr("origin 93.184.216.34:80\nGET /via-connect HTTP/1.1\r\n"));
  EXPECT_THAT(result.out, HasSubstr("connect=0"));
  EXPECT_THAT(result.out, HasSubstr("private=403"));
  EXPECT_THAT(result.out, HasSubstr("metadata=403"));
  EXPECT_THAT(result.out, HasSubstr("named=403"));
  EXPECT_THAT(result.out, HasSubstr("same=yes"));
  EXPECT_THAT(result.out, HasSubstr("parallel=20"));
  EXPECT_THAT(result.out, HasSubstr("raw=7"));
  EXPECT_THAT(result.out, Not(HasSubstr("tcp=0")));
  EXPECT_THAT(result.out, Not(HasSubstr("udp=0")));
  // Only the 23 requests through the proxy reached the public server.
  EXPECT_EQ(lab->served("93.184.216.34:80", 23), 23);
  EXPECT_EQ(lab->served("10.0.0.5:80"), 0);
  EXPECT_EQ(lab->served("169.254.169.254:80"), 0);
  const auto rss = result.out.find("VmRSS:");
  ASSERT_NE(rss, std::string::npos) << result.out;
  ::testing::Test::RecordProperty("bridge_rss_kb",
                                  static_cast<int>(std::atol(result.out.c_str() + rss + 6)));
}

}  // namespace
}  // namespace kaja::testing
