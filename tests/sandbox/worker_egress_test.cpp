// The whole way out of a confined server, through the real worker: inside a network
// namespace this test makes (no packet leaves it), HTTP servers listen on a public address
// (93.184.216.34), a private one (10.0.0.5) and the metadata one (169.254.169.254); the
// worker runs a small MCP server (tests/servers/egress_probe_server.mjs) that fetches
// through $HTTP_PROXY or connects directly.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include "sandbox/confine.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kaja::sandbox {
namespace {

// Runs inside `unshare -n -m`: the addresses, the origins, the worker, then one call per
// line of $CASES ("name tool arguments"), printing "name: <reply>".
constexpr const char* kLab = R"(set -eu
ip link set lo up
for a in 93.184.216.34 10.0.0.5 169.254.169.254; do
  ip addr add "$a/32" dev lo
  mkdir -p "$DIR/www/$a" && echo "page-of-$a" > "$DIR/www/$a/index.html"
  python3 -m http.server --bind "$a" 80 --directory "$DIR/www/$a" >/dev/null 2>&1 &
done
mount --bind "$DIR/hosts" /etc/hosts
"$KAJA" sandbox serve --listen 127.0.0.1:0 --key-file "$DIR/key" --state "$DIR/state" \
  2> "$DIR/worker.err" &
worker=$!
for i in $(seq 100); do
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$DIR/worker.err")
  [ -n "$port" ] && break
  sleep 0.1
done
for a in 93.184.216.34 10.0.0.5 169.254.169.254; do
  for i in $(seq 50); do curl -s -o /dev/null "http://$a/" && break; sleep 0.1; done
done
token=$("$KAJA" sandbox token alice --key-file "$DIR/key")
while read -r name tool args; do
  body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$tool\",\"arguments\":$args,\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}"
  reply=$(curl -s -m 30 -X POST "http://127.0.0.1:$port/users/alice/abilities/probe/mcp" \
    -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -H 'Accept: application/json' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: tools/call' -H "Mcp-Name: $tool" -d "$body")
  echo "$name: $reply"
done < "$DIR/cases"
kill "$worker"
wait "$worker" || true
)";

TEST(SandboxWorkerEgressTest, ServersReachPublicAddressesOnlyAndOnlyThroughTheProxy) {
  if (!findBwrap({})) GTEST_SKIP() << "bubblewrap is not installed";
  if (::geteuid() != 0) GTEST_SKIP() << "the lab's addresses and mounts need root";
  if (kaja::testing::runCommand({"/usr/bin/unshare", "-n", "/bin/true"}, {}).exitCode != 0) {
    GTEST_SKIP() << "network namespaces cannot be made here";
  }
  kaja::testing::TempDir dir;
  // The server's script lives beside its manifest, where a confined server may read it.
  std::ifstream script(std::string(KAJA_SOURCE_DIR) + "/tests/servers/egress_probe_server.mjs");
  const std::string probe = dir.write("market/abilities/probe/server.mjs",
                                      std::string(std::istreambuf_iterator<char>(script), {}));
  dir.write("market/abilities/probe/mcp.toml",
            "command = \"node\"\nargs = [\"" + probe + "\"]\ntools = [\"fetch\", \"connect\"]\n");
  const std::string key = dir.write("key", std::string(32, 'e'));
  ::chmod(key.c_str(), 0600);
  dir.write("hosts",
            "127.0.0.1 localhost\n93.184.216.34 public.example\n10.0.0.5 private.example\n"
            "93.184.216.34 mixed.example\n10.0.0.5 mixed.example\n");
  dir.write("cases",
            "public fetch {\"url\":\"http://93.184.216.34/\"}\n"
            "public-name fetch {\"url\":\"http://public.example/\"}\n"
            "private fetch {\"url\":\"http://10.0.0.5/\"}\n"
            "metadata fetch {\"url\":\"http://169.254.169.254/\"}\n"
            "private-name fetch {\"url\":\"http://private.example/\"}\n"
            "mixed-name fetch {\"url\":\"http://mixed.example/\"}\n"
            "mapped fetch {\"url\":\"http://[::ffff:10.0.0.5]/\"}\n"
            "loopback fetch {\"url\":\"http://127.0.0.1:80/\"}\n"
            "raw-public connect {\"host\":\"93.184.216.34\",\"port\":80}\n"
            "raw-private connect {\"host\":\"10.0.0.5\",\"port\":80}\n");
  const std::string lab = dir.write("lab.sh", kLab);
  kaja::testing::RunOptions run;
  run.timeoutSeconds = 180;
  const auto result = kaja::testing::runCommandWith(
      {"/usr/bin/unshare", "-n", "-m", "/bin/bash", lab},
      {"DIR=" + dir.path(), "KAJA=" + std::string(KAJA_BIN_DIR) + "/kaja",
       "HOME=" + dir.path() + "/home", "XDG_CONFIG_HOME=" + dir.path() + "/config",
       "XDG_DATA_HOME=" + dir.path() + "/data", "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
       "KAJA_SHIPPED_MARKETPLACE=" + dir.path() + "/market"},
      run);
  ASSERT_EQ(result.exitCode, 0) << result.out << result.err;
  std::map<std::string, std::string> replies;
  std::istringstream lines(result.out);
  for (std::string line; std::getline(lines, line);) {
    const auto colon = line.find(": ");
    if (colon != std::string::npos) replies[line.substr(0, colon)] = line.substr(colon + 2);
  }
  ASSERT_EQ(replies.size(), 10U) << result.out << result.err;
  if (std::getenv("KAJA_SHOW")) std::fprintf(stderr, "%s", result.out.c_str());
  EXPECT_NE(replies["public"].find("200 page-of-93.184.216.34"), std::string::npos)
      << replies["public"];
  EXPECT_NE(replies["public-name"].find("200 page-of-93.184.216.34"), std::string::npos)
      << replies["public-name"];
  for (const char* refused :
       {"private", "metadata", "private-name", "mixed-name", "mapped", "loopback"}) {
    EXPECT_NE(replies[refused].find("403"), std::string::npos)
        << refused << ": " << replies[refused];
    EXPECT_EQ(replies[refused].find("page-of-"), std::string::npos)
        << refused << ": " << replies[refused];
  }
  // Without the proxy there is no way out at all, even to the public address.
  for (const char* raw : {"raw-public", "raw-private"}) {
    EXPECT_EQ(replies[raw].find("connected"), std::string::npos) << raw << ": " << replies[raw];
    EXPECT_NE(replies[raw].find("error"), std::string::npos) << raw << ": " << replies[raw];
  }
}

}  // namespace
}  // namespace kaja::sandbox
