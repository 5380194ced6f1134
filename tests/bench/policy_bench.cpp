// policy_bench: the cost of kaja's call pipeline around a tool call, without the call.
//
//   build/bin/policy_bench [--iterations N] [--tools FILE] [--dir DIR]
//
// Times N iterations of each step on its own and of the steps a call goes through:
//   filter      filterTools over server-filesystem's 14 real tools, prompt-injection scan
//               included (kaja runs it once per tools/list, not per call)
//   approval    isWrite + ApprovalSession::decide under approval = "writes" (asks an
//               AutoApprover, so no person is in the loop)
//   folder      FolderGuard::check of one path argument, resolved with real lstat calls,
//               against three folders (writable, read-only, writable inside read-only);
//               once for an existing file and once for a new one, whose folder of 61
//               names is read for names equivalent to it
//   audit       AuditLog::append of one row to a real file in DIR
// and prints nanoseconds per call for each, plus "per call" (approval + folder + audit)
// and "with filter" (all four), as a table and as one JSON line.

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/mcp/blocking_client.h"
#include "core/policy/approval.h"
#include "core/policy/audit_log.h"
#include "core/policy/folder_guard.h"
#include "core/policy/tool_filter.h"
#include "tests/support/build_paths.h"

namespace {

using namespace kaja::core;
using namespace kaja::core::policy;
namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

struct Options {
  long iterations = 20000;
  std::string toolsFile =
      std::string(kaja::test::sourceDir()) + "/tests/core/policy/data/server-filesystem.tools.json";
  std::string dir;
};

bool parseOptions(int argc, char** argv, Options& options) {
  const char* tmp = std::getenv("TMPDIR");
  options.dir = tmp != nullptr && *tmp ? tmp : "/tmp";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) return false;
    if (arg == "--iterations") {
      options.iterations = std::strtol(argv[++i], nullptr, 10);
    } else if (arg == "--tools") {
      options.toolsFile = argv[++i];
    } else if (arg == "--dir") {
      options.dir = argv[++i];
    } else {
      return false;
    }
  }
  return options.iterations > 0;
}

std::vector<mcp::Tool> loadTools(const std::string& file) {
  std::ifstream in(file);
  auto json = mcp::Json::parse(in, nullptr, false);
  std::vector<mcp::Tool> tools;
  if (!json.is_array()) return tools;
  for (const auto& item : json) {
    if (auto tool = mcp::Tool::fromJson(item)) tools.push_back(*tool);
  }
  return tools;
}

