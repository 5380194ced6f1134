// The TypeScript SDK side of client_bench: one SDK client (v1 from @modelcontextprotocol/sdk
// or v2 from @modelcontextprotocol/client) over stdio to server-everything, which it
// starts itself. It connects, lists tools, warms up, then times `--calls` echo calls with
// `--inflight` of them outstanding (Promise concurrency: that many async lanes share one
// counter) and prints one JSON line with the members client_bench's kaja worker prints.
// Peak RSS is this node process's VmHWM; the server is a separate process.
//
//   node sdk_client_bench.mjs --sdk 1|2 --npm DIR --server SCRIPT [--calls N]
//        [--inflight K] [--warmup W] [--message TEXT]
// DIR is tests/npm/node_modules/@modelcontextprotocol.

import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";

function parseArgs(argv) {
  const options = { sdk: "1", calls: 2000, inflight: 1, warmup: 200, message: "hello" };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, "");
    const value = argv[i + 1];
    options[key] = ["calls", "inflight", "warmup"].includes(key) ? Number(value) : value;
  }
  if (!options.npm || !options.server) throw new Error("--npm and --server are required");
  return options;
}

async function loadSdk(major, npm) {
  const load = (path) => import(pathToFileURL(`${npm}/${path}`).href);
  if (major === "2") {
    const { Client } = await load("client/dist/index.mjs");
    const { StdioClientTransport } = await load("client/dist/stdio.mjs");
    const version = JSON.parse(readFileSync(`${npm}/client/package.json`, "utf8")).version;
    return { Client, StdioClientTransport, label: `client-${version}` };
  }
  const { Client } = await load("sdk/dist/esm/client/index.js");
  const { StdioClientTransport } = await load("sdk/dist/esm/client/stdio.js");
  const version = JSON.parse(readFileSync(`${npm}/sdk/package.json`, "utf8")).version;
  return { Client, StdioClientTransport, label: `sdk-${version}` };
}

function peakRssKb() {
  const match = /VmHWM:\s*(\d+)/.exec(readFileSync("/proc/self/status", "utf8"));
  return match ? Number(match[1]) : -1;
}

// Returns process `pid`'s user+system CPU in microseconds from /proc (10 ms steps).
function processCpuUs(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
  } catch {
    return 0;
  }
}

function ownCpuUs() {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

function quantile(sorted, q) {
  if (sorted.length === 0) return 0;
  const rank = Math.min(Math.max(Math.ceil(q * sorted.length), 1), sorted.length);
  return sorted[rank - 1];
}

// Runs `count` echo calls with `inflight` lanes; returns per-call latencies (µs) and wall s.
async function timeCalls(client, count, inflight, message) {
  const latencies = new Float64Array(count);
  const expected = `Echo: ${message}`;
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const index = next++;
      const start = performance.now();
      const result = await client.callTool({ name: "echo", arguments: { message } });
      latencies[index] = (performance.now() - start) * 1000;
      if (result.isError || result.content?.[0]?.text !== expected) {
        throw new Error(`The echo tool answered ${JSON.stringify(result)}`);
      }
    }
  };
  const begin = performance.now();
  await Promise.all(Array.from({ length: Math.min(inflight, count) }, lane));
  return { latencies, wallSeconds: (performance.now() - begin) / 1000 };
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const startRssKb = peakRssKb();
  const { Client, StdioClientTransport, label } = await loadSdk(options.sdk, options.npm);
  const client = new Client({ name: "kaja-bench", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [options.server, "stdio"],
  });
  await client.connect(transport);
  await client.listTools();
  await timeCalls(client, options.warmup, options.inflight, options.message);
  const clientCpu = ownCpuUs();
  const serverCpu = processCpuUs(transport.pid);
  const { latencies, wallSeconds } = await timeCalls(
    client,
    options.calls,
    options.inflight,
    options.message,
  );
  const clientCpuUs = (ownCpuUs() - clientCpu) / options.calls;
  const serverCpuUs = (processCpuUs(transport.pid) - serverCpu) / options.calls;
  const sorted = Array.from(latencies).sort((a, b) => a - b);
  const stats = {
    client: label,
    server: "everything",
    calls: options.calls,
    inflight: options.inflight,
    p50_us: quantile(sorted, 0.5),
    p99_us: quantile(sorted, 0.99),
    calls_per_s: options.calls / wallSeconds,
    peak_rss_kb: peakRssKb(),
    start_rss_kb: startRssKb,
    client_cpu_us: clientCpuUs,
    server_cpu_us: serverCpuUs,
  };
  await client.close();
  process.stdout.write(`${JSON.stringify(stats)}\n`);
}

main().catch((error) => {
  process.stderr.write(`sdk_client_bench: ${error?.stack ?? error}\n`);
  process.exit(1);
});
