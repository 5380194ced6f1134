// A network lab for tests of a confined server's way out: inside a network and mount
// namespace the test makes (no packet leaves it), HTTP servers listen on a public address
// (93.184.216.34), a private one (10.0.0.5) and the metadata one (169.254.169.254), names
// resolve through a private /etc/hosts, and the real worker serves the lab's marketplace.
#pragma once

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sandbox/confine.h"
#include "tests/support/build_paths.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::sandbox::worker_lab {

/// One tools/call the lab makes, in order, to the ability "ability" as user alice.
struct LabCall {
  std::string name;       ///< the key of its reply
  std::string tool;       ///< the tool to call
  std::string arguments;  ///< its arguments, a JSON object
};

/// What the lab saw: each call's reply body by name, and the lab's own output.
struct LabResult {
  int exitCode = -1;
  std::map<std::string, std::string> replies;
  std::string out;
  std::string err;
  int leftovers = 0;  ///< processes still running with the lab's folder in their command line
};

/// Returns how many processes have `text` in their command line.
inline int processesMentioning(const std::string& text) {
  int count = 0;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return 0;
  while (const dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    std::ifstream file(std::string("/proc/") + entry->d_name + "/cmdline", std::ios::binary);
    std::string line((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (line.find(text) != std::string::npos) ++count;
  }
  ::closedir(proc);
  return count;
}

// The lab's script; it runs inside `unshare -n -m`: the addresses, the origins, the worker, then
// one call per line of $DIR/cases ("name tool arguments"), printing "name: <reply>".
inline constexpr const char* kLab = R"(set -eu
# The origins and the worker end with the lab, however it ends: nothing is left behind.
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null || true' EXIT
ip link set lo up
for a in 93.184.216.34 10.0.0.5 169.254.169.254; do
  ip addr add "$a/32" dev lo
  mkdir -p "$DIR/www/$a" && echo "page-of-$a" > "$DIR/www/$a/index.html"
  python3 -m http.server --bind "$a" 80 --directory "$DIR/www/$a" >/dev/null 2>&1 &
done
mount --bind "$DIR/hosts" /etc/hosts
# The file is made first: the background shell opens it only once it has forked, and a
# read before then would fail and end this script under set -e.
: > "$DIR/worker.err"
# WORKER_ARGS is split on spaces on purpose: each word is one more argument.
"$KAJA" sandbox serve --listen 127.0.0.1:0 --key-file "$DIR/key" --state "$DIR/state" \
  $WORKER_ARGS 2> "$DIR/worker.err" &
worker=$!
for i in $(seq 100); do
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$DIR/worker.err" || true)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "the worker did not start:" >&2; cat "$DIR/worker.err" >&2; exit 3; }
for a in 93.184.216.34 10.0.0.5 169.254.169.254; do
  for i in $(seq 50); do curl -s -o /dev/null "http://$a/" && break; sleep 0.1; done
done
token=$("$KAJA" sandbox token alice --key-file "$DIR/key")
while read -r name tool args; do
  body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$tool\",\"arguments\":$args,\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}"
  reply=$(curl -s -m 60 -X POST "http://127.0.0.1:$port/users/alice/abilities/$ABILITY/mcp" \
    -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -H 'Accept: application/json' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: tools/call' -H "Mcp-Name: $tool" -d "$body")
  echo "$name: $reply"
done < "$DIR/cases"
kill "$worker"
wait "$worker" || true
)";

/// Returns why the lab cannot run here (no bubblewrap, not root, no network namespaces),
/// or "" when it can.
inline std::string labUnavailable() {
  if (!findBwrap({})) return "bubblewrap is not installed";
  if (::geteuid() != 0) return "the lab's addresses and mounts need root";
  if (kaja::testing::runCommand({"/usr/bin/unshare", "-n", "/bin/true"}, {}).exitCode != 0) {
    return "network namespaces cannot be made here";
  }
  return {};
}

/// Runs the lab over `dir`, whose market/ holds the abilities and key the worker's key
/// (0600), and makes `calls` in order through the worker, started with `workerArgs` added
/// (words without spaces). Each page the lab serves reads "page-of-<address>".
inline LabResult runWorkerLab(const kaja::testing::TempDir& dir, const std::string& ability,
                              const std::vector<LabCall>& calls, int timeoutSeconds,
                              const std::vector<std::string>& workerArgs = {}) {
  std::string words;
  for (const auto& arg : workerArgs) words += (words.empty() ? "" : " ") + arg;
  // The worker runs as root here, and its servers as nobody, who must pass through `dir` to
  // their homes, the egress socket and the marketplace.
  ::chmod(dir.path().c_str(), 0711);
  dir.write("hosts",
            "127.0.0.1 localhost\n93.184.216.34 public.example\n10.0.0.5 private.example\n"
            "93.184.216.34 mixed.example\n10.0.0.5 mixed.example\n");
  std::string cases;
  for (const LabCall& call : calls) {
    cases += call.name + " " + call.tool + " " + call.arguments + "\n";
  }
  dir.write("cases", cases);
  const std::string lab = dir.write("lab.sh", kLab);
  kaja::testing::RunOptions run;
  run.timeoutSeconds = timeoutSeconds;
  const auto ran = kaja::testing::runCommandWith(
      {"/usr/bin/unshare", "-n", "-m", "/bin/bash", lab},
      {"DIR=" + dir.path(), "ABILITY=" + ability, "WORKER_ARGS=" + words,
       "KAJA=" + std::string(kaja::test::binDir()) + "/kaja", "HOME=" + dir.path() + "/home",
       "XDG_CONFIG_HOME=" + dir.path() + "/config", "XDG_DATA_HOME=" + dir.path() + "/data",
       "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
       "KAJA_SHIPPED_MARKETPLACE=" + dir.path() + "/market"},
      run);
  LabResult result;
  result.exitCode = ran.exitCode;
  result.out = ran.out;
  result.err = ran.err;
  // The origins and the worker were started in the background; none may outlive the lab.
  for (int i = 0; i < 50 && (result.leftovers = processesMentioning(dir.path())) > 0; ++i) {
    ::usleep(100 * 1000);
  }
  std::istringstream lines(ran.out);
  for (std::string line; std::getline(lines, line);) {
    const auto colon = line.find(": ");
    if (colon != std::string::npos) result.replies[line.substr(0, colon)] = line.substr(colon + 2);
  }
  return result;
}

}  // namespace kaja::sandbox::worker_lab
