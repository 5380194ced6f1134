// Drives kaja's HTTP front with the official TypeScript SDK 2.x client, in each of its
// version modes: 'auto' (server/discover, then 2026-07-28 stateless requests), pinned to
// 2026-07-28, and 'legacy' (initialize and a session).
//
//   node sdk2_http_client.mjs <path of kaja_front_echo>
//
// Prints one JSON line per mode with the negotiated version, the tools listed, the text of an
// "echo" call and how many progress notifications it saw. Exits non-zero on any failure.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const { Client, StreamableHTTPClientTransport } = await import(
  new URL('../../npm/node_modules/@modelcontextprotocol/client/dist/index.mjs', import.meta.url)
);

const child = spawn(process.argv[2], ['http'], { stdio: ['pipe', 'pipe', 'inherit'] });
const port = await new Promise((resolve, reject) => {
  createInterface({ input: child.stdout }).on('line', (line) => {
    const match = /^PORT (\d+)$/.exec(line);
    if (match) resolve(Number(match[1]));
  });
  child.on('exit', (code) => reject(new Error(`kaja_front_echo exited with ${code}`)));
});
const timer = setTimeout(() => {
  process.stderr.write('timed out\n');
  child.kill('SIGKILL');
  process.exit(3);
}, 20000);

try {
  for (const mode of ['auto', { pin: '2026-07-28' }, 'legacy']) {
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
    const client = new Client({ name: 'sdk2-check', version: '1.0.0' }, { versionNegotiation: { mode } });
    await client.connect(transport);
    const tools = await client.listTools();
    const progress = [];
    const result = await client.callTool(
      { name: 'echo', arguments: { word: 'hi' } },
      { onprogress: (update) => progress.push(update) },
    );
    const seen = {
      mode: typeof mode === 'string' ? mode : 'pin',
      version: client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion,
      tools: tools.tools.map((tool) => tool.name),
      text: result.content[0].text,
      progress: progress.length,
    };
    process.stdout.write(`${JSON.stringify(seen)}\n`);
    await client.close();
  }
} catch (error) {
  process.stderr.write(`failed: ${error.stack ?? error}\n`);
  process.exitCode = 1;
} finally {
  clearTimeout(timer);
  child.stdin.end();
  child.kill('SIGTERM');
}
