// Which stderr line says why a server failed: on text, and on the stderr of real crashes.
#include "core/process/stderr_line.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "core/process/tail_buffer.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::core {
namespace {

// Runs `argv` with the usual PATH and returns what it printed on stderr.
std::string stderrOf(const std::vector<std::string>& argv) {
  auto result =
      testing::runCommand(argv, {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent"});
  EXPECT_NE(result.exitCode, 0) << result.err;
  return result.err;
}

TEST(StderrLineTest, PrefersTheErrorOverTheRuntimeBannerAndStackFrames) {
  EXPECT_EQ(tellingStderrLine("Error: boom\n    at f (x.js:1:2)\n    at g (x.js:3:4)\n\n"
                              "Node.js v20.20.2\n"),
            "Error: boom");
}

TEST(StderrLineTest, TheLastLineWhenNothingStandsOut) {
  EXPECT_EQ(tellingStderrLine("starting\nlistening on stdio\n"), "listening on stdio");
  EXPECT_EQ(tellingStderrLine("one line without a newline"), "one line without a newline");
  EXPECT_EQ(tellingStderrLine(""), "");
  EXPECT_EQ(tellingStderrLine("\n\n  \n"), "");
  // Noise alone is still better than nothing.
  EXPECT_EQ(tellingStderrLine("}\nNode.js v20.20.2\n"), "Node.js v20.20.2");
}

TEST(StderrLineTest, AnErrorStatementBeatsALaterSystemFailureWord) {
  // Node prints the error object's fields after its message; `code: 'ENOENT'` is later but
  // says less.
  EXPECT_EQ(tellingStderrLine("Error: ENOENT: no such file or directory, open '/x/c.json'\n"
                              "    at Object.openSync (node:fs:573:3) {\n  errno: -2,\n"
                              "  code: 'ENOENT',\n  path: '/x/c.json'\n}\n\nNode.js v20.20.2\n"),
            "Error: ENOENT: no such file or directory, open '/x/c.json'");
  EXPECT_EQ(tellingStderrLine("loading\n./run.sh: line 3: notes-db: command not found\nbye\n"),
            "./run.sh: line 3: notes-db: command not found");
}

TEST(StderrLineTest, TheLastErrorWinsAndCaretsAndGoFramesAreSkipped) {
  EXPECT_EQ(tellingStderrLine("error: retrying\nfatal: gave up\n   ^^^^\n"), "fatal: gave up");
  EXPECT_EQ(tellingStderrLine("panic: runtime error: index out of range\n\ngoroutine 1 "
                              "[running]:\nmain.main()\n\t/src/main.go:5 +0x1d\n"),
            "panic: runtime error: index out of range");
}

TEST(StderrLineTest, TakesTheLastLineOfThePythonTraceback) {
  // SystemExit's line names no error; the traceback says it is the one.
  EXPECT_EQ(tellingStderrLine("warning: old config\nTraceback (most recent call last):\n"
                              "  File \"s.py\", line 3, in <module>\n    main()\n"
                              "SystemExit: bad flag\n"),
            "SystemExit: bad flag");
  // An error after the traceback is later still.
  EXPECT_EQ(tellingStderrLine("Traceback (most recent call last):\n  File \"s.py\", line 1\n"
                              "KeyError: 'x'\nError: the wrapper gave up\n"),
            "Error: the wrapper gave up");
}

TEST(StderrLineTest, SkipsTheFragmentAtTheStartOfACutTail) {
  EXPECT_EQ(tellingStderrLine("d Error: half a line\nstill running\n", true), "still running");
  EXPECT_EQ(tellingStderrLine("d Error: half a line\nstill running\n", false),
            "d Error: half a line");
  EXPECT_EQ(tellingStderrLine("only a fragment", true), "only a fragment");
}

TEST(StderrLineTest, NodeRequiringAMissingModule) {
  testing::TempDir dir;
  std::string script = dir.write("server.js", "require('kaja-no-such-module');\n");
  std::string err = stderrOf({"/usr/bin/env", "node", script});
  ASSERT_NE(err.find("Node.js v"), std::string::npos) << err;
  EXPECT_EQ(tellingStderrLine(err), "Error: Cannot find module 'kaja-no-such-module'");
}

TEST(StderrLineTest, NodeImportingAMissingPackage) {
  testing::TempDir dir;
  std::string script = dir.write("server.mjs", "import x from 'kaja-no-such-package';\n");
  std::string line = tellingStderrLine(stderrOf({"/usr/bin/env", "node", script}));
  EXPECT_EQ(
      line.rfind("Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'kaja-no-such-package'", 0), 0u)
      << line;
}

TEST(StderrLineTest, NodeThrowing) {
  testing::TempDir dir;
  std::string script = dir.write(
      "server.js", "console.error('starting notes');\nthrow new Error('bad config: no token');\n");
  EXPECT_EQ(tellingStderrLine(stderrOf({"/usr/bin/env", "node", script})),
            "Error: bad config: no token");
}

TEST(StderrLineTest, PythonMissingModule) {
  EXPECT_EQ(tellingStderrLine(stderrOf({"/usr/bin/env", "python3", "-c", "import kaja_nope"})),
            "ModuleNotFoundError: No module named 'kaja_nope'");
}

TEST(StderrLineTest, ShellNoiseThenAnError) {
  testing::TempDir dir;
  std::string script =
      dir.writeScript("run.sh",
                      "echo 'notes server 1.2' >&2\necho 'reading config' >&2\nkaja-no-such-tool\n"
                      "echo 'shutting down' >&2\nexit 1\n");
  std::string line = tellingStderrLine(stderrOf({script}));
  EXPECT_NE(line.find("kaja-no-such-tool: not found"), std::string::npos) << line;
}

TEST(StderrLineTest, TenMegabytesThroughATailBufferStaysBoundedAndQuick) {
  // The way the transport sees a flood: only the last 64 KB are kept, the first line of
  // them cut.
  TailBuffer tail(64 * 1024);
  std::string noise(1000, 'x');
  noise += '\n';
  tail.append("Error: an old failure long gone\n");
  for (int i = 0; i < 10 * 1024; ++i) tail.append(noise);
  tail.append("Error: out of disk\n");
  for (int i = 0; i < 20; ++i) tail.append(noise);
  auto start = std::chrono::steady_clock::now();
  std::string line = tellingStderrLine(tail.tail(), tail.totalBytes() > 64 * 1024);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(line, "Error: out of disk");
  EXPECT_LE(tail.tail().size(), 64u * 1024);
}

}  // namespace
}  // namespace kaja::core