// Returns nanoseconds per iteration of `step`, after a short warm-up.
double time(long iterations, const std::function<bool()>& step) {
  for (long i = 0; i < iterations / 20 + 1; ++i) step();
  auto start = SteadyClock::now();
  long failures = 0;
  for (long i = 0; i < iterations; ++i) failures += step() ? 0 : 1;
  auto elapsed = std::chrono::duration<double, std::nano>(SteadyClock::now() - start).count();
  if (failures != 0) std::fprintf(stderr, "policy_bench: %ld step(s) failed\n", failures);
  return elapsed / static_cast<double>(iterations);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parseOptions(argc, argv, options)) {
    std::fprintf(stderr, "usage: policy_bench [--iterations N] [--tools FILE] [--dir DIR]\n");
    return 2;
  }
  auto tools = loadTools(options.toolsFile);
  if (tools.empty()) {
    std::fprintf(stderr, "policy_bench: no tools in %s\n", options.toolsFile.c_str());
    return 1;
  }
  std::string pattern = options.dir + "/kaja-policy-bench-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::perror("policy_bench: mkdtemp");
    return 1;
  }
  std::string root = fs::canonical(pattern).string();
  std::string home = root + "/home";
  std::error_code ec;
  fs::create_directories(home + "/notes/sub", ec);
  fs::create_directories(home + "/site/drafts", ec);
  std::ofstream(home + "/notes/sub/file.md") << "note\n";
  // A folder of ordinary size, a few names not ASCII: a new file's name is looked for among
  // them (a server may map it onto an equivalent existing one).
  for (int i = 0; i < 60; ++i) {
    std::string name = (i % 10 == 0 ? "r\xc3\xa9sum\xc3\xa9-" : "note-") + std::to_string(i);
    std::ofstream(home + "/notes/sub/" + name + ".md") << "n\n";
  }

  Ability ability;
  ability.name = "filesystem";
  ability.pathArgs = {"path", "paths", "source", "destination"};
  PersonaEntry entry{
      "filesystem",
      std::nullopt,
      {{"~/notes", false, false}, {"~/site", true, false}, {"~/site/drafts", false, false}}};
  auto guard = FolderGuard::create(entry.roots, home);
  auto log = AuditLog::open(root + "/data");
  if (!guard || !log) {
    std::fprintf(stderr, "policy_bench: setup failed: %s\n",
                 (!guard ? guard.error() : log.error()).describe().c_str());
    return 1;
  }
  const mcp::Tool* writeFile = nullptr;
  for (const auto& tool : tools) {
    if (tool.name == "write_file") writeFile = &tool;
  }
  if (writeFile == nullptr) {
    std::fprintf(stderr, "policy_bench: the tools have no write_file\n");
    return 1;
  }
  mcp::Json arguments = {{"path", "~/notes/sub/file.md"}, {"content", "new text of the note"}};
  AutoApprover approver;
  ApprovalSession session(approver);
  ApprovalPolicy policy{ApprovalMode::kWrites, {}};

  auto filterStep = [&] {
    return filterTools(ability, &entry, tools).offered.size() == tools.size();
  };
  auto approvalStep = [&] {
    bool write = isWrite(*writeFile, ability, arguments);
    return session.decide(policy, {"filesystem", writeFile->name, arguments, write, false})
        .allowed();
  };
  auto folderStep = [&] { return guard->check(ability, arguments).has_value(); };
  mcp::Json newFile = {{"path", "~/notes/sub/new-file.md"}, {"content", "x"}};
  auto newFileStep = [&] { return guard->check(ability, newFile).has_value(); };
  auto auditStep = [&] {
    AuditRecord record;
    record.time = std::chrono::system_clock::now();
    record.persona = "writer";
    record.ability = ability.name;
    record.tool = writeFile->name;
    record.argumentNames = argumentNames(arguments, declaredArguments(writeFile->inputSchema));
    return log->append(record).has_value();
  };

  long n = options.iterations;
  double filterNs = time(n, filterStep);
  double approvalNs = time(n, approvalStep);
  double folderNs = time(n, folderStep);
  double newFileNs = time(n, newFileStep);
  double auditNs = time(n, auditStep);
  double perCallNs = time(n, [&] { return approvalStep() && folderStep() && auditStep(); });
  double withFilterNs =
      time(n, [&] { return filterStep() && approvalStep() && folderStep() && auditStep(); });

  // The yardstick: a stdio round trip to the real server-filesystem, same machine, same
  // run, for a read (the cheapest call) and for the write the pipeline steps above check.
  double readTripNs = 0;
  double writeTripNs = 0;
  {
    LaunchPlan plan;
    plan.argv = {
        "/usr/bin/node",
        std::string(kaja::test::sourceDir()) +
            "/tests/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
        home + "/notes"};
    plan.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin", false}, {"HOME", home, false}};
    mcp::BlockingClient client;
    if (auto connected = client.connect(plan); !connected) {
      std::fprintf(stderr, "policy_bench: server-filesystem: %s\n",
                   connected.error().describe().c_str());
      return 1;
    }
    long trips = std::min<long>(n, 2000);
    mcp::Json readArgs = {{"path", home + "/notes/sub/file.md"}};
    mcp::Json writeArgs = {{"path", home + "/notes/sub/file.md"}, {"content", "new text"}};
    for (int i = 0; i < 50; ++i) (void)client.callTool("read_text_file", readArgs);
    readTripNs =
        time(trips, [&] { return client.callTool("read_text_file", readArgs).has_value(); });
    writeTripNs = time(trips, [&] { return client.callTool("write_file", writeArgs).has_value(); });
    client.close();
  }

  std::printf("policy_bench: %ld iterations, %zu tools, audit file in %s\n", n, tools.size(),
              root.c_str());
  std::printf("  %-40s %12.0f ns\n", "filter (14 tools, with T7 scan)", filterNs);
  std::printf("  %-40s %12.0f ns\n", "approval decision", approvalNs);
  std::printf("  %-40s %12.0f ns\n", "folder check (real lstat resolution)", folderNs);
  std::printf("  %-40s %12.0f ns\n", "folder check, new file (61 names read)", newFileNs);
  std::printf("  %-40s %12.0f ns\n", "audit write (one write())", auditNs);
  std::printf("  %-40s %12.0f ns\n", "per call: approval + folder + audit", perCallNs);
  std::printf("  %-40s %12.0f ns\n", "per call with filter", withFilterNs);
  std::printf("  %-40s %12.0f ns\n", "server-filesystem round trip, read", readTripNs);
  std::printf("  %-40s %12.0f ns\n", "server-filesystem round trip, write", writeTripNs);
  std::printf("  pipeline per call / read round trip:  %5.1f%%  (target < 5%%)\n",
              100.0 * perCallNs / readTripNs);
  std::printf("  pipeline per call / write round trip: %5.1f%%\n", 100.0 * perCallNs / writeTripNs);
  mcp::Json line = {{"bench", "policy"},        {"iterations", n},
                    {"tools", tools.size()},    {"filterNs", filterNs},
                    {"approvalNs", approvalNs}, {"folderNs", folderNs},
                    {"newFileNs", newFileNs},   {"auditNs", auditNs},
                    {"perCallNs", perCallNs},   {"withFilterNs", withFilterNs},
                    {"readTripNs", readTripNs}, {"writeTripNs", writeTripNs}};
  std::printf("%s\n", line.dump().c_str());
  fs::remove_all(root, ec);
  return 0;
}
