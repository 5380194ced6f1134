// Drives kaja's HTTP front with the official TypeScript SDK client (1.x,
// StreamableHTTPClientTransport).
//
//   node sdk_http_client.mjs <path of kaja_front_echo>
//
// Starts `kaja_front_echo http`, connects, lists tools, calls "echo" with a progress callback,
// answers an elicitation the server asks while a request runs, ends the session with DELETE,
// and prints one JSON line with what it saw. Exits non-zero on any failure.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const sdk = (path) =>
  import(new URL(`../../npm/node_modules/@modelcontextprotocol/sdk/dist/esm/${path}`, import.meta.url));

const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { ElicitRequestSchema, ResultSchema } = await sdk('types.js');

const helper = process.argv[2];
const child = spawn(helper, ['http'], { stdio: ['pipe', 'pipe', 'inherit'] });
const port = await new Promise((resolve, reject) => {
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    const match = /^PORT (\d+)$/.exec(line);
    if (match) resolve(Number(match[1]));
  });
  child.on('exit', (code) => reject(new Error(`kaja_front_echo exited with ${code}`)));
});

const seen = { progress: [], elicitations: 0 };
const timer = setTimeout(() => {
  process.stderr.write('timed out\n');
  child.kill('SIGKILL');
  process.exit(3);
}, 20000);

try {
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
  const client = new Client({ name: 'sdk-check', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => {
    seen.elicitations += 1;
    return { action: 'accept', content: {} };
  });
  await client.connect(transport);
  seen.sessionId = transport.sessionId;
  seen.protocolVersion = transport.protocolVersion;
  const tools = await client.listTools();
  seen.tools = tools.tools.map((tool) => tool.name);
  const result = await client.callTool({ name: 'echo', arguments: { word: 'hello' } }, undefined, {
    onprogress: (progress) => seen.progress.push(progress),
  });
  seen.text = result.content[0].text;
  const elicited = await client.request({ method: 'test/elicit', params: {} }, ResultSchema);
  seen.elicited = elicited.action;
  await transport.terminateSession();
  seen.terminated = transport.sessionId === undefined;
  await client.close();
  process.stdout.write(`${JSON.stringify(seen)}\n`);
} catch (error) {
  process.stderr.write(`failed: ${error.stack ?? error}\n`);
  process.exitCode = 1;
} finally {
  clearTimeout(timer);
  child.stdin.end();
  child.kill('SIGTERM');
}
