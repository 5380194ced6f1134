// A stdio MCP server (plain JSON-RPC lines, no SDK) that lists whatever tools a test gives it:
//
//   node scripted_tools_server.mjs TOOLS.json
//
// TOOLS.json holds a JSON array of tool objects. It is sent inside the tools/list result as
// its bytes are, never parsed and written again (a raw line break, which valid JSON holds
// only as whitespace, becomes a space), so a test can hand kaja any schema (nested 10,000
// deep, 100,000 properties, $ref loops, escape sequences) and compare what kaja prints with
// exactly what was sent. A tools/call is answered with the tool's name as text.

import { readFileSync } from 'node:fs';
import { onStdinMessages } from './stdio_lines.mjs';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node scripted_tools_server.mjs TOOLS.json\n');
  process.exit(2);
}
const tools = Buffer.from(
  readFileSync(file).map((byte) => (byte === 0x0a || byte === 0x0d ? 0x20 : byte)),
);

function send(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

function sendToolsList(id) {
  process.stdout.write(
    Buffer.concat([
      Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":`),
      tools,
      Buffer.from('}}\n'),
    ]),
  );
}

function handle(message) {
  if (message.id === undefined) return;
  const { id, method, params } = message;
  if (method === 'initialize') {
    send({
      jsonrpc: '2.0',
      id,
      result: {
        protocolVersion: params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'scripted-tools', version: '1.0.0' },
      },
    });
  } else if (method === 'tools/list') {
    sendToolsList(id);
  } else if (method === 'tools/call') {
    send({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: String(params.name) }] } });
  } else if (method === 'ping') {
    send({ jsonrpc: '2.0', id, result: {} });
  } else {
    send({ jsonrpc: '2.0', id, error: { code: -32601, message: 'unknown method' } });
  }
}

onStdinMessages(handle);
